package inmem

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// readBatch is the most records a kind watcher claims from the ring at
// once; readBatchBytes bounds the estimated memory of the versions they
// replaced.
const (
	readBatch      = 256
	readBatchBytes = 512 << 10
)

// watcher is one watch: a goroutine that delivers the changes of a kind
// (kind watcher) or of one resource (single-resource watcher, id != "") to
// the caller's channel.
//
// A kind watcher reads the kind's history ring from its position, or
// drains the spill when it fell behind. A single-resource watcher gets the
// changes of its resource pushed into its own queue by the writers.
// Neither holds the kind's lock while sending.
type watcher struct {
	ks    *kindStore
	ctx   context.Context
	ch    chan<- state.Event   // set unless aggregated
	aggCh chan<- []state.Event // set for WatchKindAggregated
	id    resource.ID          // single-resource watch when not empty
	lq    resource.LabelQuery
	iq    resource.IDQuery
	wake  chan struct{} // capacity 1: signaled to end a park

	filtered bool // lq or iq has a term

	// pos is the seq of the next record a kind watcher reads from the
	// ring, or spilled. The watcher advances it with compare-and-swap as
	// it claims records; writers (holding ks.mu) swap it to spilled, and
	// the watcher sets it back when it drains the spill (holding ks.mu).
	pos atomic.Uint64
	// parked is set while a single-resource watcher's goroutine waits
	// for wake (kind watchers park in a wakeGroup). Guarded by ks.mu.
	parked bool
	// group is the wake group a kind watcher parked in last. Written
	// under ks.mu; read by the watcher's goroutine when it wakes.
	group atomic.Pointer[wakeGroup]
	// gen is the spill generation a lagging kind watcher joined (pos is
	// then spilled); nil while it reads the ring. Guarded by ks.mu.
	gen *spillGen
	// queue holds a single-resource watcher's undelivered changes, oldest
	// first; dirty (when hasDirty) coalesces the changes that came before
	// them once the queue overflowed. Guarded by ks.mu.
	queue    []record
	dirty    spillEntry
	hasDirty bool

	// The fields below belong to the watcher's goroutine.

	init        []*record                  // changes to replay first (tail, bookmark)
	snap        []resource.Resource        // bootstrap contents or current state
	snapSeq     uint64                     // bookmark of the Bootstrapped or S8 event
	snapRev     uint64                     // revision snap was read at
	bootstrap   bool                       // send Bootstrapped after snap
	current     bool                       // single-resource watch: send S8's event
	spareQ      []record                   // recycled queue
	batch       []*record                  // records claimed from the ring
	coal        []coalesced                // changes taken from the spill
	local       map[resource.ID]spillEntry // catch-up fold (see catchUp)
	sortScratch []int32                    // see sortCoalesced
	agg         []state.Event              // aggregated batch being built
	bm          bookmarkAlloc
}

// signal ends the park of the watcher's goroutine. It never blocks; a
// watcher is signaled at most once per park.
func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// match reports whether the watcher's queries select r.
func (w *watcher) match(r resource.Resource) bool {
	return !w.filtered || matches(r, w.lq, w.iq)
}

