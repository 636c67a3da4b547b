package etcd

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/resgraph/resgraph/pkg/resource"
)

// loadPast reads, once per feed, the changes of the kind from etcd's
// history (since its last compaction) up to the revision of the feed's
// first list, keeping the last cap of them: they extend the reach of tail
// events and bookmarks to before the feed started.
func (f *feed) loadPast(ctx context.Context) error {
	f.pastMu.Lock()
	defer f.pastMu.Unlock()
	f.mu.Lock()
	loaded, until := f.pastLoaded, f.startRev
	f.mu.Unlock()
	if loaded {
		return nil
	}
	changes, from, err := f.readHistory(ctx, until)
	if err != nil {
		return fmt.Errorf("etcd state: watch %s: read history: %w", resource.KindString(f.kind), err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	base := liveBase - uint64(len(changes))
	for i := range changes {
		changes[i].seq = base + uint64(i)
	}
	f.past = changes
	f.pastLoaded = true
	// The past extends the history kept only while it is whole since the
	// feed started: no change left the ring, and no relist coalesced
	// changes the feed did not see.
	if f.keptFrom == endOf(f.startRev) {
		f.keptFrom = from
	}
	return nil
}

// readHistory returns the last cap changes of the kind up to revision
// until (seqs unset), and the position after which it has every change.
//
// It watches every key of the cluster from the oldest revision etcd
// keeps, not only the kind's: each revision is made by a write to some
// key, so the event of revision until marks the end of the read. (Asking
// etcd for its progress instead is not reliable on etcd 3.4, which may
// report a revision before it sent the events up to it.)
func (f *feed) readHistory(ctx context.Context, until int64) ([]change, position, error) {
	h := &history{f: f, cap: f.cap}
	if until <= 1 {
		return nil, position{}, nil // revision 1 is the empty store
	}
	from := int64(1)
	for {
		done, compacted, err := h.read(ctx, from, until)
		switch {
		case err != nil:
			return nil, position{}, err
		case done:
			return h.result(from)
		case compacted > until:
			return nil, endOf(compacted - 1), nil // the kind's history is gone
		}
		from, h = compacted, &history{f: f, cap: f.cap}
	}
}

// read reads the history from revision from up to until. It reports
// whether it reached until, or the revision etcd compacted the history to
// when from is older.
func (h *history) read(ctx context.Context, from, until int64) (done bool, compacted int64, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wch := h.f.c.cli.Watch(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithRev(from), clientv3.WithPrevKV())
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
			if h.add(resp.Events, until) {
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
}

// add records the kind's events up to revision until and reports whether
// it reached revision until. (etcd never splits the events of one
// revision over two watch responses.)
func (h *history) add(events []*clientv3.Event, until int64) bool {
	reached := false
	for _, ev := range events {
		if ev.Kv.ModRevision >= until {
			reached = true
			if ev.Kv.ModRevision > until {
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
		if len(h.changes) < h.cap {
			h.changes = append(h.changes, c)
		} else {
			slot := &h.changes[h.n%h.cap]
			h.dropped = slot.pos
			*slot = c
		}
		h.n++
	}
	return reached
}

// result returns the changes in order and the position after which every
// change is among them.
func (h *history) result(from int64) ([]change, position, error) {
	if h.n <= h.cap {
		kept := endOf(from - 1)
		if from <= 1 {
			kept = position{}
		}
		return h.changes, kept, nil
	}
	i := h.n % h.cap
	ordered := append(append([]change(nil), h.changes[i:]...), h.changes[:i]...)
	return ordered, h.dropped, nil
}
