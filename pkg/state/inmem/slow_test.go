package inmem

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// view is what one watcher believes the state is, built from its events;
// apply fails the test on an event that contradicts it (rule S12's event
// types and per-resource order).
type view map[resource.ID]resource.Resource

func (v view) apply(t *testing.T, ev state.Event) {
	t.Helper()
	switch ev.Type {
	case state.Created:
		id := ev.Resource.Metadata().ID()
		require.NotContains(t, v, id, "Created for a resource the watcher sees")
		v[id] = ev.Resource
	case state.Updated:
		id := ev.Resource.Metadata().ID()
		seen, ok := v[id]
		require.True(t, ok, "Updated for %s the watcher does not see", id)
		require.NotNil(t, ev.Old)
		require.Equal(t, version(seen), version(ev.Old), "Old of %s is the state the watcher last saw", id)
		require.Greater(t, version(ev.Resource), version(seen), "versions of %s increase", id)
		require.True(t, resource.Equal(seen, ev.Old))
		v[id] = ev.Resource
	case state.Destroyed:
		id := ev.Resource.Metadata().ID()
		seen, ok := v[id]
		require.True(t, ok, "Destroyed for %s the watcher does not see", id)
		require.True(t, resource.Equal(seen, ev.Old), "Destroyed carries the state the watcher last saw as Old")
		require.True(t, ev.Resource.Metadata().Created().Equal(seen.Metadata().Created()) &&
			version(ev.Resource) >= version(seen), "and, as Resource, the state the resource was destroyed in")
		delete(v, id)
	case state.Bootstrapped:
	default:
		require.FailNow(t, "unexpected event", "%v %v", ev.Type, ev.Error)
	}
}

// equals reports whether the view holds exactly the resources of want
// (rule R1's equality: same version, spec and metadata).
func (v view) equals(want map[resource.ID]resource.Resource) bool {
	if len(v) != len(want) {
		return false
	}
	for id, w := range want {
		if r, ok := v[id]; !ok || !resource.Equal(r, w) {
			return false
		}
	}
	return true
}

// soleKindWatcher returns the one kind watcher of the test kind.
func soleKindWatcher(t *testing.T, c *core) *kindWatcher {
	t.Helper()
	ks := c.lookup(resource.KindOf(resource.NewKind(testNS, testType)))
	ks.mu.Lock()
	defer ks.mu.Unlock()
	require.Len(t, ks.kindWatchers, 1)
	return ks.kindWatchers[0]
}

// waitTaken waits until w has taken every change so far from the ring: it
// is then busy with them (or parked), so the changes that follow are all
// backlog.
func waitTaken(t *testing.T, c *core, w *kindWatcher) {
	t.Helper()
	ks := c.lookup(resource.KindOf(resource.NewKind(testNS, testType)))
	require.Eventually(t, func() bool {
		ks.mu.Lock()
		defer ks.mu.Unlock()
		return w.gen == nil && w.pos.Load() != spilled && w.pos.Load() > ks.seq
	}, testTimeout, pollInterval)
}

// head returns the seq of the newest change of the test kind.
func head(c *core) uint64 {
	ks := c.lookup(resource.KindOf(resource.NewKind(testNS, testType)))
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.seq
}

