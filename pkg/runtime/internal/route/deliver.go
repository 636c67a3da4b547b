package route

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
)

// Subscription is one declared input of one controller, as the router
// sees it.
type Subscription = dependency.Subscription[*Subscriber]

// deliver delivers a batch of changes of one kind to every subscription of
// that kind. It never blocks: Controllers get a coalescing wake-up,
// QControllers a queue add, with each item's pending work noted in its
// queue entry. The contents of a kind's first bootstrap (bootstrap set) go
// to QControllers only: they fill the queues (rule Q1), while Controllers
// read the existing resources after their start event, which waits for
// the bootstrap. metas holds the events' metadata, read once by the
// watcher (a resource's Metadata method is user code, never called here).
// sc is reused storage owned by the caller. rev is the state's revision of
// the newest change: a subscriber's reads must reach it before it is woken
// or its items queued (see cache.Floor). at is the batch's routing time,
// shared by the telemetry of every subscriber.
func deliver(subs []Subscription, events []state.Event, metas []*resource.Metadata, sc *scratch, bootstrap bool, rev uint64, at *telemetry.Batch) {
	sc.resetPrevious(len(events))
	for i := range subs {
		s := &subs[i]
		sub := s.Handle
		if sub.Wake != nil {
			if !bootstrap {
				wake(s, events, metas, rev, at)
			}
			continue
		}
		sc.items, sc.from = sc.items[:0], sc.from[:0]
		mapped := s.Kind != controller.InputQPrimary
		for j := range events {
			md := metas[j]
			matched := Matches(s, events[j].Type, md)
			if mapped && sub.Last != nil {
				rememberLast(sub.Last, s.Kind, &events[j], md, matched, func() resource.Resource { return sc.previous(j, &events[j], md) })
			}
			if !matched || (!mapped && !bootstrap && processedAlready(sub, events[j].Type, md)) {
				continue
			}
			sc.items = append(sc.items, work.Item{Ptr: resource.PointerOf(md), Map: mapped})
			sc.from = append(sc.from, int32(j))
			sub.Telemetry.Queued(events[j].Type, md, at)
		}
		if len(sc.items) == 0 {
			continue
		}
		sub.Floor.Raise(rev)
		if s.Routed != nil {
			s.Routed.Add(uint64(len(sc.items)))
		}
		if sub.Telemetry == nil {
			sub.Queue.AddBatch(sc.items)
			continue
		}
		now := sub.Telemetry.Now(at)
		sub.Queue.AddBatchNoted(sc.items, func(i int, p *telemetry.Pending) {
			j := sc.from[i]
			p.Queued(events[j].Type, metas[j], now, at)
		})
	}
	clear(sc.prevs) // keeps no snapshot past the batch
}

// processedAlready reports whether the update t of the primary input md
// is one its QController already reconciled (see Subscriber.Processed):
// it is then not queued (rule Q1, extended). Only an update is: a
// creation or a destruction is always queued.
func processedAlready(sub *Subscriber, t state.EventType, md *resource.Metadata) bool {
	return sub.Processed != nil && t == state.Updated && sub.Processed(md)
}

// wake wakes the Controller of subscription s up when a change of the
// batch concerns it, after raising its read floor to rev and logging the
// IDs of every such change in its change log (when it keeps one): a pass
// that takes the log after the wake-up reads every change logged.
func wake(s *Subscription, events []state.Event, metas []*resource.Metadata, rev uint64, at *telemetry.Batch) {
	sub := s.Handle
	woken := false
	for j := range events {
		if !Matches(s, events[j].Type, metas[j]) {
			continue
		}
		if !woken {
			woken = true
			if s.Routed != nil {
				s.Routed.Add(1)
			}
			sub.Floor.Raise(rev)
			// Accounted first: the pass it starts takes it as its cause.
			sub.Telemetry.Woken(events[j].Type, metas[j], at)
			if sub.Changes == nil {
				break
			}
		}
		sub.Changes.Add(resource.KindOf(metas[j]), metas[j].ID())
	}
	if woken {
		sub.Wake.Send()
	}
}

