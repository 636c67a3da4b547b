package runtime

import (
	"context"
	"errors"
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
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// bubbleEnv is an engine over a fresh state inside a synctest bubble.
type bubbleEnv struct {
	rt   *Runtime
	st   state.State
	stop func()
}

// inBubble runs fn in a synctest bubble with a fresh state and engine; fn
// registers its controllers (creating every channel they use inside the
// bubble) and calls env.start; the engine stops when fn returns.
func inBubble(t *testing.T, opts []Option, fn func(t *testing.T, env *bubbleEnv)) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		rt, err := New(st, zap.NewNop(), opts...)
		require.NoError(t, err)
		env := &bubbleEnv{rt: rt, st: st, stop: func() {}}
		fn(t, env)
		env.stop()
	})
}

// start runs the engine and waits until it is idle.
func (env *bubbleEnv) start(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- env.rt.Run(ctx) }()
	env.stop = func() {
		cancel()
		assert.NoError(t, <-done)
		env.stop = func() {}
	}
	synctest.Wait()
}

func TestC2_StartEventAndCoalescing(t *testing.T) {
	t.Parallel()
	inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
		st := env.st
		ec := newEventCounter(true)
		mustCreate(t, st, newPair(typeA, "0", 1))
		require.NoError(t, env.rt.RegisterController(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: ec.run}))
		env.start(t)
		assert.Equal(t, 1, ec.count(), "one event at start, existing inputs are not changes")

		// The controller is busy (waiting on the gate): five changes
		// coalesce into one event.
		for _, id := range []string{"1", "2", "3", "4", "5"} {
			mustCreate(t, st, newPair(typeA, id, 1))
		}
		synctest.Wait()
		assert.Equal(t, 0, ec.count())

		ec.gate <- struct{}{}
		synctest.Wait()
		assert.Equal(t, 1, ec.count(), "the changes made while busy coalesce into one event")

		ec.gate <- struct{}{}
		synctest.Wait()
		assert.Equal(t, 0, ec.count(), "no event without a change")

		// One change while idle: one event.
		mustCreate(t, st, newPair(typeA, "6", 1))
		synctest.Wait()
		assert.Equal(t, 1, ec.count())
		ec.gate <- struct{}{}

		// A change of a kind that is not an input: nothing.
		mustCreate(t, st, newPair(typeB, "1", 1))
		synctest.Wait()
		assert.Equal(t, 0, ec.count())
	})
}

func TestC2_QueueReconcileCoalesces(t *testing.T) {
	t.Parallel()
	inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
		ec := newEventCounter(true)
		rts := make(chan controller.Runtime, 1)
		require.NoError(t, env.rt.RegisterController(&funcController{name: "c", run: func(ctx context.Context, r controller.Runtime, l *zap.Logger) error {
			rts <- r
			return ec.run(ctx, r, l)
		}}))
		env.start(t)
		r := <-rts
		assert.Equal(t, 1, ec.count())
		r.QueueReconcile()
		r.QueueReconcile()
		r.QueueReconcile()
		ec.gate <- struct{}{}
		synctest.Wait()
		assert.Equal(t, 1, ec.count())
		ec.gate <- struct{}{}
		synctest.Wait()
		assert.Equal(t, 0, ec.count())
	})
}

func TestC2_InputWithIDFiresOnlyForThatID(t *testing.T) {
	t.Parallel()
	inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
		st := env.st
		ec := newEventCounter(false)
		require.NoError(t, env.rt.RegisterController(&funcController{name: "c", inputs: []controller.Input{inID(typeA, "x", controller.InputWeak)}, run: ec.run}))
		env.start(t)
		assert.Equal(t, 1, ec.count())
		mustCreate(t, st, newPair(typeA, "y", 1))
		synctest.Wait()
		assert.Equal(t, 0, ec.count(), "another ID does not fire")
		mustCreate(t, st, newPair(typeA, "x", 1))
		synctest.Wait()
		assert.Equal(t, 1, ec.count())
		require.NoError(t, st.Destroy(context.Background(), ptr(typeA, "x")))
		synctest.Wait()
		assert.Equal(t, 1, ec.count(), "destruction fires too")
	})
}

