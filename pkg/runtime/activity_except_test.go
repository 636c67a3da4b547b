package runtime_test

import (
	"context"
	"sync/atomic"
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
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestSettleExceptLeavesOutHeldControllers: a controller held in a pass
// (on a test's gate) keeps Settle waiting; Except naming it
// waits for everything else only — every change routed, the other
// controllers done — and no less.
func TestSettleExceptLeavesOutHeldControllers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		held := newEventCounter(true)
		e := start(t, runtimetest.WithControllers(&funcController{
			name: "held", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: held.run,
		}, copyController("ab", typeA, typeB))) // held waits on its gate in its start pass
		rt, st := e.Runtime, e.State

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		a, err := idleOrNot(ctx, rt)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "a held controller is busy")
		assert.Contains(t, a.String(), "controller held: in a reconcile pass")

		mustCreate(t, st, newPair(typeA, "x", 7))
		ctx, cancel = context.WithTimeout(t.Context(), time.Second)
		a, err = idleOrNot(ctx, rt, "held")
		cancel()
		require.NoError(t, err, "idle but for the held controller: %s", a)
		b, err := st.Get(t.Context(), ptr(typeB, "x"))
		require.NoError(t, err, "the other controller is done when the wait with Except returns")
		assert.Equal(t, 7, b.(*Pair).TypedSpec().A)
		assert.False(t, a.Idle(), "the observe.Activity returned shows the held controller as it is")

		held.gate <- struct{}{} // the start pass
		held.gate <- struct{}{} // the pass for x
		waitIdle(t, rt)
	})
}

// TestSettleWaitsForAQControllerToStart: a QController registered
// during Run on a kind that is watched already lists the existing
// resources into its queue on its own goroutine; Settle called right
// after the registration returns only once they are reconciled (a
// QController is busy until it started and its queue is filled). Before
// Run, a Runtime with a QController is not idle.
func TestSettleWaitsForAQControllerToStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reconciles atomic.Int32
		q := func(name string) *funcQController {
			return &funcQController{
				name:     name,
				settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary)}},
				reconcile: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
					reconciles.Add(1)
					return nil
				},
			}
		}
		unstarted, err := runtime.New(inmem.NewState(), zap.NewNop())
		require.NoError(t, err)
		require.NoError(t, unstarted.RegisterQController(q("first")))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		a, err := idleOrNot(ctx, unstarted)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "not started: not idle")
		assert.Contains(t, a.String(), "controller first: starting")

		st := inmem.NewState()
		for _, id := range []resource.ID{"a", "b", "c"} {
			mustCreate(t, st, newPair(typeA, id, 0))
		}
		rt := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(q("first")),
			runtimetest.WithLogger(zap.NewNop()), runtimetest.WithoutLeakCheck()).Runtime
		waitIdle(t, rt)
		require.EqualValues(t, 3, reconciles.Load())

		require.NoError(t, rt.RegisterQController(q("late")))
		waitIdle(t, rt)
		assert.EqualValues(t, 6, reconciles.Load(), "the late QController reconciled what exists before Settle returned")
	})
}

// TestSettleExceptBeforeRunIsNotIdle: before Run has started, a Runtime is
// not idle even when Except names every controller — its kinds are not
// watched yet, so a change made when the wait returned would reach no
// watch's bootstrap (the held QController would never see it). Once Run
// has started, the wait returns when the kinds' first bootstraps are
// routed, and a change made then reaches the held QController.
func TestSettleExceptBeforeRunIsNotIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var seen atomic.Int32
		q := &funcQController{
			name:     "q",
			settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary)}},
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, _ resource.Pointer) error {
				select {
				case <-gate:
				case <-ctx.Done():
					return ctx.Err()
				}
				seen.Add(1)
				return nil
			},
		}
		st := inmem.NewState()
		rt, err := runtime.New(st, zap.NewNop())
		require.NoError(t, err)
		require.NoError(t, rt.RegisterQController(q))

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		a, err := idleOrNot(ctx, rt, "q")
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "not started: not idle, whatever Except names")
		assert.Contains(t, a.String(), "controller q: starting")

		runCtx, stop := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(runCtx) }()
		ctx, cancel = context.WithTimeout(t.Context(), time.Second)
		a, err = idleOrNot(ctx, rt, "q")
		cancel()
		require.NoError(t, err, "started: idle but for q once the kinds are bootstrapped: %s", a)
		require.Len(t, a.Kinds, 1, "the input kind is watched when the wait returns")
		assert.False(t, a.Kinds[0].Behind, "and its bootstrap routed: %s", a)

		mustCreate(t, st, newPair(typeA, "x", 1))
		gate <- struct{}{} // q reconciles x: it saw the change made after the wait
		synctest.Wait()
		assert.EqualValues(t, 1, seen.Load())
		stop()
		require.NoError(t, <-done)
	})
}
