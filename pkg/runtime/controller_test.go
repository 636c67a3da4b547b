package runtime_test

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
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// The Controller rules C2–C9 are tested in conformance; these tests check
// what the runtime documents beyond them: QueueReconcile, the restart
// backoff's exact delays, the states a restarting controller reports, and
// UpdateInputs' access scope, validation and wake-ups.

// TestQueueReconcileCoalesces: QueueReconcile queues a ReconcileEvent that
// coalesces with the ones already pending.
func TestQueueReconcileCoalesces(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ec := newEventCounter(true)
		rts := make(chan controller.Runtime, 1)
		start(t, runtimetest.WithControllers(&funcController{name: "c", run: func(ctx context.Context, r controller.Runtime, l *zap.Logger) error {
			rts <- r
			return ec.run(ctx, r, l)
		}}))
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

// TestRestartBackoff_DoublesAndCaps: a Controller whose Run fails or
// panics restarts after the initial delay, twice as long each time, capped
// at the max; its status counts the crashes and restarts, the panic is
// logged with its stack, and the other controllers keep running.
func TestRestartBackoff_DoublesAndCaps(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zapcore.DebugLevel)
		cc := &crashingController{starts: make(chan time.Time, 16), fail: []string{"first", "panic", "third", "fourth"}}
		healthy := newEventCounter(false)
		begin := time.Now()
		e := start(t, runtimetest.WithLogger(zap.New(core)), runtimetest.WithRuntimeOptions(runtime.WithRestartBackoff(time.Second, 3*time.Second)),
			runtimetest.WithControllers(&funcController{name: "crashy", run: cc.run},
				&funcController{name: "healthy", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: healthy.run}))

		var starts []time.Duration
		for range 5 {
			starts = append(starts, (<-cc.starts).Sub(begin))
		}
		// Delays: 1s, 2s, 3s (capped), 3s.
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, 6 * time.Second, 9 * time.Second}, starts)

		synctest.Wait()
		st := statusOf(t, e.Runtime, "crashy")
		assert.Equal(t, observe.LifecycleRunning, st.Lifecycle)
		assert.Equal(t, begin.Add(9*time.Second), st.Since, "running since its last restart")
		assert.EqualValues(t, 4, st.Metrics.Crashes)
		assert.EqualValues(t, 4, st.Metrics.Restarts)
		assert.Equal(t, "fourth", st.LastError)

		// The panic was logged with its stack.
		panics := logs.FilterMessage("controller panicked; restarting after backoff").All()
		require.Len(t, panics, 1)
		assert.Contains(t, panics[0].ContextMap()["stack"], "crashingController")

		// The other controller kept running.
		mustCreate(t, e.State, newPair(typeA, "1", 1))
		synctest.Wait()
		assert.Equal(t, 2, healthy.count())

		require.NoError(t, e.Stop())
		assert.Equal(t, observe.LifecycleStopped, statusOf(t, e.Runtime, "crashy").Lifecycle)
	})
}

// TestStatus_RestartBackoffIsReported: a Controller waiting out its restart
// backoff reports the backoff state, when it restarts, and its last error;
// Run returns during a backoff.
func TestStatus_RestartBackoffIsReported(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cc := &crashingController{starts: make(chan time.Time, 16), fail: []string{"bad"}}
		e := start(t, runtimetest.WithRuntimeOptions(runtime.WithRestartBackoff(time.Minute, time.Hour)),
			runtimetest.WithControllers(&funcController{name: "crashy", run: cc.run}))
		<-cc.starts
		synctest.Wait()
		st := statusOf(t, e.Runtime, "crashy")
		assert.Equal(t, observe.LifecycleBackoff, st.Lifecycle)
		assert.Equal(t, time.Now().Add(time.Minute), st.BackoffUntil)
		assert.Equal(t, "bad", st.LastError)
		require.NoError(t, e.Stop(), "Run returns during a backoff")
	})
}

