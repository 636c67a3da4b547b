package runtime_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe/hotloop"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestMetrics_LatencyHistograms: a QController's queue wait (an item due →
// its reconcile starts), end-to-end lag (the commit → the start) and
// duration by outcome; a Controller's pass durations; a kind's delivery
// lag; the busy fraction — all to the virtual nanosecond.
func TestMetrics_LatencyHistograms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		q := &funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				time.Sleep(time.Second)
				if p.ID() == "bad" {
					return errors.New("bad item")
				}
				return nil
			}}
		c := &funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					time.Sleep(500 * time.Millisecond)
				}
			}}
		e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(c), runtimetest.WithQControllers(q))
		mustCreate(t, st, newPair(typeA, "1", 1))
		mustCreate(t, st, newPair(typeA, "2", 1))
		time.Sleep(5 * time.Second)
		synctest.Wait()

		qs := statusOf(t, e.Runtime, "q")
		assert.EqualValues(t, 2, qs.Metrics.QueueWait.Count)
		assert.Equal(t, time.Second, time.Duration(qs.Metrics.QueueWait.Sum), "the second item waited for the first")
		assert.EqualValues(t, 2, qs.Metrics.Lag.Count)
		assert.InDelta(t, float64(time.Second), float64(qs.Metrics.Lag.Sum), float64(time.Microsecond), "commit → start (inmem stamps the second create 1 ns later)")
		require.Contains(t, qs.Metrics.Duration, "ok")
		assert.EqualValues(t, 2, qs.Metrics.Duration["ok"].Count)
		assert.Equal(t, 2*time.Second, time.Duration(qs.Metrics.Duration["ok"].Sum))
		assert.NotContains(t, qs.Metrics.Duration, "error", "outcomes never seen are left out")
		assert.InDelta(t, 0.2, qs.Metrics.Busy, 0.11, "busy 2 s of the last 10 complete seconds (the first of them before the start)")

		cs := statusOf(t, e.Runtime, "c")
		ok := cs.Metrics.Duration["ok"]
		require.GreaterOrEqual(t, ok.Count, uint64(2), "the start pass and a pass for the changes")
		assert.Equal(t, time.Duration(ok.Count)*500*time.Millisecond, time.Duration(ok.Sum), "a pass lasts from its event to the next EventCh call")
		assert.Equal(t, ok.Count, cs.Metrics.QueueWait.Count, "every pass waited for its event")

		m := e.Runtime.Observe().Metrics()
		require.Len(t, m.Kinds, 1)
		assert.EqualValues(t, 2, m.Kinds[0].DeliveryLag.Count)

		mustCreate(t, st, newPair(typeA, "bad", 1))
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		qs = statusOf(t, e.Runtime, "q")
		require.Contains(t, qs.Metrics.Duration, "error")
		assert.EqualValues(t, 1, qs.Metrics.Duration["error"].Count)
		assert.EqualValues(t, 4, qs.Metrics.QueueWait.Count, "the retry was due after its backoff, and counted from then")
	})
}

