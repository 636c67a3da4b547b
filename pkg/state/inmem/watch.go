package inmem

import (
	"context"
	"slices"

	"github.com/resgraph/resgraph/pkg/internal/batchpool"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// pointer returns the pointer to the resource id of this kind.
func (ks *kindStore) pointer(id resource.ID) resource.Pointer {
	return resource.NewPointer(ks.kind.Namespace(), ks.kind.Type(), id)
}

// Watch implements [state.CoreState]: the current state of the resource
// (rule S8) or the replayed changes (S11), then its changes.
func (c *core) Watch(ctx context.Context, ptr resource.Pointer, ch chan<- state.Event, opts ...state.WatchOption) error {
	p, o, err := backend.WatchArgs(ctx, ptr, ch, opts)
	if err != nil {
		return err
	}
	ks := c.store(p.Kind())
	w := &idWatcher{feed: feed{ks: ks, ctx: ctx, ch: ch, wake: make(chan struct{}, 1)}, id: p.ID()}
	isMine := func(r *record) bool { return r.ID() == w.id }

	ks.mu.Lock()
	switch {
	case o.StartFromBookmark != nil:
		from, err := ks.resumeLocked(p, o.StartFromBookmark)
		if err != nil {
			ks.mu.Unlock()
			return err
		}
		w.init = ks.collectLocked(from, isMine)
	case o.TailEvents > 0:
		w.init = ks.tailLocked(o.TailEvents, isMine)
	default:
		w.current = true
		w.snapSeq = ks.seq
		w.snapRev = ks.revs.Load()
		if it, ok := ks.items[w.id]; ok {
			w.snap = []resource.Resource{ks.bare(it)}
		}
	}
	ks.addIDWatcherLocked(w)
	ks.mu.Unlock()

	go w.runID()
	return nil
}

// startKindWatch starts a kind watch whose arguments are valid (the Start
// of backend.KindWatches).
func (c *core) startKindWatch(ctx context.Context, k resource.KindKey, ch chan<- state.Event, aggCh chan<- []state.Event, o state.WatchKindOptions) error {
	return c.store(k).addKindWatcher(ctx, ch, aggCh, o)
}

func (ks *kindStore) addKindWatcher(ctx context.Context, ch chan<- state.Event, aggCh chan<- []state.Event, o state.WatchKindOptions) error {
	w := &kindWatcher{feed: feed{
		ks:       ks,
		ctx:      ctx,
		ch:       ch,
		aggCh:    aggCh,
		pool:     batchpool.For(ctx, aggCh),
		lq:       o.LabelQueries,
		iq:       o.IDQuery,
		filtered: backend.Filtered(o.LabelQueries, o.IDQuery),
		wake:     make(chan struct{}, 1),
	}}
	// A change concerns the watcher when it sees the resource before or
	// after it.
	concerns := func(r *record) bool {
		return (r.old != nil && w.match(r.old)) || (r.new != nil && w.match(r.new))
	}

	ks.mu.Lock()
	head := ks.seq
	w.pos.Store(head + 1)
	switch {
	case o.StartFromBookmark != nil:
		from, err := ks.resumeLocked(nil, o.StartFromBookmark)
		if err != nil {
			ks.mu.Unlock()
			return err
		}
		w.pos.Store(from)
	case o.TailEvents > 0:
		w.init = ks.tailLocked(o.TailEvents, concerns)
	case o.BootstrapContents:
		w.bootstrap = true
		w.snapSeq = head
		w.snapRev = ks.revs.Load()
		w.snap = ks.snapshotLocked(nil)
	}
	ks.addKindWatcherLocked(w)
	ks.mu.Unlock()

	go w.runKind()
	return nil
}

// resumeLocked returns the seq a watch resuming from b starts at: an
// invalid error for a bookmark that is not of this kind, a buffer-overrun
// error when changes after it have left the history (rule S11).
func (ks *kindStore) resumeLocked(ptr resource.Pointer, b state.Bookmark) (uint64, error) {
	seq, err := ks.decodeBookmark(ptr, b)
	if err != nil {
		return 0, err
	}
	head := ks.seq
	if seq > head {
		return 0, state.NewInvalidError(ptr, "watch %s: bookmark ahead of the history", resource.KindString(ks.kind))
	}
	if oldest := ks.oldest(head); seq+1 < oldest {
		return 0, state.NewBufferOverrunError(ptr, "watch %s: bookmark %d is older than the history kept (from %d on)", resource.KindString(ks.kind), seq, oldest)
	}
	return seq + 1, nil
}

// collectLocked returns copies of the records from seq from to the head
// that keep says the watcher wants.
func (ks *kindStore) collectLocked(from uint64, keep func(*record) bool) []record {
	var out []record
	for s, head := from, ks.seq; s <= head; s++ {
		if r := ks.recordLocked(s); keep(r) {
			out = append(out, *r)
		}
	}
	return out
}

// tailLocked returns, oldest first, copies of the last n records that
// keep says the watcher wants.
func (ks *kindStore) tailLocked(n int, keep func(*record) bool) []record {
	var out []record
	head := ks.seq
	for s := head; s >= ks.oldest(head) && s > 0 && len(out) < n; s-- {
		if r := ks.recordLocked(s); keep(r) {
			out = append(out, *r)
		}
	}
	slices.Reverse(out)
	return out
}