// TestRestartBackoff_ResetStartsOver: after ResetRestartBackoff, the next
// restart waits the initial delay again.
func TestRestartBackoff_ResetStartsOver(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cc := &crashingController{starts: make(chan time.Time, 16), fail: []string{"1", "2", "3", "4"}, resetFrom: 3}
		start(t, runtimetest.WithRuntimeOptions(runtime.WithRestartBackoff(time.Second, time.Hour)),
			runtimetest.WithControllers(&funcController{name: "c", run: cc.run}))

		t0 := <-cc.starts
		t1 := <-cc.starts
		t2 := <-cc.starts
		assert.Equal(t, time.Second, t1.Sub(t0))
		assert.Equal(t, 2*time.Second, t2.Sub(t1))
		t3 := <-cc.starts
		assert.Equal(t, 4*time.Second, t3.Sub(t2))
		t4 := <-cc.starts
		assert.Equal(t, time.Second, t4.Sub(t3), "after ResetRestartBackoff the delay starts over")
	})
}

// TestRunReturningNilEndsTheController: a Run that returns nil before the
// Runtime stops is not restarted; the controller is stopped.
func TestRunReturningNilEndsTheController(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		runs := atomic.Int32{}
		e := start(t, runtimetest.WithControllers(&funcController{name: "c", run: func(context.Context, controller.Runtime, *zap.Logger) error {
			runs.Add(1)
			return nil
		}}))
		time.Sleep(time.Hour) // virtual time: no restart comes
		assert.EqualValues(t, 1, runs.Load())
		assert.Equal(t, observe.LifecycleStopped, statusOf(t, e.Runtime, "c").Lifecycle)
	})
}

// TestUpdateInputs_SwapsTheAccessScopeAndRefusesBadInputs: UpdateInputs
// makes the new inputs readable and the replaced ones unreadable at once,
// wakes the controller once for the swap, keeps the declared inputs, and
// refuses inputs a Controller may not declare, changing nothing.
func TestUpdateInputs_SwapsTheAccessScopeAndRefusesBadInputs(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ec := newEventCounter(false)
		rts := make(chan controller.Runtime, 1)
		e := start(t, runtimetest.WithControllers(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, l *zap.Logger) error {
				rts <- r
				return ec.run(ctx, r, l)
			}}))
		st := e.State
		r := <-rts
		assert.Equal(t, 1, ec.count())
		ctx := context.Background()

		mustCreate(t, st, newPair(typeB, "1", 1))
		synctest.Wait()
		assert.Equal(t, 0, ec.count(), "B is not an input yet")
		_, err := r.Get(ctx, ptr(typeB, "1"))
		assert.True(t, controller.IsAccessDeniedError(err))

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
		assert.True(t, controller.IsAccessDeniedError(err))

		// Invalid inputs are refused and change nothing.
		err = r.UpdateInputs([]controller.Input{in(typeD, controller.InputQPrimary)})
		assert.True(t, state.IsInvalidError(err))
		err = r.UpdateInputs([]controller.Input{{Namespace: testNS}})
		assert.True(t, state.IsInvalidError(err))
		mustCreate(t, st, newPair(typeC, "1", 1))
		synctest.Wait()
		assert.Equal(t, 1, ec.count(), "C is still an input")
		assert.Zero(t, statusOf(t, e.Runtime, "c").Metrics.Restarts)
	})
}

// TestUpdateInputs_AnEqualSetWakesNobody: a controller that calls
// UpdateInputs on every pass (the usual pattern: its dynamic inputs derive
// from what it read) is woken exactly once for the first call and then
// only by changes, whatever the order and duplicates of the set it passes;
// otherwise every pass would wake it for another, forever.
func TestUpdateInputs_AnEqualSetWakesNobody(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const passes = 100 // bounds the loop if every call woke the controller
		var events atomic.Int32
		dyn := []controller.Input{in(typeB, controller.InputWeak), inID(typeC, "x", controller.InputStrong)}
		reordered := []controller.Input{dyn[1], dyn[0], dyn[1]}
		e := start(t, runtimetest.WithControllers(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
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
		assert.EqualValues(t, 2, events.Load(), "the start event, and one wake-up for the first UpdateInputs")

		mustCreate(t, e.State, newPair(typeB, "1", 1))
		synctest.Wait()
		assert.EqualValues(t, 3, events.Load(), "one event per change of a dynamic input")
		mustCreate(t, e.State, newPair(typeA, "1", 1))
		synctest.Wait()
		assert.EqualValues(t, 4, events.Load(), "one event per change of a static input")
		assert.Zero(t, statusOf(t, e.Runtime, "c").Metrics.Restarts)
	})
}
