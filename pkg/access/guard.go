package access

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Guard returns st as the identity id may use it: every access is decided
// by the policy (rules A1, A2) and audited (rule A3) before it reaches st.
// A denied access returns a [*DeniedError] and does nothing. The helpers
// of state.State are built on the guarded core operations (state.WrapCore),
// so each is decided as the operations it makes: Teardown reads (get) and
// tears down (teardown), AddFinalizer and Modify read and update,
// TeardownAndDestroy reads, tears down, watches and destroys.
//
// An Update that moves a running resource to the tearing-down phase is a
// teardown; one that also changes anything else needs update as well.
// The guarded state reports kind heads and revisions when st does: a kind
// head or a kind's revision needs list or watch of the kind, the state's
// revision any role. It resumes kind watches when st does
// (state.KindWatchResumer), so a Runtime over it keeps no re-list memory
// of the kinds it does not cache.
//
// This is the door of in-process callers that want the rules (a plugin, a
// local admin socket); the daemon's own Runtime and controllers use the
// state itself.
func (p *Policy) Guard(st state.State, id Identity) state.State {
	return p.Subject(id).Guard(st)
}

// guarded is the State of a subject over a state: the helpers of
// state.WrapCore over guardCore.
type guarded struct {
	state.State
	core       *guardCore
	comparable bool // the inner state can be compared (Subject.Guard's cache)
}

func newGuarded(st state.State, s *Subject) *guarded {
	if st == nil {
		st = state.WrapCore(nil)
	}
	c := &guardCore{inner: st, s: s}
	return &guarded{State: state.WrapCore(c), core: c, comparable: reflect.TypeOf(st).Comparable()}
}

// KindHead implements state.KindHeadReporter (see guardCore.KindHead).
func (g *guarded) KindHead(ctx context.Context, kind resource.Kind) (state.Bookmark, error) {
	return g.core.KindHead(ctx, kind)
}

// Revision implements state.RevisionReporter (see guardCore.Revision).
func (g *guarded) Revision(ctx context.Context) (uint64, error) { return g.core.Revision(ctx) }

// KindRevision implements state.RevisionReporter.
func (g *guarded) KindRevision(ctx context.Context, kind resource.Kind) (last, at uint64, err error) {
	return g.core.KindRevision(ctx, kind)
}

// ResumesKindWatches implements state.KindWatchResumer: the guarded
// state's answer. A whole-kind watch the subject may open is the guarded
// state's own, resumed from a bookmark as that state resumes it (a watch
// the subject may not open is denied at the call, resumed or not).
func (g *guarded) ResumesKindWatches(kind resource.Kind) bool {
	return state.ResumesKindWatches(g.core.inner, kind)
}

// guardCore decides every core operation before handing it to inner.
type guardCore struct {
	inner state.State
	s     *Subject
}

// decide decides an access; a denial is audited and returned.
func (g *guardCore) decide(ctx context.Context, a *Access) (Decision, error) {
	d := g.s.decide(ctx, a)
	if !d.Allowed {
		err := newDenied(a, d)
		g.s.p.audit.denial(a, g.s, d, err)
		return d, err
	}
	return d, nil
}

// check decides an access; a denial is audited and returned, an allowed
// read is audited when sampled.
func (g *guardCore) check(ctx context.Context, verb Verb, ns, typ, id string) error {
	a := Access{Identity: &g.s.id, Verb: verb, Namespace: ns, Type: typ, ID: id}
	d, err := g.decide(ctx, &a)
	if err == nil && !verb.IsWrite() {
		g.s.p.audit.read(&a, g.s, d)
	}
	return err
}

// write decides a write, does it, and audits it with its outcome.
func (g *guardCore) write(ctx context.Context, verb Verb, md *resource.Metadata, do func() error) error {
	ns, typ, id := md.Identity()
	a := Access{Identity: &g.s.id, Verb: verb, Namespace: ns, Type: typ, ID: id}
	d, err := g.decide(ctx, &a)
	if err != nil {
		return err
	}
	err = do()
	g.s.p.audit.write(&a, g.s, d, md.Version(), err)
	return err
}

func (g *guardCore) Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, err
	}
	if err := g.check(ctx, Get, ptr.Namespace(), ptr.Type(), ptr.ID()); err != nil {
		return nil, err
	}
	return g.inner.Get(ctx, ptr, opts...)
}

