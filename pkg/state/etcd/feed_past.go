package etcd

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/resgraph/resgraph/pkg/resource"
)

// The past of a feed is the changes of its kind before its first list,
// read from etcd's history only as far back as a watch needs them: a
// bookmark from its revision on, a tail in windows of revisions just
// below what is read already, each twice as wide as the last, until the
// past holds the tail's changes. No read goes below the kind's first
// write (its head key's creation), the revision etcd compacted its history
// to, or past the cap changes kept; a bookmark older than what can be read
// then gives a buffer-overrun error from the Watch call. The changes of the
// compaction's revision itself come without the states before them: a
// creation among them is kept, any other change is taken as gone (with every
// change before it), so a bookmark at or after the last of them resumes and
// one before it is an overrun.
//
// Each read is one etcd watch of the kind's prefix from its first
// revision, ended at the kind's first change at or above the revisions
// read already — there is one: the head key's write at the list's
// revision of the kind's newest change. (Asking etcd for its progress
// instead is not reliable on etcd 3.4, which may report a revision before
// it sent the events up to it.) etcd scans every revision from the first
// one asked to its newest to answer, so a read costs what lies between
// the watch's need and now, not the cluster's whole history.

// minPastWindow is the fewest revisions a tail's read of the past asks.
const minPastWindow = 64

// pastState is what a feed knows of its past; guarded by the feed's mu.
type pastState struct {
	changes []change // the changes read, oldest first, seqs below liveBase
	lo      int64    // every change of the kind at revisions lo..list is in changes
	floor   int64    // the kind's first write: nothing of it is older
	end     bool     // nothing older can be read (floor, compaction or cap reached)
	window  int64    // the revisions the last tail read asked for
}

// startPastLocked sets the past up from the feed's first list: until is the
// revision of the kind's newest change then, floor that of its first.
func (f *feed) startPastLocked(until, floor int64) {
	f.past = pastState{lo: until + 1, floor: floor, end: until < floor}
	f.keptFrom = endOf(until)
	if f.past.end {
		f.keptFrom = position{} // the kind has no change yet: all are kept
	}
}

// loadPast reads older changes of the kind into the feed's past until the
// start st of watcher w has what it needs: every change after its
// bookmark, or the last st.tail changes it concerns.
func (f *feed) loadPast(ctx context.Context, w *watcher, st start) error {
	f.pastMu.Lock()
	defer f.pastMu.Unlock()
	for {
		f.mu.Lock()
		from, ok := f.pastNeedLocked(w, st)
		f.mu.Unlock()
		if !ok {
			return nil
		}
		if err := f.readPast(ctx, from); err != nil {
			return fmt.Errorf("etcd state: watch %s: read history: %w", resource.KindString(f.kind), err)
		}
	}
}

// pastNeedLocked returns the revision to read the past from for the start
// st of w, and false when it has what it needs or nothing older can be
// read. Reading extends the history kept only while it is whole since the
// feed started: no change left the ring, no relist coalesced changes.
func (f *feed) pastNeedLocked(w *watcher, st start) (int64, bool) {
	p := &f.past
	if p.end || f.keptFrom != endOf(p.lo-1) {
		return 0, false
	}
	if st.bookmark {
		return max(st.from.rev, p.floor), st.from.less(f.keptFrom)
	}
	if f.concerningLocked(w, st.tail) >= st.tail {
		return 0, false
	}
	p.window = max(2*p.window, 2*int64(st.tail), minPastWindow)
	return max(p.lo-p.window, p.floor), true
}

// concerningLocked counts the kept changes that concern w, up to n.
func (f *feed) concerningLocked(w *watcher, n int) int {
	count := 0
	for s := f.head; s >= f.oldestLocked() && count < n; s-- {
		if w.concerns(f.changeLocked(s)) {
			count++
		}
	}
	return count
}

// readPast reads the changes of the kind from revision from up to those
// read already, and puts them before them in the past.
func (f *feed) readPast(ctx context.Context, from int64) error {
	f.mu.Lock()
	lo, room := f.past.lo, f.cap-len(f.past.changes)
	f.mu.Unlock()
	if from >= lo || room <= 0 {
		return nil
	}
	f.c.counters.HistoryReads.Add(1)
	f.c.counters.HistoryRevisions.Add(lo - from)
	r, err := f.readHistory(ctx, from, lo-1, room)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	changes := append(r.changes, f.past.changes...)
	base := liveBase - uint64(len(changes))
	for i := range r.changes {
		changes[i].seq = base + uint64(i)
	}
	kept := f.keptFrom == endOf(lo-1)
	f.past.changes, f.past.lo = changes, r.lo
	f.past.end = r.end || r.lo <= f.past.floor
	if !kept {
		return nil // the live history moved on meanwhile: the past does not extend it
	}
	switch {
	case r.full:
		f.keptFrom = r.dropped
	case r.lo <= f.past.floor:
		f.keptFrom = position{} // back to the kind's first write
	default:
		f.keptFrom = endOf(r.lo - 1)
	}
	return nil
}

