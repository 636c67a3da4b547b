package etcd_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// view is what one watch reported: the resources it holds as present,
// built from its events alone, and every event that broke the rules of
// watches (S8–S12: Created for a present resource, Updated or Destroyed for
// an absent one, an Updated whose Old is not what was held, that goes back
// in version or crosses two incarnations, an Errored event, a closed
// channel — a watch must never be cut off).
type view struct {
	name   string
	single bool // a single-resource watch: its first event may be Destroyed for an absent resource

	mu           sync.Mutex
	items        map[resource.ID]resource.Resource // guarded by mu
	problems     []string                          // guarded by mu
	events       int                               // guarded by mu
	bootstrapped bool                              // guarded by mu
	last         state.Bookmark                    // guarded by mu: of the last event
	changed      chan struct{}                     // shared by the watchers, capacity 1: signalled after each batch

	paused chan struct{} // guarded by mu: when not nil, the consumer waits until it is closed
}

func (ws *watchers) newView(name string) *view {
	return &view{name: name, items: map[resource.ID]resource.Resource{}, changed: ws.changed}
}

func (v *view) problem(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

// apply applies a batch of events.
func (v *view) apply(evs []state.Event) {
	v.mu.Lock()
	for _, ev := range evs {
		v.applyLocked(ev)
	}
	v.mu.Unlock()
	select {
	case v.changed <- struct{}{}:
	default:
	}
}

func (v *view) applyLocked(ev state.Event) {
	first := v.events == 0
	v.events++
	if ev.Bookmark != nil {
		v.last = ev.Bookmark
	}
	switch ev.Type {
	case state.Errored:
		v.problem("errored: %v", ev.Error)
		return
	case state.Bootstrapped:
		if v.bootstrapped {
			v.problem("bootstrapped twice")
		}
		v.bootstrapped = true
		return
	}
	if ev.Resource == nil {
		v.problem("%s event without a resource", ev.Type)
		return
	}
	md := ev.Resource.Metadata()
	id := md.ID()
	held := v.items[id]
	switch ev.Type {
	case state.Created:
		if held != nil {
			v.problem("Created %s v%s while holding v%s", id, md.Version(), held.Metadata().Version())
		}
		v.items[id] = ev.Resource
	case state.Updated:
		switch {
		case held == nil:
			v.problem("Updated %s v%s, never seen", id, md.Version())
		case ev.Old == nil || !ev.Old.Metadata().Version().Equal(held.Metadata().Version()):
			v.problem("Updated %s: Old is not the v%s held", id, held.Metadata().Version())
		case !md.Created().Equal(held.Metadata().Created()):
			v.problem("Updated %s across two incarnations (must be Destroyed, then Created)", id)
		case md.Version().Value() <= held.Metadata().Version().Value():
			v.problem("Updated %s goes from v%s to v%s", id, held.Metadata().Version(), md.Version())
		}
		v.items[id] = ev.Resource
	case state.Destroyed:
		if held == nil && !(v.single && first) {
			v.problem("Destroyed %s, never seen", id)
		}
		delete(v.items, id)
	}
}

// closed records that the watch's channel was closed.
func (v *view) closed() {
	v.mu.Lock()
	v.problem("the channel was closed: the watch was cut off")
	v.mu.Unlock()
}

// pause makes the consumer stop reading until resume.
func (v *view) pause() {
	v.mu.Lock()
	v.paused = make(chan struct{})
	v.mu.Unlock()
}

// resume lets a paused consumer read again.
func (v *view) resume() {
	v.mu.Lock()
	close(v.paused)
	v.paused = nil
	v.mu.Unlock()
}

// wait blocks the consumer while paused; false when ctx is done.
func (v *view) wait(ctx context.Context) bool {
	v.mu.Lock()
	paused := v.paused
	v.mu.Unlock()
	if paused == nil {
		return true
	}
	select {
	case <-paused:
		return true
	case <-ctx.Done():
		return false
	}
}

// diff describes how the view differs from want (by ID: version and
// incarnation), or returns "" when it holds exactly want.
func (v *view) diff(want map[resource.ID]resource.Resource) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(want)) {
		w, got := want[id].Metadata(), v.items[id]
		switch {
		case got == nil:
			fmt.Fprintf(&b, " %s v%s missing;", id, w.Version())
		case !got.Metadata().Version().Equal(w.Version()) || !got.Metadata().Created().Equal(w.Created()):
			fmt.Fprintf(&b, " %s v%s, want v%s;", id, got.Metadata().Version(), w.Version())
		}
	}
	for id := range v.items {
		if want[id] == nil {
			fmt.Fprintf(&b, " %s held, absent;", id)
		}
	}
	return b.String()
}

// problemList returns the problems recorded so far.
func (v *view) problemList() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.problems)
}

// lastBookmark returns the bookmark of the last event with one.
func (v *view) lastBookmark() state.Bookmark {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.last
}

// watched is a view and what the view should hold: the resources a List
// of the kind returns that the watch selects.
type watched struct {
	*view
	selects func(resource.Resource) bool
}

