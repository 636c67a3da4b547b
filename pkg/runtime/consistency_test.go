package runtime_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// The consistency tests run a QController whose cached input kind is fed
// by a slow watch (gatedState holds its batches) while the test writes the
// kind behind its back, and check what "Consistent reads" in the package
// doc promises: a read reflects the revision it reports exactly, that
// revision is at or after the change that queued the item and after the
// controller's own last write, and a resource destroyed before the change
// that woke the controller is never read as existing.

// gatedState is an inmem state whose kind watches of the gated types are
// slow: each batch waits until the gate is open or a token on release lets
// it through. It forwards the optional interfaces of the state.
type gatedState struct {
	forwardingState
	gated   map[resource.Type]bool
	release chan struct{} // one token lets one batch through

	mu   sync.Mutex
	open chan struct{} // closed while the gate is open
}

func newGatedState(types ...resource.Type) *gatedState {
	g := &gatedState{forwardingState: forwardingState{inmem.NewState()}, gated: map[resource.Type]bool{}, release: make(chan struct{}, 1024), open: make(chan struct{})}
	for _, typ := range types {
		g.gated[typ] = true
	}
	close(g.open)
	return g
}

// hold closes the gate: batches wait for tokens.
func (g *gatedState) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

// unhold opens the gate: every batch passes.
func (g *gatedState) unhold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

func (g *gatedState) gate() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// let lets n more batches through a closed gate.
func (g *gatedState) let(n int) {
	for range n {
		select {
		case g.release <- struct{}{}:
		default:
		}
	}
}

func (g *gatedState) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if !g.gated[k.Type()] {
		return g.State.WatchKindAggregated(ctx, k, ch, opts...)
	}
	inner := make(chan []state.Event, 1)
	if err := g.State.WatchKindAggregated(ctx, k, inner, opts...); err != nil {
		return err
	}
	go func() {
		for {
			var b []state.Event
			select {
			case b = <-inner:
			case <-ctx.Done():
				return
			}
			select {
			case <-g.gate():
			case <-g.release:
			case <-ctx.Done():
				return
			}
			select {
			case ch <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
}

// revision returns st's newest revision.
func revision(t testing.TB, st state.State) uint64 {
	t.Helper()
	rev, err := st.(state.RevisionReporter).Revision(context.Background())
	require.NoError(t, err)
	return rev
}

// kindRevision returns the revision of the newest change of typ.
func kindRevision(t testing.TB, st state.State, typ resource.Type) uint64 {
	t.Helper()
	last, _, err := st.(state.RevisionReporter).KindRevision(context.Background(), kind(typ))
	require.NoError(t, err)
	return last
}

// readerSettings are the settings of the reading QController: triggers
// (typeA) are its primary input; typeB, the cached kind the test writes, a
// mapped input (mapped to nothing); typeC its own output, cached too and
// watched through a mapped input, so that its cache lags its writes.
func readerSettings() controller.QSettings {
	return controller.QSettings{
		Inputs: []controller.Input{
			in(typeA, controller.InputQPrimary),
			in(typeB, controller.InputQMapped),
			in(typeC, controller.InputQMapped),
		},
		Outputs: []controller.Output{out(typeC, controller.OutputExclusive)},
	}
}

// TestConsistentReads_DestroyedThenReadAsExisting: a resource of a cached
// kind destroyed before the change that queues an item is not found by the
// item's Reconcile, although the kind's watch has not delivered the
// destroy yet; the controller reads its own write of a cached kind whose
// watch is held; and every read says which revision it reflects.
func TestConsistentReads_DestroyedThenReadAsExisting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newGatedState(typeB, typeC)
		type seen struct {
			victimErr        error
			victimRev        uint64
			own              int
			ownRev, writeRev uint64
		}
		results := make(chan seen, 1)
		ctrl := &funcQController{
			name:     "reader",
			settings: readerSettings(),
			reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
				if p.ID() != "trigger" {
					return nil
				}
				var s seen
				_, s.victimErr = r.Get(ctx, ptr(typeB, "victim"), state.WithGetRevision(&s.victimRev))
				s.writeRev = revision(t, st)
				if err := r.Modify(ctx, newPair(typeC, "own", 0), func(res resource.Resource) error {
					res.(*Pair).TypedSpec().A = 7
					return nil
				}); err != nil {
					return err
				}
				own, err := r.Get(ctx, ptr(typeC, "own"), state.WithGetRevision(&s.ownRev))
				if err == nil {
					s.own = specA(t, own)
				}
				results <- s // once: the trigger is reconciled once
				return nil
			},
		}
		e := start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl),
			runtimetest.WithRuntimeOptions(runtime.WithCachedResource(testNS, typeB), runtime.WithCachedResource(testNS, typeC)))
		mustCreate(t, st, newPair(typeB, "victim", 1))
		runtimetest.Settle(t, e.Runtime) // the cache of typeB holds the victim

		st.hold()
		require.NoError(t, st.Destroy(context.Background(), ptr(typeB, "victim")))
		destroyed := revision(t, st)
		mustCreate(t, st, newPair(typeA, "trigger", 0))
		var s seen
		select {
		case s = <-results:
		case <-time.After(time.Minute): // virtual time: fails instead of hanging
			require.FailNow(t, "the trigger was not reconciled")
		}

		assert.True(t, state.IsNotFoundError(s.victimErr), "destroyed before the trigger, read as existing: %v", s.victimErr)
		assert.GreaterOrEqual(t, s.victimRev, destroyed, "the read reflects the state after the destroy")
		assert.Equal(t, 7, s.own, "the controller reads its own write")
		assert.Greater(t, s.ownRev, s.writeRev, "the read reflects the state after the write")
		st.unhold()
		runtimetest.Settle(t, e.Runtime)
	})
}

