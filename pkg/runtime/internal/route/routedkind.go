package route

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
)

// RoutedKind tells how far the watch of one kind has routed the kind's
// changes, for the reads of a QController's mapped inputs (rule Q4: a
// version that a Reconcile read must be one that routing sees, or
// MapInput never maps it).
type RoutedKind struct{ w *kindWatcher }

// RoutedKind returns the routing progress of kind k; the kind's watcher is
// made (not started) when missing, as Subscribe makes it.
func (r *Router) RoutedKind(k resource.KindKey) RoutedKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	return RoutedKind{w: r.watcherLocked(k)}
}

// Routed returns the revision of the state the kind's watch has routed
// the kind up to: every change of the kind with a revision up to it was
// delivered to the kind's subscriptions (or, under a simulator, handed
// over to it change by change, to be delivered in order), and what
// routing last saw of each resource is its version at that revision. It
// is 0 until the first bootstrap was routed, and does not move while the
// watch is down.
func (k RoutedKind) Routed() uint64 { return k.w.barriers.routed.Load() }

// Await waits until the kind's watch has routed revision rev: nil then;
// ctx's error when ctx is done first, ErrStopped when the watch stopped
// first.
func (k RoutedKind) Await(ctx context.Context, rev uint64) error {
	b := &k.w.barriers
	if b.routed.Load() >= rev {
		return nil
	}
	done := b.await(rev)
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		b.forget(done)
		return ctx.Err()
	case <-k.w.relists.stopped:
		b.forget(done)
		return ErrStopped
	}
}