func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestS12_StalledWatcherGetsFinalStateInBoundedMemory stalls a watcher
// while a writer makes 200k changes over 1k resources (with creates and
// destroys). The writer must finish while the watcher is stalled, memory
// must stay bounded, and the watcher must then receive a consistent,
// coalesced stream that ends at the final state.
func TestS12_StalledWatcherGetsFinalStateInBoundedMemory(t *testing.T) {
	const (
		resources = 1000
		changes   = 200_000
		// maxGrowth bounds the heap growth while the watcher is stalled.
		// The state's own growth is its full history ring (4096 records
		// and the old versions they hold, about 1 MiB) plus the spill
		// (one entry per resource); buffering the changes instead would
		// take more than 40 MiB.
		maxGrowth = 16 << 20
	)
	c := newCore()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stored := map[resource.ID]*pair{}
	for i := range resources {
		r := newPair(fmt.Sprintf("r%04d", i), 0)
		require.NoError(t, c.Create(ctx, r))
		stored[r.Metadata().ID()] = r
	}

	ch := make(chan state.Event) // unbuffered, and not read while stalled
	require.NoError(t, c.WatchKind(ctx, testKind, ch, state.WithBootstrapContents(true)))
	seen := view{}
	for {
		ev := recv(t, ch)
		seen.apply(t, ev)
		if ev.Type == state.Bootstrapped {
			break
		}
	}
	w := soleKindWatcher(t, c)
	r0 := stored["r0000"]
	r0.TypedSpec().A = -1
	require.NoError(t, c.Update(ctx, r0))
	waitTaken(t, c, w) // now blocked sending that change
	before := heapAlloc()

	writerDone := make(chan error, 1)
	go func() {
		rng := rand.New(rand.NewPCG(7, 7))
		next := resources
		for i := range changes {
			id := fmt.Sprintf("r%04d", rng.IntN(resources))
			r, ok := stored[id]
			switch {
			case !ok:
				r = newPair(id, i)
				if err := c.Create(ctx, r); err != nil {
					writerDone <- err
					return
				}
				stored[id] = r
			case i%100 == 0:
				if err := c.Destroy(ctx, ptr(id)); err != nil {
					writerDone <- err
					return
				}
				delete(stored, id)
			default:
				r.TypedSpec().A = i
				if err := c.Update(ctx, r); err != nil {
					writerDone <- err
					return
				}
			}
			if i%1000 == 0 { // new IDs, too
				id := fmt.Sprintf("n%06d", next)
				next++
				if err := c.Create(ctx, newPair(id, i)); err != nil {
					writerDone <- err
					return
				}
			}
		}
		writerDone <- nil
	}()
	select {
	case err := <-writerDone:
		require.NoError(t, err)
	case <-time.After(5 * testTimeout):
		require.FailNow(t, "the writer blocked on the stalled watcher")
	}
	growth := int64(heapAlloc()) - int64(before)
	t.Logf("heap growth while stalled: %d KiB", growth/1024)
	assert.Less(t, growth, int64(maxGrowth), "memory bounded while a watcher is stalled")

	list, err := c.List(ctx, testKind)
	require.NoError(t, err)
	final := map[resource.ID]resource.Resource{}
	for _, r := range list.Items {
		final[r.Metadata().ID()] = r
	}

	events := 0
	for !seen.equals(final) {
		ev := recv(t, ch)
		events++
		seen.apply(t, ev)
	}
	t.Logf("%d changes reached the stalled watcher as %d events", changes, events)
	assert.Less(t, events, 20_000, "the backlog was coalesced")
}