// TestTrace_CausalChain: a change written by the test is routed to q, whose
// reconcile (caused by it) commits B, which is routed to c, whose pass is
// caused by B's version — read straight off the trace, in order.
func TestTrace_CausalChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		q := &funcQController{name: "q", settings: controller.QSettings{
			Inputs:  []controller.Input{in(typeA, controller.InputQPrimary)},
			Outputs: []controller.Output{out(typeB, controller.OutputExclusive)},
		}, reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
			return r.Create(ctx, newPair(typeB, p.ID(), 1))
		}}
		c := &funcController{name: "c", inputs: []controller.Input{in(typeB, controller.InputWeak)},
			run: newEventCounter(false).run}
		e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(c), runtimetest.WithQControllers(q))
		mustCreate(t, st, newPair(typeA, "1", 1))
		synctest.Wait()

		evs := e.Runtime.Observe().Trace().Snapshot()
		a1 := trace.Ref{Namespace: testNS, Type: typeA, ID: "1", Version: 1}
		b1 := trace.Ref{Namespace: testNS, Type: typeB, ID: "1", Version: 1, Writer: "q"}
		item := a1
		item.Version = 0
		b1r := trace.Ref{Namespace: testNS, Type: typeB, ID: "1", Version: 1}
		// Each controller's events in order; the two controllers run
		// concurrently, so their events interleave as the scheduler goes.
		wantQ := []trace.Record{
			{Type: trace.Route, Controller: "q", Op: "created", Resource: a1},
			{Type: trace.ReconcileStart, Controller: "q", Op: "reconcile", Resource: item, Cause: a1, Causes: 1},
			{Type: trace.Commit, Controller: "q", Op: "create", Resource: b1},
			{Type: trace.ReconcileEnd, Controller: "q", Op: "reconcile", Resource: item, Outcome: trace.OutcomeOK},
		}
		wantC := []trace.Record{
			{Type: trace.Route, Controller: "c", Op: "created", Resource: b1r},
			{Type: trace.ReconcileStart, Controller: "c", Cause: b1r, Causes: 1},
			{Type: trace.ReconcileEnd, Controller: "c", Outcome: trace.OutcomeOK},
		}
		var gotQ, gotC []trace.Record
		for _, ev := range evs {
			switch {
			case ev.Controller == "q":
				ev.Seq, ev.Time, ev.Duration = 0, time.Time{}, 0
				gotQ = append(gotQ, ev)
			case ev.Controller == "c" && (len(gotC) > 0 || ev.Type == trace.Route):
				// c's start pass (before the route) is left out.
				ev.Seq, ev.Time, ev.Duration = 0, time.Time{}, 0
				gotC = append(gotC, ev)
			}
		}
		assert.Equal(t, wantQ, gotQ)
		assert.Equal(t, wantC, gotC, "c's pass caused by q's commit of B, version 1 (its route may be traced before q's commit event: a commit is traced when the write returns)")
	})
}

// TestTrace_RetriesCrashesAndFinalizerWaits: a failing item's backoff and
// a requeue with their due times, a Controller's crash (due, attempt) and
// restart, a teardown and a destroy held up by a finalizer.
func TestTrace_RetriesCrashesAndFinalizerWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		q := &funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				if p.ID() == "requeue" {
					return controller.NewRequeueInterval(5 * time.Second)
				}
				return errors.New("item fails")
			}}
		crashes := 0
		crasher := &funcController{name: "crasher", run: func(context.Context, controller.Runtime, *zap.Logger) error {
			crashes++
			if crashes == 1 {
				return errors.New("run fails")
			}
			return nil
		}}
		w, rts := captureRuntime("w", nil, []controller.Output{out(typeB, controller.OutputExclusive)})
		e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(crasher, w), runtimetest.WithQControllers(q),
			runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, time.Minute), runtime.WithRestartBackoff(2*time.Second, time.Minute)))
		mustCreate(t, st, newPair(typeA, "fail", 1))
		mustCreate(t, st, newPair(typeA, "requeue", 1))
		rt := <-rts
		ctx := t.Context()
		require.NoError(t, rt.Create(ctx, newPair(typeB, "b", 1)))
		require.NoError(t, st.AddFinalizer(ctx, ptr(typeB, "b"), "keep"))
		ready, err := rt.Teardown(ctx, ptr(typeB, "b"))
		require.NoError(t, err)
		require.False(t, ready)
		require.True(t, state.IsPendingFinalizersError(rt.Destroy(ctx, ptr(typeB, "b"))))
		time.Sleep(3 * time.Second)
		synctest.Wait()

		evs := e.Runtime.Observe().Trace().Snapshot()
		find := func(typ trace.Type, controller, id string) trace.Record {
			t.Helper()
			for _, ev := range evs {
				if ev.Type == typ && ev.Controller == controller && (id == "" || ev.Resource.ID == id) {
					return ev
				}
			}
			require.FailNow(t, "no such event", "%v of %s %s in:\n%v", typ, controller, id, evs)
			return trace.Record{}
		}
		bo := find(trace.Backoff, "q", "fail")
		assert.Equal(t, bo.Time.Add(time.Second), bo.Due, "due after the first backoff")
		assert.Equal(t, "item fails", bo.Error)
		assert.EqualValues(t, 1, bo.Attempt, "its first consecutive failure")
		rq := find(trace.Requeue, "q", "requeue")
		assert.Equal(t, rq.Time.Add(5*time.Second), rq.Due)
		assert.Empty(t, rq.Error, "a requeue without an error")
		cr := find(trace.Crash, "crasher", "")
		assert.Equal(t, cr.Time.Add(2*time.Second), cr.Due)
		assert.EqualValues(t, 1, cr.Attempt)
		assert.Equal(t, "run fails", cr.Error)
		rs := find(trace.Restart, "crasher", "")
		assert.Equal(t, cr.Due, rs.Time)
		assert.EqualValues(t, 1, rs.Attempt)
		fw := find(trace.FinalizerWait, "w", "b")
		assert.Equal(t, "teardown", fw.Op)
		var destroyWait bool
		for _, ev := range evs {
			destroyWait = destroyWait || ev.Type == trace.FinalizerWait && ev.Op == "destroy" && ev.Resource.ID == "b"
		}
		assert.True(t, destroyWait, "a destroy refused for pending finalizers")
	})
}

