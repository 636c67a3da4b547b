package runtime

import (
	"context"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/state"
)

// subscriber is a controller as the router sees it: where to deliver a
// change. Exactly one of wake and queue is set.
type subscriber struct {
	// wake is a Controller's coalescing wake-up: capacity 1, written with a
	// non-blocking send.
	wake chan struct{}
	// queue is a QController's work queue.
	queue *queue.Queue[qkey]
	// m are the controller's counters.
	m *controllerMetrics
	// name is the controller's name.
	name string
	// wakes counts the wake-ups sent (see wakeUp and activity.go).
	wakes atomic.Uint64
}

// wakeUp sends a Controller its coalescing wake-up. wakes counts the
// wake-ups in the channel or taken from it: it is incremented before the
// send and taken back when the channel is full, so that a wake-up is never
// in the channel without being counted.
func (s *subscriber) wakeUp() {
	if len(s.wake) != 0 {
		// A wake-up is pending: it covers this one (the controller reads
		// the state after taking it), as a failed send would.
		return
	}
	s.wakes.Add(1)
	select {
	case s.wake <- struct{}{}:
	default:
		s.wakes.Add(^uint64(0))
	}
}

// qkey is a QController work item: a primary pointer to reconcile, or
// (mapped) a pointer of a mapped input to pass through MapInput. It is a
// plain comparable struct so that queueing a change allocates nothing.
type qkey struct {
	ns     resource.Namespace
	typ    resource.Type
	id     resource.ID
	mapped bool
}

// pointer returns the resource pointer of the item.
func (k qkey) pointer() resource.Pointer { return resource.NewPointer(k.ns, k.typ, k.id) }

// String formats the item for logs.
func (k qkey) String() string {
	s := k.typ + "(" + k.ns + "/" + k.id + ")"
	if k.mapped {
		s = "map " + s
	}
	return s
}

// router owns the kind watchers: one per watched kind, shared by every
// controller that declares the kind as an input.
type router struct {
	rt *Runtime
	// kinds are the watchers by kind; protected by rt.mu.
	kinds map[dependency.Key]*kindWatcher
}

func newRouter(rt *Runtime) *router {
	return &router{rt: rt, kinds: map[dependency.Key]*kindWatcher{}}
}

// watcherLocked returns the watcher of k, creating it (not started) when
// missing. The caller holds rt.mu.
func (rr *router) watcherLocked(k dependency.Key) *kindWatcher {
	w := rr.kinds[k]
	if w == nil {
		w = newKindWatcher(rr.rt, k)
		rr.kinds[k] = w
	}
	return w
}

// ensureWatchLocked starts the watch of k unless it runs already, and
// reports whether it was already running. The caller holds rt.mu in
// phaseRunning; ctx is Run's context.
func (rr *router) ensureWatchLocked(ctx context.Context, k dependency.Key) (running bool) {
	w := rr.watcherLocked(k)
	if w.started {
		return true
	}
	w.started = true
	rr.rt.goLocked(func() { w.run(ctx) })
	return false
}

// bootstrappedLocked returns the channels closed when the watches of keys
// delivered their first bootstrap. The caller holds rt.mu.
func (rr *router) bootstrappedLocked(keys []dependency.Key) []chan struct{} {
	chans := make([]chan struct{}, 0, len(keys))
	for _, k := range keys {
		chans = append(chans, rr.watcherLocked(k).bootstrapped)
	}
	return chans
}

// waitAll waits until every channel is closed; false when ctx is done
// first.
func waitAll(ctx context.Context, chans []chan struct{}) bool {
	for _, ch := range chans {
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// routeBatch delivers a batch of changes of one kind to every subscription
// of that kind. It never blocks: Controllers get a non-blocking wake-up,
// QControllers a queue add. The contents of a kind's first bootstrap
// (bootstrap set) go to QControllers only: they fill the queues (rule Q1),
// while Controllers read the existing resources after their start event,
// which waits for the bootstrap. scratch is reused storage owned by the
// caller; the grown slice is returned for reuse. metas holds the events'
// metadata, read once by the watcher (a resource's Metadata method is user
// code, never called here).
func routeBatch(subs []dependency.Subscription[*subscriber], events []state.Event, metas []*resource.Metadata, scratch []qkey, bootstrap, metrics bool) []qkey {
	for i := range subs {
		s := &subs[i]
		sub := s.Handle
		if sub.wake != nil {
			if bootstrap {
				continue
			}
			for j := range events {
				if matches(s, events[j].Type, metas[j]) {
					sub.wakeUp()
					if metrics {
						sub.m.wakeUps.Add(1)
					}
					break
				}
			}
			continue
		}
		scratch = scratch[:0]
		mapped := s.Kind != controller.InputQPrimary
		for j := range events {
			md := metas[j]
			if !matches(s, events[j].Type, md) {
				continue
			}
			ns, typ, id := md.Identity()
			scratch = append(scratch, qkey{ns: ns, typ: typ, id: id, mapped: mapped})
		}
		switch len(scratch) {
		case 0:
		case 1:
			sub.queue.Add(scratch[0])
		default:
			sub.queue.AddBatch(scratch)
		}
		if metrics && len(scratch) > 0 {
			sub.m.wakeUps.Add(uint64(len(scratch)))
		}
	}
	return scratch
}

// matches reports whether a change event of type t, of the resource whose
// metadata is md, concerns a subscription: an input with an ID fires only
// for that ID (rule C2); destroy-ready inputs fire only for the
// subscriber's own outputs that are tearing down with no finalizers left
// (rules C9, Q4).
func matches(s *dependency.Subscription[*subscriber], t state.EventType, md *resource.Metadata) bool {
	if s.HasID {
		if _, _, id := md.Identity(); id != s.ID {
			return false
		}
	}
	switch s.Kind {
	case controller.InputDestroyReady, controller.InputQMappedDestroyReady:
		return t != state.Destroyed &&
			md.Owner() == s.Name &&
			md.Phase() == resource.PhaseTearingDown &&
			md.Finalizers().Empty()
	}
	return true
}

// kindStats are the per-kind counters.
type kindStats struct {
	eventsRouted atomic.Uint64
	relists      atomic.Uint64
}