// watchers runs watches into views until the test ends.
type watchers struct {
	t       *testing.T
	ctx     context.Context
	wg      sync.WaitGroup
	all     []watched
	changed chan struct{} // capacity 1: some view changed
}

// newWatchers returns watchers that run until the test ends; its cleanup
// stops them and waits until their goroutines exited.
func newWatchers(t *testing.T) *watchers {
	ctx, cancel := context.WithCancel(context.Background())
	ws := &watchers{t: t, ctx: ctx, changed: make(chan struct{}, 1)}
	t.Cleanup(func() {
		cancel()
		ws.wg.Wait()
	})
	return ws
}

// kind starts a WatchKind with bootstrap contents on a channel of capacity
// capacity (1: a slow consumer) and the given options.
func (ws *watchers) kind(name string, st state.State, kind resource.Kind, capacity int, selects func(resource.Resource) bool, opts ...state.WatchKindOption) *view {
	ws.t.Helper()
	v := ws.newView(name)
	ch := make(chan state.Event, capacity)
	if err := st.WatchKind(ws.ctx, kind, ch, append([]state.WatchKindOption{state.WithBootstrapContents(true)}, opts...)...); err != nil {
		ws.t.Fatalf("%s: %v", name, err)
	}
	ws.consume(v, func() ([]state.Event, bool) {
		select {
		case ev, ok := <-ch:
			return []state.Event{ev}, ok
		case <-ws.ctx.Done():
			return nil, false
		}
	})
	ws.all = append(ws.all, watched{v, selects})
	return v
}

// aggregated starts a WatchKindAggregated with bootstrap contents.
func (ws *watchers) aggregated(name string, st state.State, kind resource.Kind) *view {
	ws.t.Helper()
	v := ws.newView(name)
	ch := make(chan []state.Event, 4)
	if err := st.WatchKindAggregated(ws.ctx, kind, ch, state.WithBootstrapContents(true)); err != nil {
		ws.t.Fatalf("%s: %v", name, err)
	}
	ws.consume(v, func() ([]state.Event, bool) {
		select {
		case b, ok := <-ch:
			return b, ok
		case <-ws.ctx.Done():
			return nil, false
		}
	})
	ws.all = append(ws.all, watched{v, func(resource.Resource) bool { return true }})
	return v
}

// single starts a Watch of one resource.
func (ws *watchers) single(name string, st state.State, ptr resource.Pointer) *view {
	ws.t.Helper()
	v := ws.newView(name)
	v.single = true
	ch := make(chan state.Event, 1)
	if err := st.Watch(ws.ctx, ptr, ch); err != nil {
		ws.t.Fatalf("%s: %v", name, err)
	}
	ws.consume(v, func() ([]state.Event, bool) {
		select {
		case ev, ok := <-ch:
			return []state.Event{ev}, ok
		case <-ws.ctx.Done():
			return nil, false
		}
	})
	ws.all = append(ws.all, watched{v, func(r resource.Resource) bool { return r.Metadata().ID() == ptr.ID() }})
	return v
}

// consume applies what next returns to v until it reports the end; a
// paused view is not read.
func (ws *watchers) consume(v *view, next func() ([]state.Event, bool)) {
	ws.wg.Go(func() {
		for {
			if !v.wait(ws.ctx) {
				return
			}
			evs, ok := next()
			if !ok {
				if ws.ctx.Err() == nil {
					v.closed()
				}
				return
			}
			v.apply(evs)
		}
	})
}

// converge waits until every view holds exactly what a List of kind in st
// returns that it selects (a linearizable read of etcd), and fails the
// test after timeout with the differences and the problems seen. It then
// checks that no view recorded a problem. It reads etcd again whenever a
// view changes: nothing may be written meanwhile.
func (ws *watchers) converge(st state.State, kind resource.Kind, timeout time.Duration) {
	ws.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		list, err := st.List(ws.ctx, kind)
		if err != nil {
			ws.t.Fatalf("list: %v", err)
		}
		var diffs []string
		for _, w := range ws.all {
			want := map[resource.ID]resource.Resource{}
			for _, r := range list.Items {
				if w.selects(r) {
					want[r.Metadata().ID()] = r
				}
			}
			if d := w.diff(want); d != "" {
				diffs = append(diffs, w.name+":"+d)
			}
		}
		if len(diffs) == 0 {
			break
		}
		select {
		case <-ws.changed:
		case <-deadline.C:
			ws.t.Fatalf("the watches never reached the state in etcd within %s:\n%s\nproblems: %v", timeout, strings.Join(diffs, "\n"), ws.problems())
		}
	}
	if p := ws.problems(); len(p) > 0 {
		ws.t.Fatalf("the watches broke the rules: %v", p)
	}
}

func (ws *watchers) problems() []string {
	var out []string
	for _, w := range ws.all {
		for _, p := range w.problemList() {
			out = append(out, w.name+": "+p)
		}
	}
	return out
}
