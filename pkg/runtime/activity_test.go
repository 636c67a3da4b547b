package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/internal/testhook"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// copyController is a Controller that keeps, for every A, a B with the
// same ID and spec: the smallest chain through the Runtime.
func copyController(name string, from, to resource.Type) *funcController {
	return &funcController{
		name:    name,
		inputs:  []controller.Input{in(from, controller.InputWeak)},
		outputs: []controller.Output{out(to, controller.OutputExclusive)},
		run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-r.EventCh():
				}
				r.StartTrackingOutputs()
				list, err := r.List(ctx, kind(from))
				if err != nil {
					return err
				}
				for _, a := range list.Items {
					b := newPair(to, a.Metadata().ID(), 0)
					if err := r.Modify(ctx, b, func(res resource.Resource) error {
						res.(*Pair).TypedSpec().A = a.(*Pair).TypedSpec().A
						return nil
					}); err != nil {
						return err
					}
				}
				if err := r.CleanupOutputs(ctx, kind(to)); err != nil {
					return err
				}
			}
		},
	}
}

// waitIdle waits for the Runtime to be idle within a generous deadline.
func waitIdle(t *testing.T, rt *runtime.Runtime) observe.Activity {
	t.Helper()
	return runtimetest.Settle(t, rt, runtimetest.Within(20*time.Second))
}

// idleOrNot waits until rt is idle but for except, as runtimetest.Settle
// does, and returns ctx's error (and what is still busy) instead of
// failing the test when ctx is done first: for the tests of what idle
// means.
func idleOrNot(ctx context.Context, rt *runtime.Runtime, except ...string) (observe.Activity, error) {
	return testhook.Of(rt).WaitIdle(ctx, except)
}

// TestWaitIdleMeansEveryChangeWasReconciled checks the quiescence check
// itself: right after WaitIdle returns, the outputs of a two-step chain (a
// Controller, then a QController) reflect every input change, without
// waiting for them. It repeats to give a premature return many chances.
func TestWaitIdleMeansEveryChangeWasReconciled(t *testing.T) {
	// Outside a bubble: on the wall clock, with real scheduling.
	e := runtimetest.Start(t, runtimetest.WithLogger(zap.NewNop()), runtimetest.WithControllers(copyController("ab", typeA, typeB)), runtimetest.WithQControllers(&funcQController{
		name: "bc",
		settings: controller.QSettings{
			Inputs:  []controller.Input{in(typeB, controller.InputQPrimary)},
			Outputs: []controller.Output{out(typeC, controller.OutputExclusive)},
		},
		reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
			b, err := r.Get(ctx, p)
			if state.IsNotFoundError(err) {
				err = r.Destroy(ctx, ptr(typeC, p.ID()))
				if state.IsNotFoundError(err) {
					return nil
				}
				return err
			}
			if err != nil {
				return err
			}
			return r.Modify(ctx, newPair(typeC, p.ID(), 0), func(res resource.Resource) error {
				res.(*Pair).TypedSpec().A = b.(*Pair).TypedSpec().A
				return nil
			})
		},
	}))
	rt, st := e.Runtime, e.State
	ctx := t.Context()
	waitIdle(t, rt)

	for i := range 40 {
		id := fmt.Sprintf("r%d", i%5)
		cur, err := st.Get(ctx, ptr(typeA, id))
		switch {
		case state.IsNotFoundError(err):
			require.NoError(t, st.Create(ctx, newPair(typeA, id, i)))
		case i%3 == 0:
			require.NoError(t, st.Destroy(ctx, ptr(typeA, id)))
		default:
			require.NoError(t, err)
			cur.(*Pair).TypedSpec().A = i
			require.NoError(t, st.Update(ctx, cur))
		}
		a := waitIdle(t, rt)
		assert.True(t, a.Idle())

		dump := func(k resource.Type) map[string]int {
			l, err := st.List(ctx, kind(k))
			require.NoError(t, err)
			m := map[string]int{}
			for _, r := range l.Items {
				m[r.Metadata().ID()] = r.(*Pair).TypedSpec().A
			}
			return m
		}
		as, bs, cs := dump(typeA), dump(typeB), dump(typeC)
		require.Equal(t, as, cs, "step %d: every A has its C at once (B: %v)", i, bs)
	}
}

// TestActivityNamesTheBusyController checks what observe.Activity reports: a
// Controller in a pass, and a QController item in flight, each named, and
// a failed item waiting out its backoff as delayed (not busy).
func TestActivityNamesTheBusyController(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ec := newEventCounter(true)
		gated := &funcController{
			name: "gated", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: ec.run,
		}
		release := make(chan struct{})
		q := &funcQController{
			name:     "q",
			settings: controller.QSettings{Inputs: []controller.Input{in(typeB, controller.InputQPrimary)}},
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				if p.ID() == "fails" {
					return errors.New("boom")
				}
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			},
		}

		unstarted, err := runtime.New(inmem.NewState(), zap.NewNop())
		require.NoError(t, err)
		require.NoError(t, unstarted.RegisterController(gated))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		a, err := idleOrNot(ctx, unstarted)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "not started: not idle")
		assert.Contains(t, a.String(), "controller gated: starting")

		e := start(t, runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, time.Minute)),
			runtimetest.WithControllers(gated), runtimetest.WithQControllers(q))
		rt, st := e.Runtime, e.State
		mustCreate(t, st, newPair(typeB, "slow", 0))
		synctest.Wait()
		a = rt.Observe().Activity(t.Context())
		require.False(t, a.Idle())
		assert.Contains(t, a.String(), "controller gated: in a reconcile pass", "the start event's pass waits for its gate")
		assert.Contains(t, a.String(), "controller q: 1 in flight (Bs.test.resgraph.dev(test/slow))")

		ec.gate <- struct{}{}
		close(release)
		mustCreate(t, st, newPair(typeB, "fails", 0))
		a = waitIdle(t, rt)
		qa := a.Controllers[1]
		assert.Equal(t, "q", qa.Name)
		assert.False(t, qa.Busy)
		assert.Equal(t, 1, qa.Delayed, "the failed item waits out its backoff")
		assert.Equal(t, time.Now().Add(time.Second), qa.NextDue)

		mustCreate(t, st, newPair(typeA, "x", 0))
		synctest.Wait()
		assert.Contains(t, rt.Observe().Activity(t.Context()).String(), "controller gated: in a reconcile pass", "woken by the change")
		ec.gate <- struct{}{}
		waitIdle(t, rt)
		assert.Equal(t, 2, ec.count())
	})
}