// TestS12_CoalescedEventTypes checks each case of S12's event types on a
// label-filtered watcher whose backlog left the history.
func TestS12_CoalescedEventTypes(t *testing.T) {
	c := newCore(WithHistoryCapacity(4))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	matching := func(id string) *pair { return labeled(id, "app", "x") }
	for _, r := range []*pair{matching("blocker"), matching("n"), matching("l"), matching("d"), matching("re"), newPair("m", 0), newPair("filler", 0)} {
		require.NoError(t, c.Create(ctx, r))
	}
	ch := make(chan state.Event)
	require.NoError(t, c.WatchKind(ctx, testKind, ch, state.WithBootstrapContents(true),
		state.WatchWithLabelQuery(resource.LabelEqual("app", "x"))))
	seen := view{}
	for {
		ev := recv(t, ch)
		seen.apply(t, ev)
		if ev.Type == state.Bootstrapped {
			break
		}
	}
	require.Len(t, seen, 5)

	w := soleKindWatcher(t, c)
	update := func(id string, edit func(*pair)) uint64 {
		r, err := c.Get(ctx, ptr(id))
		require.NoError(t, err)
		edit(r.(*pair))
		require.NoError(t, c.Update(ctx, r))
		return head(c)
	}
	update("blocker", func(r *pair) { r.TypedSpec().A = 1 })
	waitTaken(t, c, w)

	// The backlog.
	for i := 1; i <= 3; i++ {
		update("n", func(r *pair) { r.TypedSpec().A = i }) // seen → updated
	}
	nSeq := head(c)
	lSeq := update("l", func(r *pair) { r.Metadata().Labels().Set("app", "y") }) // seen → stops matching
	update("d", func(r *pair) { r.TypedSpec().A = 5 })                           // seen → updated, then gone
	require.NoError(t, c.Destroy(ctx, ptr("d")))                                 //
	dSeq := head(c)
	mSeq := update("m", func(r *pair) { r.Metadata().Labels().Set("app", "x") }) // not seen → matching
	require.NoError(t, c.Create(ctx, matching("p")))                             // never seen → gone: nothing
	require.NoError(t, c.Destroy(ctx, ptr("p")))
	require.NoError(t, c.Create(ctx, newPair("q", 0)))                   // not matching → matching → not: nothing
	update("q", func(r *pair) { r.Metadata().Labels().Set("app", "x") }) //
	update("q", func(r *pair) { r.Metadata().Labels().Set("app", "z") }) //
	require.NoError(t, c.Destroy(ctx, ptr("re")))                        // seen → destroyed and created again
	reGone := head(c)
	require.NoError(t, c.Create(ctx, matching("re")))
	reSeq := head(c)
	for i := range 4 { // push all of it out of the history
		update("filler", func(r *pair) { r.TypedSpec().A = i })
	}

	type want struct {
		typ state.EventType
		id  string
		seq uint64
	}
	wants := []want{
		{state.Updated, "blocker", 0}, // the change it was stalled on
		{state.Updated, "n", nSeq},
		{state.Destroyed, "l", lSeq},
		{state.Destroyed, "d", dSeq},
		{state.Created, "m", mSeq},
		{state.Destroyed, "re", reGone},
		{state.Created, "re", reSeq},
	}
	for _, wnt := range wants {
		ev := recv(t, ch)
		if ev.Type == state.Destroyed && wnt.id == "d" {
			assert.Equal(t, 5, specA(t, ev.Resource), "a coalesced destroy carries the last stored state")
			assert.Equal(t, uint64(2), version(ev.Resource))
			assert.Equal(t, 0, specA(t, ev.Old), "and, as Old, the state the watcher saw")
		}
		seen.apply(t, ev)
		require.Equal(t, wnt.typ, ev.Type, "event for %s", wnt.id)
		require.Equal(t, wnt.id, ev.Resource.Metadata().ID())
		if wnt.seq != 0 {
			seq, err := c.lookup(resource.KindOf(resource.NewKind(testNS, testType))).decodeBookmark(nil, ev.Bookmark)
			require.NoError(t, err)
			assert.Equal(t, wnt.seq, seq, "bookmark of the newest change covered, for %s", wnt.id)
		}
	}
	assert.Equal(t, 3, specA(t, seen["n"]), "newest state wins")
	assert.Equal(t, uint64(1), version(seen["re"]), "the new life of re")

	// Nothing else was pending (no event about p or q): the next event is
	// the next change.
	update("blocker", func(r *pair) { r.TypedSpec().A = 2 })
	ev := recv(t, ch)
	assert.Equal(t, "blocker", ev.Resource.Metadata().ID())
	assert.Equal(t, 2, specA(t, ev.Resource))
}