// emit delivers one event carrying the shared snapshots res and old (rule
// S7: every watcher of a change receives the same objects); false when ctx
// is done.
func (w *watcher) emit(t state.EventType, res, old resource.Resource, seq, rev uint64, withBookmark bool) bool {
	ev := state.Event{Type: t, Resource: res, Old: old, Revision: rev}
	if withBookmark {
		ev.Bookmark = w.bm.make(w.ks, seq)
	}
	if w.aggCh != nil {
		w.agg = append(w.agg, ev)
		return true
	}
	// A send that does not block locks only the watcher's channel; the
	// select with ctx.Done would also lock the context's channel, which
	// every watch of that context shares.
	select {
	case w.ch <- ev:
		return true
	default:
	}
	select {
	case w.ch <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// reserve makes room for n more events in the aggregated batch being
// built, so that a batch is allocated once at about its size instead of
// by doublings (the receiver owns each batch: it cannot be reused). Each
// change gives at most one event, or two for a coalesced destroy and
// create; a batch grown past the estimate still grows by append.
func (w *watcher) reserve(n int) {
	if w.aggCh != nil {
		w.agg = slices.Grow(w.agg, n)
	}
}

// flush sends the aggregated batch, if any; false when ctx is done.
func (w *watcher) flush() bool {
	if w.aggCh == nil || len(w.agg) == 0 {
		return true
	}
	batch := w.agg
	w.agg = nil
	select {
	case w.aggCh <- batch:
		return true
	default:
	}
	select {
	case w.aggCh <- batch:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// change delivers the change old → new (nil: absent) as this watcher sees
// it through its queries: absent → present is Created, present → present
// is Updated, present → absent is Destroyed (carrying the state it saw),
// absent → absent is nothing (rules S10, S12).
func (w *watcher) change(old, new resource.Resource, seq, rev uint64) bool {
	sawOld := old != nil && w.match(old)
	seesNew := new != nil && w.match(new)
	switch {
	case seesNew && sawOld:
		return w.emit(state.Updated, new, old, seq, rev, true)
	case seesNew:
		return w.emit(state.Created, new, nil, seq, rev, true)
	case sawOld:
		return w.emit(state.Destroyed, old, old, seq, rev, true)
	}
	return true
}

// handOffLocked delivers rec, the kind's newest change, to a parked kind
// watcher from the writer, and reports whether it did: when rec is the
// change the watcher reads next, the watcher has no queries and is not
// aggregated, and its channel takes the event without blocking. Its
// position then moves past rec, as if its goroutine had delivered it.
// A parked watcher's goroutine has delivered everything it claimed and
// sends nothing until it is woken, so the events stay in order; the
// writer never waits (the send does not block). The caller holds ks.mu.
func (w *watcher) handOffLocked(rec *record) bool {
	if w.filtered || w.aggCh != nil || w.pos.Load() != rec.seq {
		return false
	}
	if c := cap(w.ch); c > 0 && len(w.ch) == c {
		return false
	}
	ev := state.Event{Type: state.Updated, Resource: rec.new, Old: rec.old, Revision: rec.rev}
	switch {
	case rec.old == nil:
		ev.Type, ev.Old = state.Created, nil
	case rec.new == nil:
		ev.Type, ev.Resource = state.Destroyed, rec.old
	}
	ev.Bookmark = w.bm.make(w.ks, rec.seq)
	select {
	case w.ch <- ev:
	default:
		return false // the user's channel is shared or unbuffered
	}
	w.pos.Store(rec.seq + 1)
	return true
}

// deliverRecords delivers changes in order and releases their references.
func (w *watcher) deliverRecords(recs []*record) bool {
	w.reserve(len(recs))
	for _, r := range recs {
		if !w.change(r.old, r.new, r.seq, r.rev) {
			return false
		}
	}
	clear(recs)
	return true
}

// deliverQueued delivers queued changes in order and releases their
// references.
func (w *watcher) deliverQueued(recs []record) bool {
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
func (w *watcher) deliverCoalesced(cs []coalesced) bool {
	for i, n := 0, len(cs); i < n; i++ {
		if e := cs[i]; e.gone != 0 && e.old != nil && e.new != nil {
			cs[i].new, cs[i].seq, cs[i].rev = nil, e.gone, e.goneRev
			cs = append(cs, coalesced{spillEntry: spillEntry{new: e.new, seq: e.seq, rev: e.rev}, id: e.id})
		}
	}
	w.sortScratch = sortCoalesced(cs, w.sortScratch)
	w.reserve(len(cs))
	for i := range cs {
		if !w.change(cs[i].old, cs[i].new, cs[i].seq, cs[i].rev) {
			return false
		}
	}
	clear(cs)
	w.coal = cs[:0]
	return true
}

// sendInitial delivers what the watch starts with: the current state (S8),
// the bootstrap contents and Bootstrapped event (S9), or the replayed
// changes (S11).
func (w *watcher) sendInitial() bool {
	w.reserve(len(w.snap) + 1 + len(w.init))
	switch {
	case w.current && len(w.snap) > 0:
		if !w.emit(state.Created, w.snap[0], nil, w.snapSeq, w.snapRev, true) {
			return false
		}
	case w.current:
		if !w.emit(state.Destroyed, newPointerOnly(w.ks.pointer(w.id)), nil, w.snapSeq, w.snapRev, true) {
			return false
		}
	case w.bootstrap:
		for _, r := range w.snap {
			if w.match(r) && !w.emit(state.Created, r, nil, 0, w.snapRev, false) {
				return false
			}
		}
		if !w.emit(state.Bootstrapped, nil, nil, w.snapSeq, w.snapRev, true) {
			return false
		}
	}
	if !w.deliverRecords(w.init) {
		return false
	}
	w.snap, w.init = nil, nil
	return w.flush()
}

// runKind is the goroutine of a kind watcher.
func (w *watcher) runKind() {
	ks := w.ks
	defer func() {
		ks.mu.Lock()
		ks.removeKindWatcherLocked(w)
		ks.mu.Unlock()
	}()
	if !w.sendInitial() {
		return
	}
	for {
		pos := w.pos.Load()
		switch {
		case pos == spilled:
			if !w.deliverCoalesced(w.drain()) || !w.flush() {
				return
			}
		case pos <= ks.head.Load() && ks.worthFolding(ks.head.Load()-pos+1):
			if !w.catchUp() || !w.flush() {
				return
			}
		case pos <= ks.head.Load():
			var ok bool
			w.batch, ok = ks.claim(w, pos, w.batch[:0])
			if !ok {
				clear(w.batch) // lost to the spill: drain it instead
				continue
			}
			if !w.deliverRecords(w.batch) || !w.flush() {
				return
			}
		default:
			ks.mu.Lock()
			if pos := w.pos.Load(); pos == spilled || pos <= ks.head.Load() {
				ks.mu.Unlock()
				continue
			}
			ks.parkLocked(w)
			ks.mu.Unlock()
			select {
			case <-w.wake:
				// Signaled by a write that took the group w is in:
				// writes that handed w their change moved it to the
				// next group, but none of them signaled it.
				w.group.Load().propagate(wakeFanout)
			case <-w.ctx.Done():
				ks.mu.Lock()
				ks.unparkLocked(w)
				ks.mu.Unlock()
				return
			}
		}
	}
}

// maxCatchUp bounds, in multiples of the kind's lag limit, how many
// changes a watcher folds before it delivers what it folded.
const maxCatchUp = 16

// worthFolding reports whether a kind watcher lag changes behind should
// catch up by folding: it is beyond the lag limit, and the backlog holds
// more changes than the kind has resources, so that some resources
// changed more than once. (A backlog of changes to distinct resources,
// such as a bulk create, would fold into as many events as changes, at a
// cost.)
func (ks *kindStore) worthFolding(lag uint64) bool {
	return lag >= uint64(ks.lagLimit) && lag > uint64(ks.count.Load())
}

// catchUp is how a kind watcher far behind the newest change catches up:
// it reads its backlog from the ring (and from the spill, if a write
// overran it meanwhile) folding it per resource, then delivers one
// coalesced event per resource (rule S12). Folding a change costs a map
// write; delivering it costs copies and a channel send. It reports false
// when the context is done.
func (w *watcher) catchUp() bool {
	ks := w.ks
	if w.local == nil {
		w.local = map[resource.ID]spillEntry{}
	}
	folded := 0
	for folded < maxCatchUp*ks.lagLimit {
		pos := w.pos.Load()
		if pos == spilled {
			ks.mu.Lock()
			w.coal, _ = ks.drainLocked(w, w.coal[:0])
			ks.mu.Unlock()
			for _, c := range w.coal { // oldest generation first
				w.foldLocal(c.id, c.spillEntry)
			}
			folded += max(len(w.coal), 1)
			clear(w.coal)
			continue
		}
		head := ks.head.Load()
		if pos > head || head-pos < uint64(ks.lagLimit/2) {
			break // close enough: the rest is delivered change by change
		}
		var ok bool
		w.batch, ok = ks.claim(w, pos, w.batch[:0])
		if ok {
			for _, r := range w.batch {
				e, had := w.local[r.id]
				if e, had = foldEntry(e, had, r); had {
					w.local[r.id] = e
				} else {
					delete(w.local, r.id)
				}
			}
			folded += len(w.batch)
		}
		clear(w.batch)
	}
	cs := slices.Grow(w.coal[:0], len(w.local))
	for id, e := range w.local {
		cs = append(cs, coalesced{spillEntry: e, id: id})
	}
	clear(w.local)
	return w.deliverCoalesced(cs)
}

// drain takes what the spill holds for w (which fell into it), combined
// per resource, and puts w back on the ring.
func (w *watcher) drain() []coalesced {
	ks := w.ks
	ks.mu.Lock()
	cs, multi := ks.drainLocked(w, w.coal[:0])
	ks.mu.Unlock()
	w.coal = cs
	if !multi {
		return cs
	}
	if w.local == nil {
		w.local = map[resource.ID]spillEntry{}
	}
	for _, c := range cs { // oldest generation first
		w.foldLocal(c.id, c.spillEntry)
	}
	clear(cs)
	cs = cs[:0]
	for id, e := range w.local {
		cs = append(cs, coalesced{spillEntry: e, id: id})
	}
	clear(w.local)
	w.coal = cs
	return cs
}

// foldLocal adds the coalesced change e of a newer span to the watcher's
// catch-up fold.
func (w *watcher) foldLocal(id resource.ID, e spillEntry) {
	if prev, ok := w.local[id]; ok {
		var keep bool
		if e, keep = combineEntries(prev, e); !keep {
			delete(w.local, id)
			return
		}
	}
	w.local[id] = e
}

// claim appends to dst the records from seq pos on (at most readBatch),
// read without the lock, and claims them by advancing w's position. It
// reports false when a write moved w into the spill first: the records
// were then folded into the spill and must not be delivered.
//
// A batch also stops once the versions it holds reach readBatchBytes, so
// that what a watcher holds while it delivers stays small next to the
// history's byte bound.
func (ks *kindStore) claim(w *watcher, pos uint64, dst []*record) ([]*record, bool) {
	n := min(ks.head.Load()-pos+1, readBatch)
	var bytes int64
	for s := pos; s < pos+n && bytes < readBatchBytes; s++ {
		r := ks.slot(s).Load()
		if r == nil || r.seq != s { // overwritten or evicted: the writer has spilled w
			break
		}
		dst = append(dst, r)
		bytes += r.size
	}
	if len(dst) == 0 || !w.pos.CompareAndSwap(pos, pos+uint64(len(dst))) {
		return dst, false
	}
	return dst, true
}

// pushLocked queues a change for a single-resource watcher; when the queue
// is full, its changes are coalesced into dirty first (rule S12).
func (w *watcher) pushLocked(r *record) {
	if len(w.queue) >= min(idQueueLimit, w.ks.cap) {
		for i := range w.queue {
			w.dirty, w.hasDirty = foldEntry(w.dirty, w.hasDirty, &w.queue[i])
		}
		clear(w.queue)
		w.queue = w.queue[:0]
	}
	w.queue = append(w.queue, *r)
	if w.parked {
		w.parked = false
		w.signal()
	}
}

// runID is the goroutine of a single-resource watcher.
func (w *watcher) runID() {
	ks := w.ks
	defer func() {
		ks.mu.Lock()
		ks.removeIDWatcherLocked(w)
		ks.mu.Unlock()
	}()
	if !w.sendInitial() {
		return
	}
	for {
		ks.mu.Lock()
		if !w.hasDirty && len(w.queue) == 0 {
			w.parked = true
			ks.mu.Unlock()
			select {
			case <-w.wake:
				continue
			case <-w.ctx.Done():
				return
			}
		}
		dirty, hasDirty := w.dirty, w.hasDirty
		w.dirty, w.hasDirty = spillEntry{}, false
		queue := w.queue
		w.queue, w.spareQ = w.spareQ, nil
		ks.mu.Unlock()

		if hasDirty {
			w.coal = append(w.coal[:0], coalesced{spillEntry: dirty, id: w.id})
			if !w.deliverCoalesced(w.coal) {
				return
			}
		}
		if !w.deliverQueued(queue) || !w.flush() {
			return
		}
		w.spareQ = queue[:0]
	}
}