func TestC2_ExistingInputsWakeAtStart(t *testing.T) {
	t.Parallel()
	// A controller sees the state at its start event (it reads after it).
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		mustCreate(t, st, newPair(typeA, "pre", 7))
		rt, err := New(st, zap.NewNop())
		require.NoError(t, err)
		seen := make(chan int, 16)
		require.NoError(t, rt.RegisterController(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					l, err := r.List(ctx, kind(typeA))
					if err != nil {
						return err
					}
					seen <- len(l.Items)
				}
			}}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		synctest.Wait()
		n := 0
		for len(seen) > 0 {
			n = <-seen
		}
		assert.Equal(t, 1, n)
		cancel()
		require.NoError(t, <-done)
	})
}

// crashingController fails its first len(fail) runs with fail[i] (an error,
// or a panic when fail[i] is "panic"), recording when each run started.
type crashingController struct {
	starts chan time.Time
	fail   []string
	runs   atomic.Int32
	// resetFrom: runs from this index on call ResetRestartBackoff before
	// failing (0: never).
	resetFrom int
}

func (c *crashingController) run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	c.starts <- time.Now()
	n := int(c.runs.Add(1)) - 1
	select {
	case <-r.EventCh():
	case <-ctx.Done():
		return nil
	}
	if c.resetFrom > 0 && n >= c.resetFrom {
		r.ResetRestartBackoff()
	}
	if n < len(c.fail) {
		if c.fail[n] == "panic" {
			panic("boom")
		}
		return errors.New(c.fail[n])
	}
	<-ctx.Done()
	return nil
}

func TestC6_RestartWithBackoffAfterErrorAndPanic(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zapcore.DebugLevel)
		rt, err := New(inmem.NewState(), zap.New(core), WithRestartBackoff(time.Second, 3*time.Second))
		require.NoError(t, err)
		cc := &crashingController{starts: make(chan time.Time, 16), fail: []string{"first", "panic", "third", "fourth"}}
		require.NoError(t, rt.RegisterController(&funcController{name: "crashy", run: cc.run}))
		healthy := newEventCounter(false)
		require.NoError(t, rt.RegisterController(&funcController{name: "healthy", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: healthy.run}))

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- rt.Run(ctx) }()

		var starts []time.Duration
		for range 5 {
			starts = append(starts, (<-cc.starts).Sub(start))
		}
		// Delays: 1s, 2s, 3s (capped), 3s.
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, 6 * time.Second, 9 * time.Second}, starts)

		synctest.Wait()
		st := statusOf(t, rt, "crashy")
		assert.Equal(t, StateRunning, st.State)
		assert.EqualValues(t, 4, st.Crashes)
		assert.EqualValues(t, 4, st.Restarts)
		assert.Equal(t, "fourth", st.LastError)

		// The panic was logged with its stack.
		panics := logs.FilterMessage("controller panicked; restarting after backoff").All()
		require.Len(t, panics, 1)
		assert.Contains(t, panics[0].ContextMap()["stack"], "crashingController")

		// The other controller kept running.
		require.NoError(t, inmemCreate(rt, newPair(typeA, "1", 1)))
		synctest.Wait()
		assert.Equal(t, 2, healthy.count())

		cancel()
		require.NoError(t, <-done)
		assert.Equal(t, StateStopped, statusOf(t, rt, "crashy").State)
	})
}

