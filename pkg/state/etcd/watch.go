package etcd

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

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
	for _, opt := range opts {
		if opt != nil { // a nil option is no option
			opt(&o)
		}
	}
	if o.TailEvents < 0 {
		return state.NewInvalidError(p, "watch: negative tail events %d", o.TailEvents)
	}
	if o.TailEvents > 0 && o.StartFromBookmark != nil {
		return state.NewInvalidError(p, "watch: tail events and a bookmark are exclusive")
	}
	var from position
	if o.StartFromBookmark != nil {
		var err error
		if from, err = c.decodeBookmark(p, o.StartFromBookmark); err != nil {
			return err
		}
	}
	if ctx == nil {
		return state.NewInvalidError(p, "watch: nil context")
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	w := &watcher{ctx: ctx, ch: ch, id: p.ID(), wake: make(chan struct{}, 1), seen: map[resource.ID]resource.Resource{}}
	return c.startWatcher(w, p, start{tail: o.TailEvents, bookmark: o.StartFromBookmark != nil, from: from, current: o.TailEvents == 0 && o.StartFromBookmark == nil})
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

func (c *core) watchKind(ctx context.Context, kind resource.Kind, ch chan<- state.Event, aggCh chan<- []state.Event, opts []state.WatchKindOption) error {
	if err := resource.ValidateKind(kind); err != nil {
		return err
	}
	var o state.WatchKindOptions
	for _, opt := range opts {
		if opt != nil { // a nil option is no option
			opt(&o)
		}
	}
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
	var from position
	if o.StartFromBookmark != nil {
		var err error
		if from, err = c.decodeBookmark(nil, o.StartFromBookmark); err != nil {
			return err
		}
	}
	if ctx == nil {
		return state.NewInvalidError(nil, "watch %s: nil context", ks)
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	w := &watcher{
		ctx: ctx, ch: ch, aggCh: aggCh, lq: o.LabelQuery, iq: o.IDQuery,
		filtered: len(o.LabelQuery.Terms) > 0 || o.IDQuery.Regexp != nil,
		wake:     make(chan struct{}, 1), seen: map[resource.ID]resource.Resource{},
	}
	return c.startWatcher(w, kind, start{tail: o.TailEvents, bookmark: o.StartFromBookmark != nil, from: from, bootstrap: o.BootstrapContents})
}

// start is where a watch starts.
type start struct {
	tail      int      // replay the last tail changes
	bookmark  bool     // resume after from
	from      position // the bookmark's position
	bootstrap bool     // send the contents first (S9)
	current   bool     // single-resource watch: send the current state first (S8)
}

// startWatcher registers w with the feed of kind at its start position
// and runs it.
func (c *core) startWatcher(w *watcher, kind resource.Kind, st start) error {
	f, err := c.acquire(w.ctx, resource.KindOf(kind))
	if err != nil {
		return err
	}
	w.f = f
	if err := f.place(w, kind, st); err != nil {
		c.release(f)
		return err
	}
	go w.run()
	return nil
}
