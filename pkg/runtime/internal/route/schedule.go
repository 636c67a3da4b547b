package route

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/state"
)

// routeBatch is a kind watch seen as the sched.Batch of the batches it
// routes, and cacheBatch as the sched.CacheBatch of the batch it is taking
// into its cache (out, outMetas, cachingWas and caching): the scheduler is
// offered the watcher itself, so that a routed batch allocates nothing.
type (
	routeBatch kindWatcher
	cacheBatch kindWatcher
)

// HandOver hands the batch over change by change (see hold).
func (b *routeBatch) HandOver(events []state.Event, metas []*resource.Metadata, bootstrap bool, take func(sched.Delivery)) {
	(*kindWatcher)(b).hold(events, metas, bootstrap, take)
}

// HandOver hands the batch over (see holdCache).
func (b *cacheBatch) HandOver(take func(sched.CacheChange)) {
	w := (*kindWatcher)(b)
	w.holdCache(w.out, w.outMetas, w.cachingWas, w.caching, take)
}

// hold hands the changes of a batch over to take, one Delivery
// per change and matching subscription, in the order deliver would have
// delivered them. The Delivery's Release delivers that change to that
// subscription alone, as deliver does, raising the subscriber's floor to
// the change's own revision. A change a mapped subscription remembers
// without queueing anything (rule Q4's last versions) is handed over as a
// Silent Delivery of the same stream.
func (w *kindWatcher) hold(events []state.Event, metas []*resource.Metadata, bootstrap bool, take func(sched.Delivery)) {
	subs := w.subs(w.key)
	for i := range subs {
		s := subs[i]
		queue := s.Handle.Wake == nil
		if !queue && bootstrap {
			continue // as deliver: the first bootstrap fills queues only
		}
		remembers := queue && s.Kind != controller.InputQPrimary && s.Handle.Last != nil
		stream := deliveryStream{sub: s.Handle, kind: s.Kind, key: w.key, id: s.ID, hasID: s.HasID}
		for j := range events {
			ev, md := events[j], metas[j]
			matched := Matches(&s, ev.Type, md)
			if !matched && !remembers {
				continue
			}
			rev := ev.Revision
			if rev == 0 {
				rev = w.rev
			}
			take(sched.Delivery{
				Controller: s.Name, Input: s.Kind, QController: queue, Bootstrap: bootstrap,
				Type: ev.Type, Resource: md, Revision: rev, Stream: stream, Silent: !matched,
				Release: func() {
					var at telemetry.Batch
					deliver([]Subscription{s}, []state.Event{ev}, []*resource.Metadata{md}, &scratch{}, bootstrap, rev, &at)
				},
			})
		}
	}
}

// deliveryStream identifies one subscription's changes of one kind: the
// router delivers them in order, and so must a scheduler.
type deliveryStream struct {
	sub   *Subscriber
	kind  controller.InputKind
	key   resource.KindKey
	id    resource.ID
	hasID bool
}

// holdCache hands a routed batch of a cached kind over to take instead
// of applying it: in the live phase, each change on its own at its
// own revision (a prefix of a kind's changes is the kind at the revision
// of its last change); otherwise (a re-list's diff, the end of a
// bootstrap) the batch as it is, not Live.
func (w *kindWatcher) holdCache(events []state.Event, metas []*resource.Metadata, was, now phase, take func(sched.CacheChange)) {
	current := now == live
	if was != live || !current {
		evs, mds, rev := append([]state.Event(nil), events...), append([]*resource.Metadata(nil), metas...), w.rev
		take(sched.CacheChange{Kind: w.key, Revision: rev, Apply: func() { w.mem.ApplyBatch(evs, mds, rev, current) }})
		return
	}
	for i := range events {
		ev, md := events[i], metas[i]
		rev := ev.Revision
		if rev == 0 {
			rev = w.rev
		}
		take(sched.CacheChange{Kind: w.key, Revision: rev, Live: true, Apply: func() {
			w.mem.ApplyBatch([]state.Event{ev}, []*resource.Metadata{md}, rev, true)
		}})
	}
}