// TestTrace_SizeAndOff: the trace keeps DefaultTraceSize events by
// default, WithTrace sizes it, 0 turns it off (metrics go on), and a
// negative size or a hook without a trace are refused.
func TestTrace_SizeAndOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := start(t)
		assert.Equal(t, trace.DefaultSize, e.Runtime.Observe().Trace().Size())
		assert.Equal(t, 4096, trace.DefaultSize)

		st := inmem.NewState()
		off := start(t, runtimetest.WithState(st), runtimetest.WithRuntimeOptions(runtime.WithTrace(0)),
			runtimetest.WithQControllers(&funcQController{name: "q", settings: primaryOf(typeA)}))
		assert.Nil(t, off.Runtime.Observe().Trace())
		mustCreate(t, st, newPair(typeA, "1", 1))
		synctest.Wait()
		assert.EqualValues(t, 1, statusOf(t, off.Runtime, "q").Metrics.Duration["ok"].Count, "metrics without the trace")

		small := start(t, runtimetest.WithRuntimeOptions(runtime.WithTrace(16)))
		assert.Equal(t, 16, small.Runtime.Observe().Trace().Size())
	})
	_, err := runtime.New(inmem.NewState(), nil, runtime.WithTrace(-1))
	assert.True(t, state.IsInvalidError(err), "%v", err)
	_, err = runtime.New(inmem.NewState(), nil, runtime.WithTrace(0), runtime.WithTraceHook(func([]trace.Record) {}))
	assert.True(t, state.IsInvalidError(err), "%v", err)
}

// TestTrace_HookStreamsEveryEventInOrder: the hook gets every event the
// ring recorded, in order, without a gap, up to the Runtime's stop; a hook
// that cannot keep up is told how many it lost.
func TestTrace_HookStreamsEveryEventInOrder(t *testing.T) {
	for _, size := range []int{4096, 8} {
		synctest.Test(t, func(t *testing.T) {
			st := inmem.NewState()
			var got []trace.Record
			hook := func(evs []trace.Record) { got = append(got, evs...) }
			ctx, cancel := context.WithCancel(t.Context())
			rt, err := runtime.New(st, nil, runtime.WithTrace(size), runtime.WithTraceHook(hook))
			require.NoError(t, err)
			require.NoError(t, rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA)}))
			done := make(chan error)
			go func() { done <- rt.Run(ctx) }()
			synctest.Wait()
			for i := range 20 {
				mustCreate(t, st, newPair(typeA, string(rune('a'+i)), 1))
			}
			synctest.Wait()
			cancel()
			require.NoError(t, <-done)

			last := rt.Observe().Trace().Last()
			require.Positive(t, last)
			var seen uint64
			for _, ev := range got {
				if ev.Type == trace.Lost {
					require.Equal(t, 8, size, "only a small ring loses events")
					seen += uint64(ev.Attempt)
					assert.Equal(t, seen, ev.Seq, "a lost event's Seq is the last it stands for")
					continue
				}
				seen++
				assert.Equal(t, seen, ev.Seq, "in order, no gap")
			}
			assert.Equal(t, last, seen, "every event up to the stop")
		})
	}
}

