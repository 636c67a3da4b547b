package inmem

import (
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

// kindWatcher is a watch of a whole kind (WatchKind, WatchKindAggregated):
// a goroutine that reads the kind's history ring from its position, or
// drains the spill when it fell behind, and delivers through its feed. It
// never holds the kind's lock while sending.
type kindWatcher struct {
	feed

	// pos is the seq of the next record the watcher reads from the ring,
	// or spilled. The watcher advances it with compare-and-swap as it
	// claims records; writers (holding ks.mu) swap it to spilled, and the
	// watcher sets it back when it drains the spill (holding ks.mu).
	pos atomic.Uint64
	// released is the seq from which on the watcher may still read records
	// in the ring: it reads none below it, so a write may reuse them (see
	// kindStore.reusableLocked). It follows pos, except while the watcher
	// reads a batch (it is set once the batch is copied and claimed) and
	// while it is spilled (the watcher may still be reading the records it
	// lost; it is set when it drains the spill). It never decreases.
	released atomic.Uint64
	// group is the wake group the watcher parked in last. Written under
	// ks.mu; read by the watcher's goroutine when it wakes.
	group atomic.Pointer[wakeGroup]
	// gen is the spill generation the lagging watcher joined (pos is then
	// spilled); nil while it reads the ring. Guarded by ks.mu.
	gen *spillGen

	// The fields below belong to the watcher's goroutine.

	bootstrap bool                       // send the contents and Bootstrapped first
	batch     []record                   // records copied from the ring
	local     map[resource.ID]spillEntry // catch-up fold (see catchUp)
	// localPeak is the most entries local held since it was made: a Go
	// map keeps the memory of its largest size (see releaseLocal).
	localPeak int
}

// sendInitial delivers what the watch starts with: the bootstrap contents
// and Bootstrapped event (S9), or the replayed changes (S11).
func (w *kindWatcher) sendInitial() bool {
	w.reserve(len(w.snap) + 1 + len(w.init))
	if w.bootstrap {
		for _, r := range w.snap {
			if w.match(r) && !w.emit(state.Created, r, nil, 0, w.snapRev, false) {
				return false
			}
		}
		if !w.emit(state.Bootstrapped, nil, nil, w.snapSeq, w.snapRev, true) {
			return false
		}
	}
	return w.sendReplay()
}

// handOffLocked delivers rec, the kind's newest change, to a parked kind
// watcher from the writer, and reports whether it did: when rec is the
// change the watcher reads next, the watcher has no queries and is not
// aggregated, and its channel takes the event without blocking. Its
// position then moves past rec, as if its goroutine had delivered it.
// A parked watcher's goroutine has delivered everything it claimed and
// sends nothing until it is woken, so the events stay in order; the
// writer never waits (the send does not block). The caller holds ks.mu.
func (w *kindWatcher) handOffLocked(rec *record) bool {
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
	w.released.Store(rec.seq + 1)
	return true
}

// runKind is the goroutine of a kind watcher.
func (w *kindWatcher) runKind() {
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
			if !w.deliverFold(w.drain()) || !w.flush() {
				return
			}
		case pos <= ks.head.Load() && ks.worthFolding(ks.head.Load()-pos+1):
			if !w.catchUp() || !w.flush() {
				return
			}
		case pos <= ks.head.Load():
			var ok bool
			if w.batch, ok = ks.claim(w, pos, w.batch[:0]); !ok {
				continue // lost to the spill: drain it instead
			}
			if !w.deliverRecords(w.batch) || !w.flush() {
				return
			}
		default:
			ks.mu.Lock()
			if pos := w.pos.Load(); pos == spilled || pos <= ks.seq {
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
func (w *kindWatcher) catchUp() bool {
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
			for i := range w.batch {
				r := &w.batch[i]
				id := r.ID()
				e, had := w.local[id]
				if e, had = foldEntry(e, had, r); had {
					w.local[id] = e
					w.localPeak = max(w.localPeak, len(w.local))
				} else {
					delete(w.local, id)
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
	w.releaseLocal()
	return w.deliverFold(cs)
}

// drain takes what the spill holds for w (which fell into it), combined
// per resource, and puts w back on the ring.
func (w *kindWatcher) drain() []coalesced {
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
	w.releaseLocal()
	w.coal = cs
	return cs
}

// foldLocal adds the coalesced change e of a newer span to the watcher's
// catch-up fold.
func (w *kindWatcher) foldLocal(id resource.ID, e spillEntry) {
	if prev, ok := w.local[id]; ok {
		var keep bool
		if e, keep = combineEntries(prev, e); !keep {
			delete(w.local, id)
			return
		}
	}
	w.local[id] = e
	w.localPeak = max(w.localPeak, len(w.local))
}

// foldKeep is the most resources a kind watcher's catch-up memory (its
// fold map, its coalesced changes and their sort scratch) keeps room for
// once a catch-up or drain is delivered. Memory grown past it for a larger
// one is let go, so that a watcher that lagged once behind a large kind
// does not keep a kind-sized fold for the rest of its life, while one that
// lags a little reuses its memory from one catch-up to the next.
const foldKeep = maxLag

// sortKeep is the most entries the sort scratch keeps between deliveries:
// what sortCoalesced needs for foldKeep changes whose seqs span twice
// their number (a catch-up's seqs are about as dense as its changes).
const sortKeep = 3 * foldKeep

// releaseLocal empties the catch-up fold once its changes are copied out
// for delivery, and drops it when it held more than foldKeep resources,
// before the delivery (which waits on the receiver) rather than after it.
func (w *kindWatcher) releaseLocal() {
	if w.localPeak > foldKeep {
		w.local, w.localPeak = nil, 0
		return
	}
	clear(w.local)
}

// deliverFold delivers coalesced changes (see deliverCoalesced), then
// drops the slice that held them and the sort scratch when they grew past
// foldKeep and sortKeep. It reports false when the context is done.
func (w *kindWatcher) deliverFold(cs []coalesced) bool {
	ok := w.deliverCoalesced(cs)
	if cap(w.coal) > foldKeep {
		w.coal = nil
	}
	if cap(w.sortScratch) > sortKeep {
		w.sortScratch = nil
	}
	return ok
}

// claim appends to dst copies of the records from seq pos on (at most
// readBatch), read without the lock, and claims them by advancing w's
// position, then its released position. It reports false when a write
// moved w into the spill first: the records were then folded into the
// spill and must not be delivered.
//
// A record read here is not reused while w reads it: w's released
// position is at most pos until the batch is claimed (see
// kindStore.reusableLocked).
//
// A batch also stops once the versions it holds reach readBatchBytes, so
// that what a watcher holds while it delivers stays small next to the
// history's byte bound.
func (ks *kindStore) claim(w *kindWatcher, pos uint64, dst []record) ([]record, bool) {
	n := min(ks.head.Load()-pos+1, readBatch)
	var bytes int64
	i := ks.index(pos) // then stepped, not divided again
	for s := pos; s < pos+n && bytes < readBatchBytes; s++ {
		r := ks.slot(i).Load()
		if r == nil || r.seq != s { // overwritten or evicted: the writer has spilled w
			break
		}
		dst = append(dst, *r)
		bytes += r.size
		if i++; i == ks.cap {
			i = 0
		}
	}
	end := pos + uint64(len(dst))
	if len(dst) == 0 || !w.pos.CompareAndSwap(pos, end) {
		clear(dst)
		return dst[:0], false
	}
	w.released.Store(end)
	return dst, true
}