func TestC6_BackoffStateIsReported(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rt, err := New(inmem.NewState(), zap.NewNop(), WithRestartBackoff(time.Minute, time.Hour))
		require.NoError(t, err)
		cc := &crashingController{starts: make(chan time.Time, 16), fail: []string{"bad"}}
		require.NoError(t, rt.RegisterController(&funcController{name: "crashy", run: cc.run}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		<-cc.starts
		synctest.Wait()
		st := statusOf(t, rt, "crashy")
		assert.Equal(t, StateBackoff, st.State)
		assert.Equal(t, time.Now().Add(time.Minute), st.BackoffUntil)
		assert.Equal(t, "bad", st.LastError)
		cancel()
		require.NoError(t, <-done, "Run returns during a backoff")
	})
}

func TestC6_ResetRestartBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rt, err := New(inmem.NewState(), zap.NewNop(), WithRestartBackoff(time.Second, time.Hour))
		require.NoError(t, err)
		cc := &crashingController{starts: make(chan time.Time, 16), fail: []string{"1", "2", "3", "4"}, resetFrom: 3}
		require.NoError(t, rt.RegisterController(&funcController{name: "c", run: cc.run}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()

		t0 := <-cc.starts
		t1 := <-cc.starts
		t2 := <-cc.starts
		assert.Equal(t, time.Second, t1.Sub(t0))
		assert.Equal(t, 2*time.Second, t2.Sub(t1))
		t3 := <-cc.starts
		assert.Equal(t, 4*time.Second, t3.Sub(t2))
		t4 := <-cc.starts
		assert.Equal(t, time.Second, t4.Sub(t3), "after ResetRestartBackoff the delay starts over")
		cancel()
		require.NoError(t, <-done)
	})
}

func TestC6_RunReturningNilIsNotRestarted(t *testing.T) {
	t.Parallel()
	inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
		rt := env.rt
		runs := atomic.Int32{}
		require.NoError(t, rt.RegisterController(&funcController{name: "c", run: func(context.Context, controller.Runtime, *zap.Logger) error {
			runs.Add(1)
			return nil
		}}))
		env.start(t)
		time.Sleep(time.Hour) // virtual time: no restart comes
		assert.EqualValues(t, 1, runs.Load())
		assert.Equal(t, StateStopped, statusOf(t, rt, "c").State)
	})
}

func statusOf(t *testing.T, rt *Runtime, name string) ControllerStatus {
	t.Helper()
	for _, st := range rt.ControllerStatuses() {
		if st.Name == name {
			return st
		}
	}
	require.FailNow(t, "no controller "+name)
	return ControllerStatus{}
}

func inmemCreate(rt *Runtime, r resource.Resource) error {
	return rt.st.Create(context.Background(), r)
}

func TestC7_UpdateInputs(t *testing.T) {
	t.Parallel()
	inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
		rt, st := env.rt, env.st
		ec := newEventCounter(false)
		rts := make(chan controller.Runtime, 1)
		require.NoError(t, rt.RegisterController(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, l *zap.Logger) error {
				rts <- r
				return ec.run(ctx, r, l)
			}}))
		env.start(t)
		r := <-rts
		assert.Equal(t, 1, ec.count())
		ctx := context.Background()

		mustCreate(t, st, newPair(typeB, "1", 1))
		synctest.Wait()
		assert.Equal(t, 0, ec.count(), "B is not an input yet")
		_, err := r.Get(ctx, ptr(typeB, "1"))
		assert.True(t, IsAccessDeniedError(err))

		require.NoError(t, r.UpdateInputs([]controller.Input{in(typeB, controller.InputWeak)}))
		synctest.Wait()
		assert.Equal(t, 1, ec.count(), "a wake-up after the swap")
		got, err := r.Get(ctx, ptr(typeB, "1"))
		require.NoError(t, err, "the new input is readable")
		assert.Equal(t, 1, specA(t, got))

		mustCreate(t, st, newPair(typeB, "2", 1))
		synctest.Wait()
		assert.Equal(t, 1, ec.count(), "events of the new input flow without a restart")
		mustCreate(t, st, newPair(typeA, "1", 1))
		synctest.Wait()
		assert.Equal(t, 1, ec.count(), "static inputs stay")

		// Replacing the dynamic inputs drops B.
		require.NoError(t, r.UpdateInputs([]controller.Input{in(typeC, controller.InputStrong)}))
		synctest.Wait()
		ec.count()
		mustCreate(t, st, newPair(typeB, "3", 1))
		synctest.Wait()
		assert.Equal(t, 0, ec.count(), "B is no longer an input")
		_, err = r.Get(ctx, ptr(typeB, "1"))
		assert.True(t, IsAccessDeniedError(err))

		// Invalid inputs are refused and change nothing.
		err = r.UpdateInputs([]controller.Input{in(typeD, controller.InputQPrimary)})
		assert.True(t, state.IsInvalidError(err))
		err = r.UpdateInputs([]controller.Input{{Namespace: testNS}})
		assert.True(t, state.IsInvalidError(err))
		mustCreate(t, st, newPair(typeC, "1", 1))
		synctest.Wait()
		assert.Equal(t, 1, ec.count(), "C is still an input")
		assert.Equal(t, 0, assertNoRestart(t, rt, "c"))
	})
}