// scratch is the routing's reused storage: the items of a subscription,
// and for each the index of the event that queues it; and, per event of
// the batch, its previous version (see previous), found once for every
// subscription.
type scratch struct {
	items []work.Item
	from  []int32
	prevs []prevOf
}

// prevOf is an event's previous version, once found.
type prevOf struct {
	res   resource.Resource
	found bool
}

// resetPrevious forgets the previous versions of the last batch, for one
// of n events.
func (sc *scratch) resetPrevious(n int) {
	clear(sc.prevs)
	if cap(sc.prevs) < n {
		sc.prevs = make([]prevOf, n)
	}
	sc.prevs = sc.prevs[:n]
}

// previous returns the previous version of event j (see previous), found
// once per batch.
func (sc *scratch) previous(j int, ev *state.Event, md *resource.Metadata) resource.Resource {
	p := &sc.prevs[j]
	if !p.found {
		p.res, p.found = previous(ev, md), true
	}
	return p.res
}

// release drops storage grown beyond scratchKeep (a large batch).
func (sc *scratch) release() {
	if cap(sc.items) > scratchKeep || cap(sc.from) > scratchKeep || cap(sc.prevs) > scratchKeep {
		*sc = scratch{}
	}
}

// rememberLast keeps what a mapped input's MapInput needs of a change
// (rule Q4): a destroyed input's last version, for the map item its
// destruction queues (InputQMapped) or for the one already waiting
// (InputQMappedDestroyReady: queued while the output was tearing down);
// the version of a destroy-ready output that queues an item, which is its
// last if it goes before MapInput runs. Any other change means the input
// exists: its map item reads it from the state. matched tells that the
// change queues an item.
//
// A change of InputQMapped that changed the input's metadata (rule Q4,
// extended) also keeps the version before it, which MapInput receives as
// the previous version.
func rememberLast(t *work.LastSeen, kind controller.InputKind, ev *state.Event, md *resource.Metadata, matched bool, prevOf func() resource.Resource) {
	switch {
	case ev.Type == state.Destroyed && matched:
		t.Queued(resource.PointerOf(md), ev.Resource, true, prevOf())
	case ev.Type == state.Destroyed:
		if t.Len() > 0 {
			t.Destroyed(resource.PointerOf(md), ev.Resource)
		}
	case matched && kind == controller.InputQMappedDestroyReady:
		t.Queued(resource.PointerOf(md), ev.Resource, false, nil)
	case matched && ev.Old != nil: // an update, or a change found by a re-list
		if prev := prevOf(); prev != nil {
			t.Changed(resource.PointerOf(md), prev)
		} else if t.Len() > 0 {
			t.Present(resource.PointerOf(md))
		}
	case t.Len() > 0:
		t.Present(resource.PointerOf(md))
	}
}

// previous returns the change's Old when its metadata differ from md's,
// the change's (controller.MetadataChanged); nil otherwise. Old's
// Metadata method is the state's code: a panic, a nil metadata or another
// identity mean no previous version.
func previous(ev *state.Event, md *resource.Metadata) (prev resource.Resource) {
	if ev.Old == nil || ev.Old == ev.Resource {
		return nil
	}
	defer func() {
		if recover() != nil {
			prev = nil
		}
	}()
	old := ev.Old.Metadata()
	if old == nil || old.ID() != md.ID() {
		return nil
	}
	old.Freeze() // a shared snapshot, as the event's resource (see metadataOf)
	if !controller.MetadataChanged(old, md) {
		return nil
	}
	return ev.Old
}

// Matches reports whether a change event of type t, of the resource whose
// metadata is md, concerns the subscription s: an input with an ID fires
// only for that ID (rule C2); destroy-ready inputs fire only for the
// subscriber's own outputs that are tearing down with no finalizers left
// (rules C9, Q4), and not for their destruction.
func Matches(s *Subscription, t state.EventType, md *resource.Metadata) bool {
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