// flipper is a QController that writes out = in + 1 for each change of its
// primary input, taking 20 ms per reconcile, until stop is set.
func flipper(name string, from, to resource.Type, stop *atomic.Bool) *funcQController {
	return &funcQController{name: name, settings: controller.QSettings{
		Inputs:  []controller.Input{in(from, controller.InputQPrimary)},
		Outputs: []controller.Output{out(to, controller.OutputExclusive)},
	}, reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
		time.Sleep(20 * time.Millisecond)
		if stop.Load() {
			return nil
		}
		item, err := r.Get(ctx, p)
		if err != nil {
			return nil // gone: nothing to write
		}
		want := item.(*Pair).TypedSpec().A + 1
		return r.Modify(ctx, newPair(to, p.ID(), 0), func(o resource.Resource) error {
			o.(*Pair).TypedSpec().A = want
			return nil
		})
	}}
}

// TestHotLoop_FlappingPairIsFlaggedWithin2s: two controllers that keep
// rewriting each other's input (A → p writes B → q writes A → ...) are
// flagged within 2 s of the start of the loop: a WARN naming the
// controllers, the resources and the cycle, the loop in Metrics, the flag
// in both statuses, a HotLoop trace record; once they stop, the loop ends
// and the flags clear.
func TestHotLoop_FlappingPairIsFlaggedWithin2s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		core, logs := observer.New(zapcore.InfoLevel)
		var stop atomic.Bool
		e := start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.New(core)),
			runtimetest.WithQControllers(flipper("p", typeA, typeB, &stop), flipper("q", typeB, typeA, &stop)))
		begin := time.Now()
		mustCreate(t, st, newPair(typeA, "x", 1), state.WithCreateOwner("q")) // as if q wrote it
		for len(e.Runtime.Observe().HotLoops()) == 0 {
			require.Less(t, time.Since(begin), 2*time.Second, "not flagged within 2 s")
			time.Sleep(10 * time.Millisecond)
		}
		loops := e.Runtime.Observe().HotLoops()
		require.Len(t, loops, 1)
		assert.Equal(t, []string{"p", "q"}, loops[0].Controllers)
		assert.Contains(t, loops[0].Cycle, "p writes Bs.test.resgraph.dev(test/x)")
		assert.Contains(t, loops[0].Cycle, "q writes As.test.resgraph.dev(test/x)")
		for _, name := range []string{"p", "q"} {
			s := statusOf(t, e.Runtime, name)
			assert.Equal(t, loops[0].Cycle, s.HotLoop, "flag in %s's status", name)
			assert.EqualValues(t, 1, s.Metrics.HotLoops, "metric of %s", name)
		}
		warns := logs.FilterMessageSnippet("hot loop").FilterLevelExact(zapcore.WarnLevel).All()
		require.Len(t, warns, 1)
		fields := warns[0].ContextMap()
		assert.Equal(t, loops[0].Cycle, fields["cycle"])
		assert.Equal(t, []any{"p", "q"}, fields["controllers"])
		assert.ElementsMatch(t, []any{"Bs.test.resgraph.dev(test/x)", "As.test.resgraph.dev(test/x)"}, fields["resources"])
		var traced int
		for _, ev := range e.Runtime.Observe().Trace().Snapshot() {
			if ev.Type == trace.HotLoop && ev.Outcome == trace.OutcomeNone {
				traced++
			}
		}
		assert.Equal(t, 2, traced, "a HotLoop event per controller")

		stop.Store(true)
		time.Sleep(hotloop.DefaultClearAfter + 2*time.Second)
		assert.Empty(t, e.Runtime.Observe().HotLoops(), "ended")
		assert.Empty(t, statusOf(t, e.Runtime, "p").HotLoop)
		assert.NotEmpty(t, logs.FilterMessage("hot loop ended").All())
	})
}

