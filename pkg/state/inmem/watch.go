package inmem

import (
	"context"
	"slices"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// pointer returns the pointer to the resource id of this kind.
func (ks *kindStore) pointer(id resource.ID) resource.Pointer {
	return resource.NewPointer(ks.kind.Namespace(), ks.kind.Type(), id)
}

// Watch implements [state.CoreState]: the current state of the resource
// (rule S8) or the replayed changes (S11), then its changes.
func (c *core) Watch(ctx context.Context, ptr resource.Pointer, ch chan<- state.Event, opts ...state.WatchOption) error {
	if err := resource.ValidatePointer(ptr); err != nil {
		return err
	}
	p := resource.PointerOf(ptr)
	if ch == nil {
		return state.NewInvalidError(p, "watch: nil channel")
	}
	var o state.WatchOptions
	opt.Apply(&o, opts)
	if o.TailEvents < 0 {
		return state.NewInvalidError(p, "watch: negative tail events %d", o.TailEvents)
	}
	if o.TailEvents > 0 && o.StartFromBookmark != nil {
		return state.NewInvalidError(p, "watch: tail events and a bookmark are exclusive")
	}
	if ctx == nil {
		return state.NewInvalidError(p, "watch: nil context")
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	ks := c.store(p.Kind())
	w := &idWatcher{feed: feed{ks: ks, ctx: ctx, ch: ch, wake: make(chan struct{}, 1)}, id: p.ID()}
	isMine := func(r *record) bool { return r.id == w.id }

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
		w.snapSeq = ks.head.Load()
		w.snapRev = ks.revs.Load()
		if it, ok := ks.items[w.id]; ok {
			w.snap = []resource.Resource{it.r}
		}
	}
	ks.addIDWatcherLocked(w)
	ks.mu.Unlock()

	go w.runID()
	return nil
}

// WatchKind implements [state.CoreState] (rules S9–S13).
func (c *core) WatchKind(ctx context.Context, kind resource.Kind, ch chan<- state.Event, opts ...state.WatchKindOption) error {
	if ch == nil {
		return state.NewInvalidError(nil, "watch %s: nil channel", kindString(kind))
	}
	return c.watchKind(ctx, kind, ch, nil, opts)
}

// WatchKindAggregated implements [state.CoreState]: WatchKind delivering
// the events available at once as one batch.
func (c *core) WatchKindAggregated(ctx context.Context, kind resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if ch == nil {
		return state.NewInvalidError(nil, "watch %s: nil channel", kindString(kind))
	}
	return c.watchKind(ctx, kind, nil, ch, opts)
}

// kindString formats a kind that may be invalid for an error message.
func kindString(k resource.Kind) string {
	if resource.ValidateKind(k) != nil {
		return "<invalid kind>"
	}
	return resource.KindString(k)
}

func (c *core) watchKind(ctx context.Context, kind resource.Kind, ch chan<- state.Event, aggCh chan<- []state.Event, opts []state.WatchKindOption) error {
	if err := resource.ValidateKind(kind); err != nil {
		return err
	}
	var o state.WatchKindOptions
	opt.Apply(&o, opts)
	ks := kindString(kind)
	if o.TailEvents < 0 {
		return state.NewInvalidError(nil, "watch %s: negative tail events %d", ks, o.TailEvents)
	}
	exclusive := 0
	for _, set := range []bool{o.BootstrapContents, o.TailEvents > 0, o.StartFromBookmark != nil} {
		if set {
			exclusive++
		}
	}
	if exclusive > 1 {
		return state.NewInvalidError(nil, "watch %s: bootstrap contents, tail events and a bookmark are exclusive", ks)
	}
	if ctx == nil {
		return state.NewInvalidError(nil, "watch %s: nil context", ks)
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	return c.store(resource.KindOf(kind)).addKindWatcher(ctx, ch, aggCh, o)
}

func (ks *kindStore) addKindWatcher(ctx context.Context, ch chan<- state.Event, aggCh chan<- []state.Event, o state.WatchKindOptions) error {
	w := &kindWatcher{feed: feed{
		ks:       ks,
		ctx:      ctx,
		ch:       ch,
		aggCh:    aggCh,
		lq:       o.LabelQuery,
		iq:       o.IDQuery,
		filtered: len(o.LabelQuery.Terms) > 0 || o.IDQuery.Regexp != nil,
		wake:     make(chan struct{}, 1),
	}}
	// A change concerns the watcher when it sees the resource before or
	// after it.
	concerns := func(r *record) bool {
		return (r.old != nil && w.match(r.old)) || (r.new != nil && w.match(r.new))
	}

	ks.mu.Lock()
	head := ks.head.Load()
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
		ks.sortedLocked()
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
	head := ks.head.Load()
	if seq > head {
		return 0, state.NewInvalidError(ptr, "watch %s: bookmark ahead of the history", resource.KindString(ks.kind))
	}
	if oldest := ks.oldest(head); seq+1 < oldest {
		return 0, state.NewBufferOverrunError(ptr, "watch %s: bookmark %d is older than the history kept (from %d on)", resource.KindString(ks.kind), seq, oldest)
	}
	return seq + 1, nil
}

// collectLocked returns the records from seq from to the head that keep
// says the watcher wants.
func (ks *kindStore) collectLocked(from uint64, keep func(*record) bool) []*record {
	var out []*record
	for s, head := from, ks.head.Load(); s <= head; s++ {
		if r := ks.recordLocked(s); keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// tailLocked returns, oldest first, the last n records that keep says the
// watcher wants.
func (ks *kindStore) tailLocked(n int, keep func(*record) bool) []*record {
	var out []*record
	head := ks.head.Load()
	for s := head; s >= ks.oldest(head) && s > 0 && len(out) < n; s-- {
		if r := ks.recordLocked(s); keep(r) {
			out = append(out, r)
		}
	}
	slices.Reverse(out)
	return out
}