// pastRead is what one read of the history found.
type pastRead struct {
	changes []change // in order, seqs unset
	lo      int64    // every change from revision lo on was read
	end     bool     // nothing older can be read: compacted, or full
	full    bool     // the oldest were dropped: more than the room, or gone
	dropped position // with full: the newest change dropped
}

// readHistory returns the last room changes of the kind from revision
// from to hi. When etcd compacted its history past from, it reads from
// the compaction's revision and reports the end of what can be read.
// Changes whose previous state is gone are dropped (see history.add).
func (f *feed) readHistory(ctx context.Context, from, hi int64, room int) (pastRead, error) {
	end := false
	for {
		h := &history{f: f, cap: room}
		done, compacted, err := h.read(ctx, from, hi)
		switch {
		case err != nil:
			return pastRead{}, err
		case done:
			r := pastRead{changes: h.changes, lo: from, end: end}
			if h.gone {
				r.end, r.full, r.dropped = true, true, h.dropped
			}
			if h.n > h.cap {
				i := h.n % h.cap
				r.changes = append(append([]change(nil), h.changes[i:]...), h.changes[:i]...)
				r.end, r.full, r.dropped = true, true, h.dropped
			}
			return r, nil
		case compacted >= hi:
			return pastRead{lo: hi + 1, end: true}, nil // gone, every change of it
		}
		// The changes of the compaction's revision itself are there, but
		// not the states before them (etcd leaves PrevKv out): history.add
		// drops those it cannot tell, and the changes after them are whole.
		from, end = compacted, true
	}
}

// read reads the kind's history from revision from up to hi. It reports
// whether it reached hi, or the revision etcd compacted the history to
// when from is older.
func (h *history) read(ctx context.Context, from, hi int64) (done bool, compacted int64, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wch := h.f.c.cli.Watch(ctx, h.f.prefix, clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithPrevKV())
	for {
		select {
		case resp, ok := <-wch:
			if !ok {
				return false, 0, context.Cause(ctx)
			}
			if resp.CompactRevision > 0 {
				return false, resp.CompactRevision, nil
			}
			if err := resp.Err(); err != nil {
				return false, 0, err
			}
			if h.add(resp.Events, hi) {
				return true, 0, nil
			}
		case <-h.f.ctx.Done():
			return false, 0, context.Canceled
		}
	}
}

// history collects the last cap changes read from etcd's history.
type history struct {
	f       *feed
	cap     int
	changes []change // a ring of cap once full
	n       int      // changes seen
	last    position
	dropped position // position of the newest change dropped
	gone    bool     // a change's previous state was compacted away
}

// add records the kind's events up to revision hi and reports whether it
// reached revision hi (an event at or after it: the kind's head key is
// written with each of its changes, and etcd never splits the events of
// one revision over two watch responses).
func (h *history) add(events []*clientv3.Event, hi int64) bool {
	reached := false
	for _, ev := range events {
		if ev.Kv.ModRevision >= hi {
			reached = true
			if ev.Kv.ModRevision > hi {
				break
			}
		}
		id, ok := idOf(h.f.prefix, ev.Kv.Key)
		if !ok {
			continue
		}
		pos := position{rev: ev.Kv.ModRevision}
		if h.last.rev == pos.rev {
			pos.sub = h.last.sub + 1
		}
		h.last = pos
		c := change{id: id, pos: pos}
		if ev.PrevKv != nil {
			c.old, _ = h.f.c.decodeShared(ev.PrevKv) // undecodable: absent
		} else if !ev.IsCreate() {
			h.lose(pos)
			continue
		}
		if ev.Type == mvccpb.PUT {
			r, err := h.f.c.decodeShared(ev.Kv)
			if err != nil {
				h.f.c.logUndecodable(err)
			}
			c.new = r
		}
		if c.old == nil && c.new == nil || sameWrite(c.old, c.new) {
			continue // nothing, or a record rewritten by a rotation
		}
		h.keep(c)
	}
	return reached
}

// lose records that the change at pos cannot be told: its previous state
// is gone from etcd's history (compacted: etcd leaves PrevKv out). It and
// every change before it are dropped, as if the ring had overflowed.
func (h *history) lose(pos position) {
	h.changes, h.n, h.dropped, h.gone = h.changes[:0], 0, pos, true
}

// keep records c, dropping the oldest change kept when full.
func (h *history) keep(c change) {
	if len(h.changes) < h.cap {
		h.changes = append(h.changes, c)
	} else {
		slot := &h.changes[h.n%h.cap]
		h.dropped = slot.pos
		*slot = c
	}
	h.n++
}