// gatedWatches is a CoreState whose aggregated kind watches deliver each
// batch only when the test sends a token on gate; it reports the inner
// state's kind heads.
type gatedWatches struct {
	state.State
	gate chan struct{}
}

func (g *gatedWatches) KindHead(ctx context.Context, k resource.Kind) (state.Bookmark, error) {
	return g.State.(state.KindHeadReporter).KindHead(ctx, k)
}

func (g *gatedWatches) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	inner := make(chan []state.Event)
	if err := g.State.WatchKindAggregated(ctx, k, inner, opts...); err != nil {
		return err
	}
	go func() {
		for {
			var batch []state.Event
			select {
			case batch = <-inner:
			case <-ctx.Done():
				return
			}
			select {
			case <-g.gate:
			case <-ctx.Done():
				return
			}
			select {
			case ch <- batch:
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
}

// TestActivityOfAWatchBehindTheState checks the kind part: a kind whose
// watch has not bootstrapped, or has not routed a change the state
// committed (the state reports its head), is behind until it has.
func TestActivityOfAWatchBehindTheState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gatedWatches{State: inmem.NewState(), gate: make(chan struct{})}
		reader := &funcController{
			name: "reader", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: newEventCounter(false).run,
		}
		unstarted, err := runtime.New(state.WrapCore(g), zap.NewNop())
		require.NoError(t, err)
		require.NoError(t, unstarted.RegisterController(reader))
		require.Empty(t, unstarted.Observe().Activity(t.Context()).Kinds, "nothing is watched before Run")

		rt := start(t, runtimetest.WithState(state.WrapCore(g)), runtimetest.WithControllers(reader)).Runtime
		a := rt.Observe().Activity(t.Context())
		require.Len(t, a.Kinds, 1)
		assert.Equal(t, observe.KindActivity{Namespace: testNS, Type: typeA, Exact: true, Behind: true, Why: "not bootstrapped yet"}, a.Kinds[0])

		g.gate <- struct{}{} // the bootstrap
		a = waitIdle(t, rt)
		assert.Equal(t, observe.KindActivity{Namespace: testNS, Type: typeA, Exact: true}, a.Kinds[0])

		mustCreate(t, g, newPair(typeA, "a", 0))
		synctest.Wait()
		a = rt.Observe().Activity(t.Context())
		assert.Equal(t, observe.KindActivity{Namespace: testNS, Type: typeA, Exact: true, Behind: true, Why: "the state has changes the watch has not delivered yet"}, a.Kinds[0])
		assert.Equal(t, "watch of As.test.resgraph.dev(test): the state has changes the watch has not delivered yet", a.String())

		g.gate <- struct{}{}
		waitIdle(t, rt)
	})
}

// TestWaitIdleCoversTheWakeUpOfNewInputs: UpdateInputs with a new kind
// wakes the controller once the kind's first bootstrap is routed (rule
// C7), from a goroutine of the Runtime; the controller counts as busy
// until that wake-up is sent, so that WaitIdle never returns between the
// bootstrap and the wake-up — which a later change would then find
// pending, making one change look like two ReconcileEvents. On the wall
// clock, repeated to give a premature return many chances.
func TestWaitIdleCoversTheWakeUpOfNewInputs(t *testing.T) {
	next := make(chan string, 1) // the namespace the next pass moves its dynamic input to
	var wakes atomic.Int64
	c := &funcController{
		name:   "mover",
		inputs: []controller.Input{in(typeA, controller.InputWeak)},
		run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-r.EventCh():
				}
				wakes.Add(1)
				select {
				case ns := <-next:
					if err := r.UpdateInputs([]controller.Input{{Namespace: ns, Type: typeB, Kind: controller.InputWeak}}); err != nil {
						return err
					}
				default:
				}
			}
		},
	}
	e := runtimetest.Start(t, runtimetest.WithLogger(zap.NewNop()), runtimetest.WithControllers(c))
	rt, st := e.Runtime, e.State
	waitIdle(t, rt)
	for i := range 60 {
		next <- fmt.Sprintf("dyn%d", i)
		mustCreate(t, st, newPair(typeA, fmt.Sprintf("move%d", i), i)) // the pass that moves the input
		waitIdle(t, rt)
		before := wakes.Load()
		require.Empty(t, next, "step %d: the pass took the namespace", i)
		mustCreate(t, st, newPair(typeA, fmt.Sprintf("after%d", i), i))
		waitIdle(t, rt)
		require.Equal(t, before+1, wakes.Load(), "step %d: one change after WaitIdle, one ReconcileEvent", i)
	}
}