// TestHotLoop_NoFalsePositiveOnRandomizedChains: G1-like randomized chains
// (four QControllers A → B → C → D → E, bursts of user writes to random
// A's at random times, up to hundreds per second) are never flagged: the
// chain has no cycle, however fast it runs.
func TestHotLoop_NoFalsePositiveOnRandomizedChains(t *testing.T) {
	for seed := range 5 {
		synctest.Test(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			st := inmem.NewState()
			core, logs := observer.New(zapcore.WarnLevel)
			var never atomic.Bool
			types := []resource.Type{typeA, typeB, typeC, typeD, typeE}
			var qs []controller.QController
			for i := range 4 {
				qs = append(qs, flipper(string(rune('p'+i)), types[i], types[i+1], &never))
			}
			e := start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.New(core)), runtimetest.WithQControllers(qs...))
			for range 3000 {
				writeA(t, st, typeA, string(rune('a'+rng.IntN(20))), rng.IntN(1000))
				time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
			}
			time.Sleep(2 * time.Second)
			assert.Empty(t, e.Runtime.Observe().HotLoops())
			assert.Empty(t, warnings(logs), "no warning")
			for _, s := range e.Runtime.Observe().Controllers() {
				assert.Zero(t, s.Metrics.HotLoops, s.Name)
			}
		})
	}
}

// writeA sets spec A of the Pair typ/id in st, creating it when absent.
func writeA(t testing.TB, st state.State, typ resource.Type, id resource.ID, a int) {
	t.Helper()
	r, err := st.Get(context.Background(), ptr(typ, id))
	if state.IsNotFoundError(err) {
		mustCreate(t, st, newPair(typ, id, a))
		return
	}
	require.NoError(t, err)
	p := r.DeepCopy().(*Pair)
	p.TypedSpec().A = a
	require.NoError(t, st.Update(context.Background(), p))
}

// TestTrace_MappedItemsNameTheirCause: the reconcile of an item that
// MapInput returned is caused by the change that the map item was for.
func TestTrace_MappedItemsNameTheirCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		q := &funcQController{name: "q", settings: controller.QSettings{Inputs: []controller.Input{
			in(typeA, controller.InputQPrimary), in(typeB, controller.InputQMapped),
		}}, mapInput: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
			return []resource.Pointer{ptr(typeA, p.ID())}, nil
		}}
		e := start(t, runtimetest.WithState(st), runtimetest.WithQControllers(q))
		mustCreate(t, st, newPair(typeB, "x", 1))
		synctest.Wait()
		b1 := trace.Ref{Namespace: testNS, Type: typeB, ID: "x", Version: 1}
		var starts []trace.Record
		for _, ev := range e.Runtime.Observe().Trace().Snapshot() {
			if ev.Type == trace.ReconcileStart {
				starts = append(starts, ev)
			}
		}
		require.Len(t, starts, 2)
		assert.Equal(t, "map", starts[0].Op)
		assert.Equal(t, b1, starts[0].Cause)
		assert.Equal(t, "reconcile", starts[1].Op)
		assert.Equal(t, typeA, starts[1].Resource.Type)
		assert.Equal(t, b1, starts[1].Cause, "caused by B's change, through MapInput")
		assert.EqualValues(t, 2, statusOf(t, e.Runtime, "q").Metrics.Lag.Count, "both have an end-to-end lag")
		var queued []trace.Record
		for _, ev := range e.Runtime.Observe().Trace().Snapshot() {
			if ev.Type == trace.Queue {
				ev.Seq, ev.Time = 0, time.Time{}
				queued = append(queued, ev)
			}
		}
		assert.Equal(t, []trace.Record{{Type: trace.Queue, Controller: "q", Op: "reconcile",
			Resource: trace.Ref{Namespace: testNS, Type: typeA, ID: "x"}, Cause: b1, Causes: 1}}, queued, "MapInput's result queued")
	})
}

