package inmem

import (
	"context"
	"slices"

	"github.com/resgraph/resgraph/pkg/internal/batchpool"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// feed is the delivering end that both kinds of watch share (a
// [kindWatcher] of a whole kind, an [idWatcher] of one resource): the
// caller's channel and the watch's queries, and the delivery, in order, of
// the changes the watcher's goroutine got, as events. Its fields belong
// to the watcher's goroutine, except wake.
type feed struct {
	ks    *kindStore
	ctx   context.Context
	ch    chan<- state.Event    // set unless aggregated
	aggCh chan<- []state.Event  // set for WatchKindAggregated
	lq    resource.LabelQueries // their union (rule S15)
	iq    resource.IDQuery
	wake  chan struct{} // capacity 1: signaled to end a park

	filtered bool // lq or iq selects

	init        []record            // changes to replay first (tail, bookmark)
	snap        []resource.Resource // bootstrap contents or current state
	snapSeq     uint64              // bookmark of the Bootstrapped or S8 event
	snapRev     uint64              // revision snap was read at
	coal        []coalesced         // coalesced changes being delivered
	sortScratch []int32             // see sortCoalesced
	agg         []state.Event       // aggregated batch being built
	pool        *batchpool.Pool     // where agg comes from (see batchpool)
	bmAt        int                 // 1 + index in agg of the event to bookmark at flush; 0: none
	bmSeq       uint64              // the seq of that event
	bm          bookmarkAlloc
}

// signal ends the park of the watcher's goroutine. It never blocks; a
// watcher is signaled at most once per park.
func (w *feed) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// match reports whether the watcher's queries select r.
func (w *feed) match(r resource.Resource) bool {
	return !w.filtered || backend.Matches(r, w.lq, w.iq)
}

// emit delivers one event carrying the shared snapshots res and old (rule
// S7: every watcher of a change receives the same objects), with the
// bookmark of seq when withBookmark (on a watch bound to a pool, the last
// such event of a batch only: see batchpool); false when ctx is done.
func (w *feed) emit(t state.EventType, res, old resource.Resource, seq, rev uint64, withBookmark bool) bool {
	ev := state.Event{Type: t, Resource: res, Old: old, Revision: rev}
	switch {
	case withBookmark && w.pool != nil:
		// The router's watch: only the last bookmark of a batch is read
		// (see batchpool); flush makes it.
		w.bmAt, w.bmSeq = len(w.agg)+1, seq
	case withBookmark:
		ev.Bookmark = w.bm.make(w.ks, seq)
	}
	if w.aggCh != nil {
		w.agg = append(w.agg, ev)
		return true
	}
	return backend.Send(w.ctx, w.ch, ev)
}

// reserve makes room for n more events in the aggregated batch being
// built, so that a batch is allocated once at about its size instead of
// by doublings. A new batch is one the receiver handed back when the
// watch's caller bound a pool to its channel (the Runtime's router, see
// batchpool); otherwise the receiver owns each batch and none is reused.
// Each change gives at most one event, or two for a coalesced destroy and
// create; a batch grown past the estimate still grows by append.
func (w *feed) reserve(n int) {
	if w.aggCh != nil {
		if w.agg == nil {
			w.agg = w.pool.Get()
		}
		w.agg = slices.Grow(w.agg, n)
	}
}

// flush sends the aggregated batch, if any; false when ctx is done.
func (w *feed) flush() bool {
	if w.aggCh == nil || len(w.agg) == 0 {
		return true
	}
	if w.bmAt > 0 {
		w.agg[w.bmAt-1].Bookmark = w.bm.make(w.ks, w.bmSeq)
		w.bmAt = 0
	}
	batch := w.agg
	w.agg = nil
	return backend.Send(w.ctx, w.aggCh, batch)
}

// change delivers the change old → new (nil: absent) as this watcher sees
// it through its queries: absent → present is Created, present → present
// is Updated, present → absent is Destroyed (carrying the state it saw),
// absent → absent is nothing (rules S10, S12).
func (w *feed) change(old, new resource.Resource, seq, rev uint64) bool {
	return w.changeLast(old, new, nil, seq, rev)
}

// changeLast is change for a coalesced change, in which last (when not
// nil) is the state the life of old ended in (its last stored state before
// it was destroyed), which may be newer than old: a Destroyed event
// carries it as its Resource when the watcher's queries match it, Old
// being the state the watcher saw (a Runtime's mapped inputs need the last
// stored state of a destroyed resource).
func (w *feed) changeLast(old, new, last resource.Resource, seq, rev uint64) bool {
	sawOld := old != nil && w.match(old)
	seesNew := new != nil && w.match(new)
	switch {
	case seesNew && sawOld:
		return w.emit(state.Updated, new, old, seq, rev, true)
	case seesNew:
		return w.emit(state.Created, new, nil, seq, rev, true)
	case sawOld:
		res := old
		if new == nil && last != nil && w.match(last) {
			res = last
		}
		return w.emit(state.Destroyed, res, old, seq, rev, true)
	}
	return true
}

// deliverRecords delivers changes in order and releases their
// references.
func (w *feed) deliverRecords(recs []record) bool {
	w.reserve(len(recs))
	for i := range recs {
		if !w.change(recs[i].old, recs[i].new, recs[i].seq, recs[i].rev) {
			return false
		}
	}
	clear(recs)
	return true
}

// deliverCoalesced delivers coalesced changes in the order of their newest
// change. A resource destroyed and created again in the span is reported
// as what it was: Destroyed (at its destroy) and later Created, never as an
// update across two lives of the resource.
func (w *feed) deliverCoalesced(cs []coalesced) bool {
	for i, n := 0, len(cs); i < n; i++ {
		if e := cs[i]; e.gone != 0 && e.old != nil && e.new != nil {
			cs[i].new, cs[i].seq, cs[i].rev = nil, e.gone, e.goneRev
			cs = append(cs, coalesced{spillEntry: spillEntry{new: e.new, seq: e.seq, rev: e.rev}, id: e.id})
		}
	}
	w.sortScratch = sortCoalesced(cs, w.sortScratch)
	w.reserve(len(cs))
	for i := range cs {
		if !w.changeLast(cs[i].old, cs[i].new, cs[i].last, cs[i].seq, cs[i].rev) {
			return false
		}
	}
	clear(cs)
	w.coal = cs[:0]
	return true
}

// sendReplay delivers the replayed changes (S11) after what the watch
// started with, and flushes.
func (w *feed) sendReplay() bool {
	if !w.deliverRecords(w.init) {
		return false
	}
	w.snap, w.init = nil, nil
	return w.flush()
}
