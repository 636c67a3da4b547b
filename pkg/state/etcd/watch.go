package etcd

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// Watch implements [state.CoreState]: the current state of the resource
// (rule S8) or the replayed changes (S11), then its changes.
func (c *core) Watch(ctx context.Context, ptr resource.Pointer, ch chan<- state.Event, opts ...state.WatchOption) error {
	p, o, err := backend.WatchArgs(ctx, ptr, ch, opts)
	if err != nil {
		return err
	}
	var from position
	if o.StartFromBookmark != nil {
		if from, err = c.decodeBookmark(p, o.StartFromBookmark); err != nil {
			return err
		}
	}
	w := &watcher{ctx: ctx, ch: ch, id: p.ID(), wake: make(chan struct{}, 1), seen: map[resource.ID]resource.Resource{}}
	return c.startWatcher(w, p, start{tail: o.TailEvents, bookmark: o.StartFromBookmark != nil, from: from, current: o.TailEvents == 0 && o.StartFromBookmark == nil})
}

// startKindWatch starts a kind watch whose arguments are valid (the Start
// of backend.KindWatches).
func (c *core) startKindWatch(ctx context.Context, kind resource.KindKey, ch chan<- state.Event, aggCh chan<- []state.Event, o state.WatchKindOptions) error {
	var from position
	if o.StartFromBookmark != nil {
		var err error
		if from, err = c.decodeBookmark(nil, o.StartFromBookmark); err != nil {
			return err
		}
	}
	w := &watcher{
		ctx: ctx, ch: ch, aggCh: aggCh, lq: o.LabelQueries, iq: o.IDQuery,
		filtered: backend.Filtered(o.LabelQueries, o.IDQuery),
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