// TestHotLoop_NoFalsePositiveOnW3W4Shapes: the W3 chain (four Controllers)
// and the W4 chain (four QControllers, concurrency 1 and 4), their 50
// inputs each updated 20 times a second for 3 s, so that every controller
// writes each of its outputs 20 times a second because of its input's
// changes — well above the rate — are never flagged: a chain has no cycle.
func TestHotLoop_NoFalsePositiveOnW3W4Shapes(t *testing.T) {
	for _, shape := range []string{"W3", "W4/concurrency=1", "W4/concurrency=4"} {
		t.Run(shape, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := inmem.NewState()
				core, logs := observer.New(zapcore.WarnLevel)
				opts := []runtimetest.Option{runtimetest.WithState(st), runtimetest.WithLogger(zap.New(core))}
				for i := range 4 {
					switch shape {
					case "W3":
						opts = append(opts, runtimetest.WithControllers(&chainController{in: chainTypes[i], out: chainTypes[i+1]}))
					case "W4/concurrency=1":
						opts = append(opts, runtimetest.WithQControllers(&chainQController{in: chainTypes[i], out: chainTypes[i+1], concurrency: 1}))
					default:
						opts = append(opts, runtimetest.WithQControllers(&chainQController{in: chainTypes[i], out: chainTypes[i+1], concurrency: 4}))
					}
				}
				e := start(t, opts...)
				for round := range 60 {
					for id := range 50 {
						writeA(t, st, typeA, strconv.Itoa(id), round)
					}
					time.Sleep(50 * time.Millisecond)
				}
				synctest.Wait()
				final, err := st.Get(t.Context(), ptr(typeE, "0"))
				require.NoError(t, err)
				assert.Equal(t, 59+4, specA(t, final), "the chain ran every round")
				assert.Empty(t, e.Runtime.Observe().HotLoops())
				assert.Empty(t, warnings(logs), "no warning")
			})
		})
	}
}

// TestTrace_ABurstLargerThanTheRingBetweenTwoPollsIsReadWhole: a burst of
// commits many times the ring's size, made while the poll's clock stands
// still (no tick between its first and last commit), reaches the trace
// hook whole — every commit, no Lost record: the ring wakes its reader
// when half of it was written since the last read, so a record is
// overwritten only when the reader cannot keep up.
func TestTrace_ABurstLargerThanTheRingBetweenTwoPollsIsReadWhole(t *testing.T) {
	const size, commits = 64, 200
	synctest.Test(t, func(t *testing.T) {
		var got []trace.Record
		hook := func(evs []trace.Record) { got = append(got, evs...) }
		rt := runBurst(t, commits, nil, runtime.WithTrace(size), runtime.WithTraceHook(hook))

		var seen, lost int
		for _, ev := range got {
			switch ev.Type {
			case trace.Commit:
				seen++
			case trace.Lost:
				lost += int(ev.Attempt)
			}
		}
		assert.Zero(t, lost, "records lost")
		assert.Equal(t, commits, seen, "the hook got every commit")
		assert.Zero(t, rt.Observe().Metrics().TraceMissed)
	})
}

// TestTrace_ABurstIsReadWholeWithoutAHook: the same burst with no trace
// hook (the detector alone reads the ring, in place): nothing is missed.
func TestTrace_ABurstIsReadWholeWithoutAHook(t *testing.T) {
	const size, commits = 64, 200
	synctest.Test(t, func(t *testing.T) {
		rt := runBurst(t, commits, nil, runtime.WithTrace(size))
		assert.Greater(t, rt.Observe().Trace().Last(), uint64(4*size), "the burst overran the ring")
		m := rt.Observe().Metrics()
		assert.Zero(t, m.TraceMissed)
		assert.Zero(t, m.HotLoopDropped, "the detector kept every commit")
		assert.Zero(t, m.HotLoopIncomplete)
	})
}

