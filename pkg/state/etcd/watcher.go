package etcd

import (
	"cmp"
	"context"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// readBatch is the most changes a watcher takes from its feed at once.
const readBatch = 256

// watcher is one watch: a goroutine that turns the changes of its feed
// into events for the caller's channel. It never holds the feed's lock
// while sending.
type watcher struct {
	f     *feed
	ctx   context.Context
	ch    chan<- state.Event    // set unless aggregated
	aggCh chan<- []state.Event  // set for WatchKindAggregated
	id    resource.ID           // single-resource watch when not empty
	lq    resource.LabelQueries // their union (rule S15)
	iq    resource.IDQuery
	wake  chan struct{} // capacity 1

	filtered bool

	// pos is the seq of the next change to read. Guarded by f.mu.
	pos uint64

	// The fields below belong to the watcher's goroutine.

	after position                          // changes at or before it are skipped
	init  []state.Event                     // events to send first
	seen  map[resource.ID]resource.Resource // what it last sent of each resource
	agg   []state.Event                     // aggregated batch being built
	batch []change                          // changes taken from the feed
}

// signal wakes the watcher's goroutine; it never blocks.
func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// match reports whether the watcher selects r.
func (w *watcher) match(r resource.Resource) bool {
	if r == nil {
		return false
	}
	if w.id != "" {
		return r.Metadata().ID() == w.id
	}
	return !w.filtered || backend.Matches(r, w.lq, w.iq)
}

// concerns reports whether the watcher sees c's resource before or after.
func (w *watcher) concerns(c *change) bool {
	return (w.id == "" || c.id == w.id) && (w.match(c.old) || w.match(c.new))
}

// run delivers the initial events, then the changes, until ctx is done.
func (w *watcher) run() {
	defer w.stop()
	for _, ev := range w.init {
		if !w.emitEvent(ev) {
			return
		}
	}
	w.init = nil
	if !w.flush() {
		return
	}
	for {
		coalesced, ok := w.take()
		if !ok {
			select {
			case <-w.wake:
				continue
			case <-w.ctx.Done():
				return
			}
		}
		if !w.deliver(coalesced) || !w.flush() {
			return
		}
	}
}

// stop unregisters the watcher and releases its feed.
func (w *watcher) stop() {
	f := w.f
	f.mu.Lock()
	delete(f.watchers, w)
	f.mu.Unlock()
	f.c.release(f)
}

// take claims the next changes into w.batch: at most readBatch in order,
// or, when the watcher fell behind the kept history, one coalesced change
// per resource changed since its position. It reports whether the batch is
// coalesced, and false (ok) when there is nothing to read.
func (w *watcher) take() (coalesced, ok bool) {
	f := w.f
	w.batch = w.batch[:0]
	f.mu.Lock()
	defer f.mu.Unlock()
	if w.pos > f.head {
		return false, false
	}
	if w.pos < f.oldestLocked() {
		w.batch = f.coalesceLocked(w, w.batch)
		w.pos = f.head + 1
		return true, true
	}
	end := min(f.head, w.pos+readBatch-1)
	for s := w.pos; s <= end; s++ {
		if c := f.changeLocked(s); w.concerns(c) {
			w.batch = append(w.batch, *c)
		}
	}
	w.pos = end + 1
	return false, true
}

// coalesceLocked appends to dst the newest state of every resource of
// interest to w changed since w's position, in the order of their last
// changes (a destroyed resource as a change to nil).
func (f *feed) coalesceLocked(w *watcher, dst []change) []change {
	if w.id != "" {
		if it := f.items[w.id]; it != nil && it.seq >= w.pos {
			return append(dst, change{new: it.res, id: w.id, seq: it.seq, pos: it.pos})
		}
		if t, ok := f.tombs[w.id]; ok && t.seq >= w.pos {
			return append(dst, change{old: t.last, id: w.id, seq: t.seq, pos: t.pos})
		}
		return dst
	}
	for id, it := range f.items {
		if it.seq >= w.pos {
			dst = append(dst, change{new: it.res, id: id, seq: it.seq, pos: it.pos})
		}
	}
	for id, t := range f.tombs {
		if t.seq >= w.pos {
			dst = append(dst, change{old: t.last, id: id, seq: t.seq, pos: t.pos})
		}
	}
	slices.SortFunc(dst, func(a, b change) int { return cmp.Compare(a.seq, b.seq) })
	return dst
}

// deliver sends the events of w.batch; false when ctx is done.
func (w *watcher) deliver(coalesced bool) bool {
	for i := range w.batch {
		c := &w.batch[i]
		if !w.after.less(c.pos) {
			continue
		}
		var ok bool
		if coalesced {
			ok = w.emitCoalesced(c)
		} else {
			ok = w.emitChange(c)
		}
		if !ok {
			return false
		}
	}
	clear(w.batch) // drop the references to the snapshots
	return true
}

// emitChange sends the event of one change, typed by what it did as seen
// through the watcher's queries (rules S9, S10).
func (w *watcher) emitChange(c *change) bool {
	oldM, newM := w.match(c.old), w.match(c.new)
	bm := w.f.c.bookmark(c.pos)
	switch {
	case newM && !oldM:
		w.seen[c.id] = c.new
		return w.emitEvent(state.Event{Type: state.Created, Resource: c.new, Bookmark: bm, Revision: revOf(c.pos)})
	case newM:
		w.seen[c.id] = c.new
		return w.emitEvent(state.Event{Type: state.Updated, Resource: c.new, Old: c.old, Bookmark: bm, Revision: revOf(c.pos)})
	case oldM:
		delete(w.seen, c.id)
		return w.emitEvent(state.Event{Type: state.Destroyed, Resource: c.old, Old: c.old, Bookmark: bm, Revision: revOf(c.pos)})
	}
	return true
}

// emitCoalesced sends the event of a coalesced change, typed by what the
// watcher last saw of the resource (rule S12).
func (w *watcher) emitCoalesced(c *change) bool {
	last := w.seen[c.id]
	cur := c.new
	if !w.match(cur) {
		cur = nil
	}
	bm := w.f.c.bookmark(c.pos)
	switch {
	case last == nil && cur == nil:
		return true
	case last == nil:
		w.seen[c.id] = cur
		return w.emitEvent(state.Event{Type: state.Created, Resource: cur, Bookmark: bm, Revision: revOf(c.pos)})
	case cur == nil:
		delete(w.seen, c.id)
		res := last
		if c.new == nil && w.match(c.old) && c.old.Metadata().Created().Equal(last.Metadata().Created()) {
			// Destroyed in the life the watcher saw: the state it was
			// destroyed in, its last stored one, which may be newer
			// than what the watcher saw.
			res = c.old
		}
		return w.emitEvent(state.Event{Type: state.Destroyed, Resource: res, Old: last, Bookmark: bm, Revision: revOf(c.pos)})
	case !last.Metadata().Created().Equal(cur.Metadata().Created()):
		// Destroyed and created again: never an Updated across two lives.
		before := position{rev: c.pos.rev, sub: c.pos.sub - 1}
		if c.pos.sub == 0 {
			before = endOf(c.pos.rev - 1)
		}
		w.seen[c.id] = cur
		return w.emitEvent(state.Event{Type: state.Destroyed, Resource: last, Old: last, Bookmark: w.f.c.bookmark(before), Revision: revOf(before)}) &&
			w.emitEvent(state.Event{Type: state.Created, Resource: cur, Bookmark: bm, Revision: revOf(c.pos)})
	case last.Metadata().Version().Equal(cur.Metadata().Version()):
		return true
	default:
		w.seen[c.id] = cur
		return w.emitEvent(state.Event{Type: state.Updated, Resource: cur, Old: last, Bookmark: bm, Revision: revOf(c.pos)})
	}
}

// emitEvent sends ev (or adds it to the aggregated batch); false when ctx
// is done. Its resources are the feed's shared snapshots (rule S7).
func (w *watcher) emitEvent(ev state.Event) bool {
	if w.aggCh != nil {
		w.agg = append(w.agg, ev)
		return true
	}
	return backend.Send(w.ctx, w.ch, ev)
}

// flush sends the aggregated batch, if any; false when ctx is done.
func (w *watcher) flush() bool {
	if w.aggCh == nil || len(w.agg) == 0 {
		return true
	}
	batch := w.agg
	w.agg = nil
	return backend.Send(w.ctx, w.aggCh, batch)
}