func TestS12_SingleResourceWatchCoalesces(t *testing.T) {
	c := newCore()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newPair("a", 0)
	require.NoError(t, c.Create(ctx, r))
	ch := make(chan state.Event)
	require.NoError(t, c.Watch(ctx, ptr("a"), ch))
	seen := view{}
	seen.apply(t, recv(t, ch))

	ks := c.lookup(resource.KindOf(resource.NewKind(testNS, testType)))
	r.TypedSpec().A = 1
	require.NoError(t, c.Update(ctx, r))
	require.Eventually(t, func() bool { // the watcher took it and is blocked sending it
		ks.mu.Lock()
		defer ks.mu.Unlock()
		return len(ks.idWatchers["a"][0].queue) == 0
	}, testTimeout, pollInterval)

	const updates = 10 * idQueueLimit
	for i := 2; i <= updates; i++ {
		r.TypedSpec().A = i
		require.NoError(t, c.Update(ctx, r))
	}
	require.NoError(t, c.Destroy(ctx, ptr("a")))
	require.NoError(t, c.Create(ctx, newPair("a", -1)))
	ks.mu.Lock()
	queued := len(ks.idWatchers["a"][0].queue)
	ks.mu.Unlock()
	assert.LessOrEqual(t, queued, idQueueLimit, "bounded queue")

	events := 0
	for {
		ev := recv(t, ch)
		events++
		seen.apply(t, ev)
		if ev.Type == state.Created && specA(t, ev.Resource) == -1 {
			break
		}
	}
	assert.Less(t, events, updates/2, "coalesced")
}

// TestS12_StaggeredLaggersAgainstModel runs random changes with several
// watchers (plain, label-filtered, single-resource) that read at random
// moments through histories of 1 to 3000 changes, so that they fall behind at different
// times and share the spill. Every event must agree with the watcher's own
// view, every watcher must end at the final state, and the spill must stay
// within one generation per lagging watcher and empty out.
func TestS12_StaggeredLaggersAgainstModel(t *testing.T) {
	for seed := range uint64(9) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			staggeredLaggers(t, seed)
		})
	}
}

func staggeredLaggers(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	// Tiny histories overflow into the spill all the time; larger ones
	// make watchers that fall behind catch up by folding the ring.
	capacities := []int{1, 2, 3, 5, 8, 13, 200, 1500, 3000}
	c := newCore(WithHistoryCapacity(capacities[seed%uint64(len(capacities))]))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ks := c.store(resource.KindOf(resource.NewKind(testNS, testType)))

	type w struct {
		ch     chan state.Event
		seen   view
		filter func(resource.Resource) bool
	}
	even := func(r resource.Resource) bool { v, _ := r.Metadata().Labels().Get("even"); return v == "yes" }
	all := func(resource.Resource) bool { return true }
	only := func(id string) func(resource.Resource) bool {
		return func(r resource.Resource) bool { return r.Metadata().ID() == id }
	}
	var ws []*w
	add := func(filter func(resource.Resource) bool, start func(chan state.Event) error) {
		x := &w{ch: make(chan state.Event, 2), seen: view{}, filter: filter}
		require.NoError(t, start(x.ch))
		ws = append(ws, x)
	}
	for range 3 {
		add(all, func(ch chan state.Event) error { return c.WatchKind(ctx, testKind, ch) })
	}
	add(even, func(ch chan state.Event) error {
		return c.WatchKind(ctx, testKind, ch, state.WatchWithLabelQuery(resource.LabelEqual("even", "yes")))
	})
	for _, id := range []string{"r0", "r1"} {
		add(only(id), func(ch chan state.Event) error { return c.Watch(ctx, ptr(id), ch) })
	}
	// The single-resource watches start with a Destroyed for the absent
	// resource; it carries only the pointer.
	for _, x := range ws[4:] {
		ev := recv(t, x.ch)
		require.Equal(t, state.Destroyed, ev.Type)
	}

	model := map[resource.ID]resource.Resource{}
	for step := range 3000 {
		id := fmt.Sprintf("r%d", rng.IntN(12))
		cur := model[id]
		switch {
		case cur == nil:
			r := newPair(id, step)
			if rng.IntN(2) == 0 {
				r.Metadata().Labels().Set("even", "yes")
			}
			require.NoError(t, c.Create(ctx, r))
			model[id] = r.DeepCopy()
		case rng.IntN(6) == 0:
			require.NoError(t, c.Destroy(ctx, ptr(id)))
			delete(model, id)
		default:
			r := cur.DeepCopy().(*pair)
			r.TypedSpec().A = step
			if rng.IntN(3) == 0 {
				if even(r) {
					r.Metadata().Labels().Delete("even")
				} else {
					r.Metadata().Labels().Set("even", "yes")
				}
			}
			require.NoError(t, c.Update(ctx, r))
			model[id] = r.DeepCopy()
		}
		for _, x := range ws {
			for range rng.IntN(3) {
				select {
				case ev := <-x.ch:
					x.seen.apply(t, ev)
				default:
				}
			}
		}
		if step%50 == 0 {
			ks.mu.Lock()
			gens := len(ks.spill)
			ks.mu.Unlock()
			require.LessOrEqual(t, gens, 4, "at most one spill generation per kind watcher")
		}
	}
	for _, x := range ws {
		want := map[resource.ID]resource.Resource{}
		for id, r := range model {
			if x.filter(r) {
				want[id] = r
			}
		}
		for !x.seen.equals(want) {
			ev := recv(t, x.ch)
			x.seen.apply(t, ev)
		}
	}
	// Events may still be in flight whose net effect is nothing (a
	// resource created and destroyed again); drain them until every
	// watcher has caught up.
	require.Eventually(t, func() bool {
		for _, x := range ws {
			for drained := false; !drained; {
				select {
				case ev := <-x.ch:
					x.seen.apply(t, ev)
				default:
					drained = true
				}
			}
		}
		ks.mu.Lock()
		defer ks.mu.Unlock()
		for _, iws := range ks.idWatchers {
			for _, iw := range iws {
				if !iw.parked {
					return false
				}
			}
		}
		for _, x := range ws {
			if len(x.ch) > 0 {
				return false
			}
		}
		// A kind watcher parks only once it has delivered everything.
		for _, kw := range ks.kindWatchers {
			if ks.parking == nil || !slices.Contains(ks.parking.members, kw) {
				return false
			}
		}
		return len(ks.spill) == 0
	}, testTimeout, pollInterval, "caught-up watchers leave the spill and park")
	for _, x := range ws {
		require.Empty(t, x.ch)
		want := map[resource.ID]resource.Resource{}
		for id, r := range model {
			if x.filter(r) {
				want[id] = r
			}
		}
		require.True(t, x.seen.equals(want))
	}
}