func (g *guardCore) List(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error) {
	if err := resource.ValidateKind(kind); err != nil {
		return resource.List{}, err
	}
	if err := g.check(ctx, List, kind.Namespace(), kind.Type(), ""); err != nil {
		return resource.List{}, err
	}
	return g.inner.List(ctx, kind, opts...)
}

func (g *guardCore) Create(ctx context.Context, r resource.Resource, opts ...state.CreateOption) error {
	md, err := metadataOf(r)
	if err != nil {
		return err
	}
	return g.write(ctx, Create, md, func() error { return g.inner.Create(ctx, r, opts...) })
}

func (g *guardCore) Destroy(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) error {
	if err := resource.ValidatePointer(ptr); err != nil {
		return err
	}
	md := resource.NewMetadata(ptr.Namespace(), ptr.Type(), ptr.ID(), resource.VersionUndefined)
	return g.write(ctx, Destroy, &md, func() error { return g.inner.Destroy(ctx, ptr, opts...) })
}

func (g *guardCore) Watch(ctx context.Context, ptr resource.Pointer, ch chan<- state.Event, opts ...state.WatchOption) error {
	if err := resource.ValidatePointer(ptr); err != nil {
		return err
	}
	if err := g.check(ctx, Watch, ptr.Namespace(), ptr.Type(), ptr.ID()); err != nil {
		return err
	}
	return g.inner.Watch(ctx, ptr, ch, opts...)
}

func (g *guardCore) WatchKind(ctx context.Context, kind resource.Kind, ch chan<- state.Event, opts ...state.WatchKindOption) error {
	if err := resource.ValidateKind(kind); err != nil {
		return err
	}
	if err := g.check(ctx, Watch, kind.Namespace(), kind.Type(), ""); err != nil {
		return err
	}
	return g.inner.WatchKind(ctx, kind, ch, opts...)
}

func (g *guardCore) WatchKindAggregated(ctx context.Context, kind resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if err := resource.ValidateKind(kind); err != nil {
		return err
	}
	if err := g.check(ctx, Watch, kind.Namespace(), kind.Type(), ""); err != nil {
		return err
	}
	return g.inner.WatchKindAggregated(ctx, kind, ch, opts...)
}

// metadataOf returns a written resource's metadata, refusing a nil one
// (the state's own refusal, before any decision).
func metadataOf(r resource.Resource) (*resource.Metadata, error) {
	if usercode.IsNil(r) {
		return nil, state.NewInvalidError(nil, "access: nil resource")
	}
	md := r.Metadata()
	if md == nil {
		return nil, state.NewInvalidError(nil, "access: resource without metadata")
	}
	if err := resource.ValidatePointer(md); err != nil {
		return nil, err
	}
	return md, nil
}

// errUnsupported is the answer to a question the inner state cannot
// answer.
func errUnsupported(st state.State, what string) error {
	return fmt.Errorf("access: %T does not %s: %w", st, what, errors.ErrUnsupported)
}

func (g *guardCore) KindHead(ctx context.Context, kind resource.Kind) (state.Bookmark, error) {
	if err := g.checkKind(ctx, kind); err != nil {
		return nil, err
	}
	h, ok := g.inner.(state.KindHeadReporter)
	if !ok {
		return nil, errUnsupported(g.inner, "report kind heads")
	}
	return h.KindHead(ctx, kind)
}

func (g *guardCore) Revision(ctx context.Context) (uint64, error) {
	if err := g.s.CheckBound(); err != nil {
		return 0, err
	}
	r, ok := g.inner.(state.RevisionReporter)
	if !ok {
		return 0, errUnsupported(g.inner, "number its changes")
	}
	return r.Revision(ctx)
}

func (g *guardCore) KindRevision(ctx context.Context, kind resource.Kind) (last, at uint64, err error) {
	if err := g.checkKind(ctx, kind); err != nil {
		return 0, 0, err
	}
	r, ok := g.inner.(state.RevisionReporter)
	if !ok {
		return 0, 0, errUnsupported(g.inner, "number its changes")
	}
	return r.KindRevision(ctx, kind)
}

// checkKind allows a question about a kind to a subject that may list or
// watch it.
func (g *guardCore) checkKind(ctx context.Context, kind resource.Kind) error {
	if err := resource.ValidateKind(kind); err != nil {
		return err
	}
	if g.s.Decide(ctx, List, kind.Namespace(), kind.Type(), "").Allowed {
		return nil
	}
	return g.check(ctx, Watch, kind.Namespace(), kind.Type(), "")
}