func assertNoRestart(t *testing.T, rt *Runtime, name string) int {
	t.Helper()
	return int(statusOf(t, rt, name).Restarts)
}

func TestC8_CleanupOutputs(t *testing.T) {
	t.Parallel()
	rt, st := newEngine(t)
	c, rts := captureRuntime("c", nil, []controller.Output{out(typeB, controller.OutputExclusive)})
	require.NoError(t, rt.RegisterController(c))
	startEngine(t, rt)
	r := recvWithin(t, rts)
	ctx := context.Background()

	for _, id := range []string{"keep", "modified", "gone", "fin"} {
		require.NoError(t, r.Create(ctx, newPair(typeB, id, 1)))
	}
	mustCreate(t, st, newPair(typeB, "users", 1)) // not owned by c
	require.NoError(t, st.AddFinalizer(ctx, ptr(typeB, "fin"), "hold"))

	err := r.CleanupOutputs(ctx, kind(typeB))
	assert.True(t, state.IsInvalidError(err), "CleanupOutputs before StartTrackingOutputs")

	r.StartTrackingOutputs()
	keep, err := st.Get(ctx, ptr(typeB, "keep"))
	require.NoError(t, err)
	keep.(*Pair).TypedSpec().A = 2
	require.NoError(t, r.Update(ctx, keep))
	require.NoError(t, r.Modify(ctx, newPair(typeB, "modified", 0), func(r resource.Resource) error {
		return nil // unchanged: counts as written
	}))
	require.NoError(t, r.CleanupOutputs(ctx, kind(typeB)))

	for _, id := range []string{"keep", "modified", "users"} {
		_, err := st.Get(ctx, ptr(typeB, id))
		assert.NoError(t, err, id)
	}
	_, err = st.Get(ctx, ptr(typeB, "gone"))
	assert.True(t, state.IsNotFoundError(err), "an unwritten output is destroyed")
	fin, err := st.Get(ctx, ptr(typeB, "fin"))
	require.NoError(t, err, "an output with finalizers stays")
	assert.Equal(t, resource.PhaseTearingDown, fin.Metadata().Phase())

	// Once the finalizers are gone, the next cleanup destroys it.
	require.NoError(t, st.RemoveFinalizer(ctx, ptr(typeB, "fin"), "hold"))
	r.StartTrackingOutputs()
	require.NoError(t, r.Modify(ctx, newPair(typeB, "keep", 0), func(resource.Resource) error { return nil }))
	require.NoError(t, r.Modify(ctx, newPair(typeB, "modified", 0), func(resource.Resource) error { return nil }))
	require.NoError(t, r.CleanupOutputs(ctx, kind(typeB)))
	_, err = st.Get(ctx, ptr(typeB, "fin"))
	assert.True(t, state.IsNotFoundError(err))
	_, err = st.Get(ctx, ptr(typeB, "keep"))
	assert.NoError(t, err)

	err = r.CleanupOutputs(ctx, kind(typeA))
	assert.True(t, IsAccessDeniedError(err), "cleanup of a kind that is not an output")
}