// TestTrace_TheDetectorsLossesAreInTheMetrics: commits the hot-loop
// detector let go of to keep its memory bounded, and the windows that
// therefore counted only part of their commits, are in the Runtime's
// Metrics (HotLoopDropped, HotLoopIncomplete) — here with a threshold of
// one commit a window (every resource committed needs a stat) and a
// burst of more distinct resources than the detector keeps stats for,
// then the clock moved past the burst's window so that it closes.
func TestTrace_TheDetectorsLossesAreInTheMetrics(t *testing.T) {
	const commits = 2100 // more than the detector's 2,048 stats
	synctest.Test(t, func(t *testing.T) {
		passWindow := func() { time.Sleep(2 * hotloop.DefaultWindow) }
		rt := runBurst(t, commits, passWindow, runtime.WithHotLoop(hotloop.Config{MinRate: 1}))
		m := rt.Observe().Metrics()
		assert.Zero(t, m.TraceMissed, "the reader read every record")
		assert.Positive(t, m.HotLoopDropped, "commits dropped by the detector")
		assert.Positive(t, m.HotLoopIncomplete, "the burst's window counted only part of its commits")
	})
}

// runBurst runs a Runtime made with opts and a copier, in a synctest
// bubble, through a burst of commits A → B made while the clock stands
// still (no poll tick), each reconcile done before the next create; then
// calls after (nil: none), lets the Runtime settle and stops it.
func runBurst(t *testing.T, commits int, after func(), opts ...runtime.Option) *runtime.Runtime {
	t.Helper()
	st := inmem.NewState()
	ctx, cancel := context.WithCancel(t.Context())
	rt, err := runtime.New(st, nil, opts...)
	require.NoError(t, err)
	require.NoError(t, rt.RegisterQController(copier()))
	done := make(chan error)
	go func() { done <- rt.Run(ctx) }()
	synctest.Wait()
	start := time.Now()
	for i := range commits {
		mustCreate(t, st, newPair(typeA, strconv.Itoa(i), 1))
		synctest.Wait() // its reconcile committed; the clock did not move
	}
	require.Equal(t, start, time.Now(), "no poll tick during the burst")
	if after != nil {
		after()
		synctest.Wait()
	}
	cancel()
	require.NoError(t, <-done)
	return rt
}

// copier is a QController that writes B(id) for each A(id).
func copier() *funcQController {
	return &funcQController{name: "copy", settings: controller.QSettings{
		Inputs:  []controller.Input{in(typeA, controller.InputQPrimary)},
		Outputs: []controller.Output{out(typeB, controller.OutputExclusive)},
	}, reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
		return r.Modify(ctx, newPair(typeB, p.ID(), 0), func(o resource.Resource) error {
			o.(*Pair).TypedSpec().A = 1
			return nil
		})
	}}
}

// TestTrace_RecordsTheReaderMissedAreCounted: records overwritten before
// the Runtime read them (here: a hook that holds the reader while the
// burst fills the ring many times over) are never missed silently — the
// hook gets a Lost record for them, and Metrics' TraceMissed counts as
// many.
func TestTrace_RecordsTheReaderMissedAreCounted(t *testing.T) {
	const size, commits = 16, 100
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var got []trace.Record
		hook := func(evs []trace.Record) {
			if got == nil {
				<-release // the first call holds the reader
			}
			got = append(got, evs...)
		}
		rt := runBurst(t, commits, func() { close(release) }, runtime.WithTrace(size), runtime.WithTraceHook(hook))

		var lost uint64
		for _, ev := range got {
			if ev.Type == trace.Lost {
				lost += uint64(ev.Attempt)
			}
		}
		assert.Positive(t, lost, "the held reader missed records")
		assert.Equal(t, lost, rt.Observe().Metrics().TraceMissed)
	})
}