// TestS12_FarBehindWatcherCatchesUpCoalesced stalls a watcher while its
// backlog grows past the kind's lag limit: within the history (no spill)
// and past it (spill, then ring). It must catch up with coalesced events,
// not one event per change, and end at the final state.
func TestS12_FarBehindWatcherCatchesUpCoalesced(t *testing.T) {
	const resources = 10
	for _, changes := range []int{3000, 6000} {
		t.Run(fmt.Sprint(changes), func(t *testing.T) {
			c := newCore(WithHistoryCapacity(4096))
			ks := c.store(resource.KindOf(resource.NewKind(testNS, testType)))
			require.Equal(t, maxLag, ks.lagLimit)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := make(chan state.Event)
			require.NoError(t, c.WatchKind(ctx, testKind, ch))
			w := soleKindWatcher(t, c)
			require.NoError(t, c.Create(ctx, newPair("blocker", 0)))
			waitTaken(t, c, w) // blocked sending Created(blocker)

			rs := make([]*pair, resources)
			for i := range rs {
				rs[i] = newPair(fmt.Sprintf("r%d", i), 0)
				require.NoError(t, c.Create(ctx, rs[i]))
			}
			for i := range changes {
				r := rs[i%resources]
				r.TypedSpec().A = i
				require.NoError(t, c.Update(ctx, r))
			}
			final := map[resource.ID]resource.Resource{}
			list, err := c.List(ctx, testKind)
			require.NoError(t, err)
			for _, r := range list.Items {
				final[r.Metadata().ID()] = r
			}
			seen := view{}
			events := 0
			for !seen.equals(final) {
				seen.apply(t, recv(t, ch))
				events++
			}
			// The blocked event, one coalesced event per resource for
			// the spill and one for the ring, and less than half the lag
			// limit delivered change by change.
			assert.LessOrEqual(t, events, 1+2*resources+maxLag/2, "%d changes", changes)
		})
	}
}