// yModel is the test's record of the kind it writes (typeB): its contents
// (ID → spec A) after each of its changes, by the change's revision.
type yModel struct {
	mu    sync.Mutex
	revs  []uint64
	snaps []map[resource.ID]int
}

func (m *yModel) record(rev uint64, snap map[resource.ID]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.revs = append(m.revs, rev)
	m.snaps = append(m.snaps, maps.Clone(snap))
}

// at returns the contents of the kind in the state at revision rev.
func (m *yModel) at(rev uint64) map[resource.ID]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, found := slices.BinarySearch(m.revs, rev)
	if !found {
		i--
	}
	if i < 0 {
		return map[resource.ID]int{}
	}
	return m.snaps[i]
}

// TestConsistentReads_RandomSchedules: the test writes a cached kind
// (creates, updates, destroys) and queues triggers, while the kind's watch
// delivers its batches on a random schedule (held, let through one by one,
// or open) and the controller writes its own cached output. In every
// Reconcile of a trigger, each read of the kind (a List and a Get per ID)
// must report a revision at or after the trigger's creation and after the
// controller's own last write, and hold exactly the kind's contents at
// that revision; the controller reads its own write. Fixed seeds, under
// -race in CI.
func TestConsistentReads_RandomSchedules(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { randomSchedule(t, seed) })
		})
	}
}

