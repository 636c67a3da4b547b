package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// changeLog is a state.CoreState that logs one line per committed change
// to the demo's kinds, in the order the changes were committed.
//
// Why not a watch: each kind's watch delivers on its own goroutine, so
// lines from watches of different kinds interleave in whatever order those
// goroutines ran, and a teardown would read as if a LinkStatus had been
// released before its addresses were gone. Serializing the writes here
// gives the true order (writes to the in-memory state never block, so the
// cost is small).
type changeLog struct {
	state.CoreState // the state being logged
	logger          *zap.Logger
	// mu serializes the writes to logged kinds and their log lines.
	mu sync.Mutex
}

// newChangeLog returns a state that writes to inner and logs every change
// of a demo kind to logger.
func newChangeLog(inner state.CoreState, logger *zap.Logger) state.State {
	return state.WrapCore(&changeLog{CoreState: inner, logger: logger})
}

// UnwrapCore implements state.CoreUnwrapper: every write is committed to
// inner as given (the log only serializes and logs them), so that the
// flight recorder reads the kinds' commits from inner instead of
// watching them.
func (c *changeLog) UnwrapCore() state.CoreState { return c.CoreState }

// KindHead implements state.KindHeadReporter by asking the inner state, so
// that the Runtime's quiescence check stays exact through the log.
func (c *changeLog) KindHead(ctx context.Context, k resource.Kind) (state.Bookmark, error) {
	if h, ok := c.CoreState.(state.KindHeadReporter); ok {
		return h.KindHead(ctx, k)
	}
	return nil, fmt.Errorf("change log: %T does not report kind heads: %w", c.CoreState, errors.ErrUnsupported)
}

// Revision implements state.RevisionReporter by asking the inner state:
// the log serializes writes and changes no revision, so the Runtime's
// consistent reads and the flight recorder's cut stay exact through it.
func (c *changeLog) Revision(ctx context.Context) (uint64, error) {
	if r, ok := c.CoreState.(state.RevisionReporter); ok {
		return r.Revision(ctx)
	}
	return 0, fmt.Errorf("change log: %T does not number its changes: %w", c.CoreState, errors.ErrUnsupported)
}

// KindRevision implements state.RevisionReporter by asking the inner
// state.
func (c *changeLog) KindRevision(ctx context.Context, k resource.Kind) (last, at uint64, err error) {
	if r, ok := c.CoreState.(state.RevisionReporter); ok {
		return r.KindRevision(ctx, k)
	}
	return 0, 0, fmt.Errorf("change log: %T does not number its changes: %w", c.CoreState, errors.ErrUnsupported)
}

// ValidateType implements state.TypeValidator by asking the inner state,
// so that the Runtime still learns which types a persistent state refuses.
func (c *changeLog) ValidateType(k resource.Kind) error {
	return state.ValidateType(c.CoreState, k)
}

func logged(k resource.Kind) bool {
	return k != nil && k.Namespace() == netres.NamespaceOf(k.Type()) && netres.DisplayName(k.Type()) != k.Type()
}

// Create implements state.CoreState.
func (c *changeLog) Create(ctx context.Context, r resource.Resource, opts ...state.CreateOption) error {
	if r == nil || !logged(r.Metadata()) {
		return c.CoreState.Create(ctx, r, opts...)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.CoreState.Create(ctx, r, opts...); err != nil {
		return err
	}
	if stored, err := c.CoreState.Get(ctx, r.Metadata()); err == nil {
		c.logger.Info(describeChange(state.Created, nil, stored))
	}
	return nil
}

// Update implements state.CoreState.
func (c *changeLog) Update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	if r == nil || !logged(r.Metadata()) {
		return c.CoreState.Update(ctx, r, opts...)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old, _ := c.CoreState.Get(ctx, r.Metadata())
	if err := c.CoreState.Update(ctx, r, opts...); err != nil {
		return err
	}
	if stored, err := c.CoreState.Get(ctx, r.Metadata()); err == nil && old != nil {
		c.logger.Info(describeChange(state.Updated, old, stored))
	}
	return nil
}

// Destroy implements state.CoreState.
func (c *changeLog) Destroy(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) error {
	_, err := c.DestroyVersion(ctx, ptr, opts...)
	return err
}

// DestroyVersion is Destroy that also returns the version it destroyed
// when the inner state tells it (undefined otherwise), so that a state
// built on the log (state.WrapCore) reports its destroys' versions as the
// inner state's does (state.CommitReporter): the flight recorder then
// pairs each destroy with the pass that made it.
func (c *changeLog) DestroyVersion(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) (resource.Version, error) {
	if ptr == nil || !logged(ptr) {
		return c.destroy(ctx, ptr, opts)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old, _ := c.CoreState.Get(ctx, ptr)
	v, err := c.destroy(ctx, ptr, opts)
	if err != nil {
		return v, err
	}
	if old != nil {
		c.logger.Info(describeChange(state.Destroyed, old, old))
	}
	return v, nil
}

// destroy destroys ptr in the inner state, with the version destroyed when
// the inner state tells it.
func (c *changeLog) destroy(ctx context.Context, ptr resource.Pointer, opts []state.DestroyOption) (resource.Version, error) {
	if d, ok := c.CoreState.(state.CommitReporter); ok {
		return d.DestroyCommitted(ctx, ptr, opts...)
	}
	if d, ok := c.CoreState.(interface {
		DestroyVersion(context.Context, resource.Pointer, ...state.DestroyOption) (resource.Version, error)
	}); ok {
		return d.DestroyVersion(ctx, ptr, opts...)
	}
	return resource.VersionUndefined, c.CoreState.Destroy(ctx, ptr, opts...)
}

// describeChange formats a change as one line, e.g.
//
//	created    AddressSpec(network/eth0/10.0.0.2-24) v1: 10.0.0.2/24 dev eth0
//	updated    LinkStatus(network/eth0) v3: down index=2 mtu=1500
//	updated    LinkSpec(config/eth1) v4: tearing down
//	updated    LinkStatus(network/eth1) v5: finalizers=[]
//	destroyed  RouteSpec(network/eth1/10.200.0.0-16)
//
// r is the resource after the change (for Destroyed, the last state) and
// old the one before (for Updated).
func describeChange(typ state.EventType, old, r resource.Resource) string {
	md := r.Metadata()
	name := netres.Describe(md)
	switch typ {
	case state.Created:
		return fmt.Sprintf("%-10s %s v%s: %s", "created", name, md.Version(), specString(r))
	case state.Destroyed:
		return fmt.Sprintf("%-10s %s", "destroyed", name)
	}
	var parts []string
	if old != nil {
		omd := old.Metadata()
		if omd.Phase() != md.Phase() {
			parts = append(parts, phaseString(md.Phase()))
		}
		if !slices.Equal(*omd.Finalizers(), *md.Finalizers()) {
			parts = append(parts, "finalizers=["+strings.Join(*md.Finalizers(), " ")+"]")
		}
		if !resource.SpecEqual(old.Spec(), r.Spec()) {
			parts = append(parts, specString(r))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, specString(r))
	}
	return fmt.Sprintf("%-10s %s v%s: %s", "updated", name, md.Version(), strings.Join(parts, ", "))
}

func phaseString(p resource.Phase) string {
	if p == resource.PhaseTearingDown {
		return "tearing down"
	}
	return p.String()
}

// specString formats a spec for a log line: its redacted form when it
// holds secrets (resource.SpecRedacter), its String method when it has
// one.
func specString(r resource.Resource) string {
	spec := resource.PrintableSpec(r.Spec())
	if s, ok := spec.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%+v", spec)
}
