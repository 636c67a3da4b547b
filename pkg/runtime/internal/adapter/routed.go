package adapter

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// RoutedKind is how far the Runtime's router has routed the changes of one
// kind (see route.RoutedKind).
type RoutedKind interface {
	// Routed returns the revision the kind is routed up to.
	Routed() uint64
	// Await waits until the kind is routed up to rev, ctx is done, or the
	// kind's watch stopped (an error for the last two).
	Await(ctx context.Context, rev uint64) error
}

// routedWait bounds how long one read of a mapped input waits for routing
// to catch up with the state (a watch that is down, a router far behind):
// past it, the read returns what it read last.
const routedWait = 5 * time.Second

// mappedReads makes a QController's reads of its InputQMapped kinds that
// go to the state (not served by a cache) never run ahead of routing
// (rule Q4): a Reconcile that read a version of a mapped input that
// routing never sees — coalesced into a later change by a lagging watch,
// or found past by a re-list — would never be requeued when that version
// changes, since MapInput is only ever given versions that routing saw.
//
// A read is taken again until the kind had no change after the revision
// routing had reached when the read started (the state's
// [state.RevisionReporter.KindRevision] after the read tells): routing's
// view of every resource of the kind is then the version read, and the
// next change of each reaches MapInput with that version as the previous
// one. Between two tries it waits until routing has reached the kind's
// newest change, within routedWait for the whole read.
type mappedReads struct {
	kinds map[resource.KindKey]RoutedKind
	revs  state.RevisionReporter
	// off is set once the state said it does not number its changes.
	off atomic.Bool
}

// SetMappedRouting makes the reads of kinds (the controller's InputQMapped
// kinds) wait for routing (see mappedReads). It is called before the
// controller runs; over a state that does not number its changes it does
// nothing.
func (a *Adapter) SetMappedRouting(kinds map[resource.KindKey]RoutedKind) {
	revs, ok := a.st.(state.RevisionReporter)
	if len(kinds) == 0 || !ok {
		return
	}
	a.mapped = &mappedReads{kinds: kinds, revs: revs}
}

// routedOf returns the routing of kind k when its reads wait for routing,
// nil otherwise.
func (a *Adapter) routedOf(k resource.KindKey) RoutedKind {
	if a.mapped.off.Load() {
		return nil
	}
	return a.mapped.kinds[k]
}

// getRouted is the state's Get of ptr, of a mapped kind, taken again
// until it is not ahead of routing (see mappedReads).
func (a *Adapter) getRouted(ctx context.Context, rk RoutedKind, ptr resource.Pointer, opts []state.GetOption) (resource.Resource, error) {
	var w routedWaiter
	for {
		routed := rk.Routed()
		r, err := a.st.Get(ctx, ptr, opts...)
		if err != nil || !a.readAgain(ctx, ptr, rk, routed, &w) {
			return r, err
		}
	}
}

// listRouted is the state's List of the mapped kind, taken again until
// it is not ahead of routing (see mappedReads).
func (a *Adapter) listRouted(ctx context.Context, rk RoutedKind, kind resource.Kind, opts []state.ListOption) (resource.List, error) {
	var w routedWaiter
	for {
		routed := rk.Routed()
		l, err := a.st.List(ctx, kind, opts...)
		if err != nil || !a.readAgain(ctx, kind, rk, routed, &w) {
			return l, err
		}
	}
}

// readAgain reports whether a read of kind that started when routing had
// reached revision routed must be taken again: the kind changed after
// routed, and routing has now reached that change. False when the kind did
// not, when the state cannot tell, or when routing did not catch up in
// time (the read stands).
func (a *Adapter) readAgain(ctx context.Context, kind resource.Kind, rk RoutedKind, routed uint64, w *routedWaiter) bool {
	last, _, err := a.mapped.revs.KindRevision(ctx, kind)
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			a.mapped.off.Store(true)
		}
		return false
	}
	return last > routed && w.await(ctx, rk, last) == nil
}

// routedWaiter spends one read's routedWait across its tries.
type routedWaiter struct{ deadline time.Time }

// await waits until rk is routed up to rev, within the read's deadline.
func (w *routedWaiter) await(ctx context.Context, rk RoutedKind, rev uint64) error {
	if w.deadline.IsZero() {
		w.deadline = time.Now().Add(routedWait)
	}
	ctx, cancel := context.WithDeadline(ctx, w.deadline)
	defer cancel()
	return rk.Await(ctx, rev)
}