// randomSchedule is one run of TestConsistentReads_RandomSchedules.
//
// It is long because it is one story: the model, the controller's checks,
// and the writer's schedule share their state.
func randomSchedule(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x13))
	st := newGatedState(typeB, typeC)
	model := &yModel{}
	var (
		mu         sync.Mutex
		violations []string
		checked    int
	)
	// fail records a violation; the caller holds mu.
	fail := func(format string, args ...any) {
		violations = append(violations, fmt.Sprintf(format, args...))
	}
	const ids = 4
	// A read of the kind is checked against the model once the run is
	// over: the model records a change after the change returned, and
	// the controller may read it before that.
	type read struct {
		what       string
		trig       int
		floor, rev uint64
		got        map[resource.ID]int
		only       resource.ID // a Get: the one ID read
	}
	var reads []read
	check := func(what string, trig int, floor, rev uint64, got map[resource.ID]int, only resource.ID) {
		mu.Lock()
		reads = append(reads, read{what: what, trig: trig, floor: floor, rev: rev, got: got, only: only})
		mu.Unlock()
	}
	verify := func(r read) {
		if r.rev < r.floor {
			fail("trigger %d: %s reflects revision %d, before %d", r.trig, r.what, r.rev, r.floor)
		}
		want := model.at(r.rev)
		if r.only != "" {
			w, wok := want[r.only]
			g, gok := r.got[r.only]
			if wok != gok || w != g {
				fail("trigger %d: %s at revision %d: got %v (present %v), the state had %v (present %v)", r.trig, r.what, r.rev, g, gok, w, wok)
			}
			return
		}
		if !maps.Equal(want, r.got) {
			fail("trigger %d: %s at revision %d: got %v, the state had %v", r.trig, r.what, r.rev, r.got, want)
		}
	}
	ctrl := &funcQController{
		name:     "reader",
		settings: readerSettings(),
		reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
			trig, err := r.Get(ctx, p)
			if err != nil {
				return err
			}
			k := specA(t, trig)
			before := uint64(trig.(*Pair).TypedSpec().B) // revision before the trigger was created
			// The controller's own write, read back at once.
			wrote := revision(t, st)
			own := newPair(typeC, p.ID(), 0)
			if err := r.Modify(ctx, own, func(res resource.Resource) error {
				res.(*Pair).TypedSpec().A = k
				return nil
			}); err != nil {
				return err
			}
			var rev uint64
			back, err := r.Get(ctx, own.Metadata(), state.WithGetRevision(&rev), state.WithReadOnlyGet())
			mu.Lock()
			switch {
			case err != nil:
				fail("trigger %d: own write not read back: %v", k, err)
			case specA(t, back) != k || rev <= wrote:
				fail("trigger %d: own write read back as %d at revision %d (written after %d)", k, specA(t, back), rev, wrote)
			}
			mu.Unlock()
			floor := max(before+1, wrote+1)
			// The kind the test writes: one List, and a Get per ID.
			l, err := r.List(ctx, kind(typeB), state.WithListRevision(&rev))
			if err != nil {
				return err
			}
			got := map[resource.ID]int{}
			for _, res := range l.Items {
				got[res.Metadata().ID()] = specA(t, res)
			}
			check("List", k, floor, rev, got, "")
			for i := range ids {
				id := fmt.Sprintf("y%d", i)
				res, err := r.Get(ctx, ptr(typeB, id), state.WithGetRevision(&rev))
				got := map[resource.ID]int{}
				switch {
				case err == nil:
					got[id] = specA(t, res)
				case !state.IsNotFoundError(err):
					return err
				}
				check("Get "+id, k, floor, rev, got, id)
			}
			mu.Lock()
			checked++
			mu.Unlock()
			return nil
		},
	}
	e := start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl),
		runtimetest.WithRuntimeOptions(runtime.WithCachedResource(testNS, typeB), runtime.WithCachedResource(testNS, typeC)))

	ctx := context.Background()
	contents := map[resource.ID]int{}
	triggers := 0
	for step := range 120 {
		switch rng.IntN(6) {
		case 0:
			st.hold()
		case 1:
			st.unhold()
		case 2:
			st.let(1 + rng.IntN(3))
		case 3:
			before := revision(t, st)
			trig := newPair(typeA, fmt.Sprintf("t%d", triggers), triggers)
			trig.TypedSpec().B = int(before)
			mustCreate(t, st, trig)
			triggers++
		default:
			id := fmt.Sprintf("y%d", rng.IntN(ids))
			if _, ok := contents[id]; ok && rng.IntN(3) == 0 {
				require.NoError(t, st.Destroy(ctx, ptr(typeB, id)))
				delete(contents, id)
			} else {
				require.NoError(t, st.Modify(ctx, newPair(typeB, id, 0), func(r resource.Resource) error {
					r.(*Pair).TypedSpec().A = step
					return nil
				}))
				contents[id] = step
			}
			model.record(kindRevision(t, st, typeB), contents)
		}
		if rng.IntN(3) == 0 {
			synctest.Wait() // let the Runtime run before the next step
		}
	}
	st.unhold()
	runtimetest.Settle(t, e.Runtime)
	mu.Lock()
	defer mu.Unlock()
	for _, r := range reads {
		verify(r)
	}
	assert.Empty(t, violations)
	assert.Equal(t, triggers, checked, "every trigger was reconciled and checked once")
}

// TestConsistentReads_ControllerWokenByAnotherKind: a Controller woken by
// a change of one kind (uncached) reads a cached kind whose watch is held
// behind a destroy made before that change: it does not read the
// destroyed resource as existing, and the read reports a revision at or
// after the destroy.
func TestConsistentReads_ControllerWokenByAnotherKind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newGatedState(typeB)
		type seen struct {
			trigger bool
			err     error
			rev     uint64
		}
		results := make(chan seen, 16)
		c := &funcController{
			name:   "reader",
			inputs: []controller.Input{in(typeA, controller.InputWeak), in(typeB, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					var s seen
					_, err := r.Get(ctx, ptr(typeA, "trigger"))
					s.trigger = err == nil
					_, s.err = r.Get(ctx, ptr(typeB, "victim"), state.WithGetRevision(&s.rev))
					results <- s
				}
			},
		}
		e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(c),
			runtimetest.WithRuntimeOptions(runtime.WithCachedResource(testNS, typeB)))
		mustCreate(t, st, newPair(typeB, "victim", 1))
		runtimetest.Settle(t, e.Runtime) // the cache of typeB holds the victim
		for len(results) > 0 {
			<-results
		}

		st.hold()
		require.NoError(t, st.Destroy(context.Background(), ptr(typeB, "victim")))
		destroyed := revision(t, st)
		mustCreate(t, st, newPair(typeA, "trigger", 0))
		var s seen
		for !s.trigger { // the pass woken by the trigger
			select {
			case s = <-results:
			case <-time.After(time.Minute): // virtual time
				require.FailNow(t, "the controller was not woken by the trigger")
			}
		}
		assert.True(t, state.IsNotFoundError(s.err), "destroyed before the change that woke it, read as existing: %v", s.err)
		assert.GreaterOrEqual(t, s.rev, destroyed)
		st.unhold()
		runtimetest.Settle(t, e.Runtime)
	})
}