func TestC9_DestroyReadyOnlyForOwnTearingDownOutputsWithoutFinalizers(t *testing.T) {
	t.Parallel()
	inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
		rt, st := env.rt, env.st
		ec := newEventCounter(false)
		rts := make(chan controller.Runtime, 1)
		require.NoError(t, rt.RegisterController(&funcController{
			name:    "c",
			inputs:  []controller.Input{in(typeB, controller.InputDestroyReady)},
			outputs: []controller.Output{out(typeB, controller.OutputShared)},
			run: func(ctx context.Context, r controller.Runtime, l *zap.Logger) error {
				rts <- r
				return ec.run(ctx, r, l)
			},
		}))
		require.NoError(t, rt.RegisterController(&funcController{name: "other", outputs: []controller.Output{out(typeB, controller.OutputShared)}}))
		env.start(t)
		r := <-rts
		ctx := context.Background()
		assert.Equal(t, 1, ec.count())

		require.NoError(t, r.Create(ctx, newPair(typeB, "own", 1)))
		require.NoError(t, st.AddFinalizer(ctx, ptr(typeB, "own"), "hold"))
		_, err := r.Teardown(ctx, ptr(typeB, "own"))
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, 0, ec.count(), "running or holding finalizers: not destroy-ready")

		require.NoError(t, st.RemoveFinalizer(ctx, ptr(typeB, "own"), "hold"))
		synctest.Wait()
		assert.Equal(t, 1, ec.count(), "tearing down without finalizers: destroy-ready")

		require.NoError(t, r.Destroy(ctx, ptr(typeB, "own")))
		synctest.Wait()
		assert.Equal(t, 0, ec.count(), "the destruction itself does not fire")

		// Another owner's output tearing down without finalizers: nothing.
		mustCreate(t, st, newPair(typeB, "theirs", 1), state.WithCreateOwner("other"))
		_, err = st.Teardown(ctx, ptr(typeB, "theirs"), state.WithTeardownOwner("other"))
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, 0, ec.count())
	})
}

// TestC7_UpdateInputsUnchangedDoesNotWake: a controller that calls
// UpdateInputs on every pass (the usual pattern: its dynamic inputs derive
// from what it read) is woken only when the set of inputs changes;
// otherwise every pass would wake it for another, forever.
func TestC7_UpdateInputsUnchangedDoesNotWake(t *testing.T) {
	t.Parallel()
	inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
		const passes = 100 // bounds the loop if every call woke the controller
		var events atomic.Int32
		dyn := []controller.Input{in(typeB, controller.InputWeak), inID(typeC, "x", controller.InputStrong)}
		reordered := []controller.Input{dyn[1], dyn[0], dyn[1]}
		require.NoError(t, env.rt.RegisterController(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					n := events.Add(1)
					if n > passes {
						continue
					}
					inputs := dyn
					if n%2 == 0 {
						inputs = reordered // the same set, in another order, with a duplicate
					}
					if err := r.UpdateInputs(inputs); err != nil {
						return err
					}
				}
			}}))
		env.start(t)
		assert.EqualValues(t, 2, events.Load(), "the start event, and one wake-up for the first UpdateInputs")

		mustCreate(t, env.st, newPair(typeB, "1", 1))
		synctest.Wait()
		assert.EqualValues(t, 3, events.Load(), "one event per change of a dynamic input")
		mustCreate(t, env.st, newPair(typeA, "1", 1))
		synctest.Wait()
		assert.EqualValues(t, 4, events.Load(), "one event per change of a static input")
		assert.Zero(t, statusOf(t, env.rt, "c").Restarts)
	})
}
