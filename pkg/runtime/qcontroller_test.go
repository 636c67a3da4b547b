package runtime_test

import (
	"context"
	"errors"
	"sync"
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
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestStatus_QueueLenAndInFlight: a QController's status counts its
// waiting and in-flight items; an item changed three times while it waits
// is stored once (rule Q1 itself: conformance).
func TestStatus_QueueLenAndInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		opts := []runtimetest.Option{runtimetest.WithState(st)}
		log := &callLog{}
		gate := make(chan struct{})
		opts = append(opts, runtimetest.WithQControllers(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				if p.ID() == "blocker" {
					<-gate
				}
				return nil
			}}))
		e := start(t, opts...)
		mustCreate(t, st, newPair(typeA, "blocker", 0))
		synctest.Wait()
		// The only worker is busy: "w" waits in the queue while it changes
		// three times.
		mustCreate(t, st, newPair(typeA, "w", 0))
		for i := range 2 {
			require.NoError(t, st.Modify(context.Background(), newPair(typeA, "w", 0), func(r resource.Resource) error {
				r.(*Pair).TypedSpec().A = i + 1
				return nil
			}))
		}
		synctest.Wait()
		assert.Equal(t, 1, statusOf(t, e.Runtime, "q").QueueLen)
		assert.Equal(t, 1, statusOf(t, e.Runtime, "q").InFlight)
		gate <- struct{}{}
		synctest.Wait()
		assert.Equal(t, []string{"blocker", "w"}, ids(log.take()))
	})
}

// TestQueueBackoff_DoublesCapsResetsAndRequeues: the per-item backoff of
// a failing item doubles from WithQueueBackoff's initial delay up to its
// max and starts over after a success; a RequeueError requeues after its
// interval exactly, a negative one is a failure; a change to an item
// waiting out a backoff runs it at once; the status names the failed call
// and counts the requeues (rule Q3 itself: conformance).
func TestQueueBackoff_DoublesCapsResetsAndRequeues(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		opts := []runtimetest.Option{runtimetest.WithState(st), runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, 4*time.Second))}
		log := &callLog{}
		var mu sync.Mutex
		results := map[string][]error{} // per ID, the results of the next calls; protected by mu
		opts = append(opts, runtimetest.WithQControllers(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				mu.Lock()
				defer mu.Unlock()
				if len(results[p.ID()]) == 0 {
					return nil
				}
				err := results[p.ID()][0]
				results[p.ID()] = results[p.ID()][1:]
				return err
			}}))
		e := start(t, opts...)
		start := time.Now()
		fail := errors.New("fail")

		mu.Lock()
		results["f"] = []error{fail, fail, fail, fail, nil, fail}
		mu.Unlock()
		mustCreate(t, st, newPair(typeA, "f", 0))
		time.Sleep(time.Minute) // virtual time
		synctest.Wait()
		var offsets []time.Duration
		for _, c := range log.take() {
			offsets = append(offsets, c.at.Sub(start))
		}
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second, 11 * time.Second}, offsets,
			"exponential backoff per item, capped; stops after a success")
		cs := statusOf(t, e.Runtime, "q")
		assert.Equal(t, "Reconcile As.test.resgraph.dev(test/f): fail", cs.LastError, "the last error names the call and the item")
		assert.EqualValues(t, 4, cs.Metrics.Requeues)

		// Success reset the backoff: the next failure waits the initial delay.
		start = time.Now()
		require.NoError(t, st.Modify(context.Background(), newPair(typeA, "f", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 1; return nil }))
		time.Sleep(time.Minute)
		var again []time.Duration
		for _, c := range log.take() {
			again = append(again, c.at.Sub(start))
		}
		assert.Equal(t, []time.Duration{0, time.Second}, again)

		// A RequeueError requeues after its interval; a negative one fails.
		start = time.Now()
		mu.Lock()
		results["r"] = []error{controller.NewRequeueInterval(10 * time.Second), controller.NewRequeueError(errors.New("wrapped"), 5*time.Second), controller.NewRequeueInterval(-time.Second)}
		mu.Unlock()
		mustCreate(t, st, newPair(typeA, "r", 0))
		time.Sleep(time.Minute)
		var req []time.Duration
		for _, c := range log.take() {
			req = append(req, c.at.Sub(start))
		}
		assert.Equal(t, []time.Duration{0, 10 * time.Second, 15 * time.Second, 16 * time.Second}, req)
		assert.Contains(t, statusOf(t, e.Runtime, "q").LastError, "negative requeue interval")

		// A change to an item waiting out a backoff runs it now.
		mu.Lock()
		results["b"] = []error{fail, fail, fail}
		mu.Unlock()
		mustCreate(t, st, newPair(typeA, "b", 0))
		time.Sleep(1500 * time.Millisecond) // two calls: 0 and 1s; the third is due at 3s
		assert.Len(t, log.take(), 2)
		require.NoError(t, st.Modify(context.Background(), newPair(typeA, "b", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 1; return nil }))
		synctest.Wait()
		assert.Len(t, log.take(), 1, "the change ran the item at once")
	})
}

// TestStatus_RequeueWithoutAnErrorIsNoFailure: a RequeueError wrapping no
// error requeues the item without recording a failure.
func TestStatus_RequeueWithoutAnErrorIsNoFailure(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		opts := []runtimetest.Option{runtimetest.WithState(st)}
		var n atomic.Int32
		opts = append(opts, runtimetest.WithQControllers(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
				if n.Add(1) == 1 {
					return controller.NewRequeueInterval(time.Second)
				}
				return nil
			}}))
		e := start(t, opts...)
		mustCreate(t, st, newPair(typeA, "x", 0))
		time.Sleep(2 * time.Second)
		assert.EqualValues(t, 2, n.Load())
		assert.Empty(t, statusOf(t, e.Runtime, "q").LastError)
	})
}

// TestLogs_QControllerPanicsAreErrorsWithTheirStack: a panic in Reconcile
// or MapInput is logged at ERROR with the panicking goroutine's stack and
// counted as a crash; the item is retried, the others go on, the
// controller keeps running (rule Q5 itself: conformance).
func TestLogs_QControllerPanicsAreErrorsWithTheirStack(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.DebugLevel)
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		opts := []runtimetest.Option{runtimetest.WithState(st), runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, time.Second))}
		opts = append(opts, runtimetest.WithLogger(zap.New(core)))
		log := &callLog{}
		panics := 1
		opts = append(opts, runtimetest.WithQControllers(&funcQController{name: "q",
			settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)}},
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				if p.ID() == "boom" && panics > 0 {
					panics--
					panic("reconcile boom")
				}
				return nil
			},
			mapInput: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
				panic("map boom")
			}}))
		e := start(t, opts...)
		mustCreate(t, st, newPair(typeA, "boom", 0))
		mustCreate(t, st, newPair(typeA, "fine", 0))
		mustCreate(t, st, newPair(typeC, "m", 0))
		synctest.Wait()
		assert.ElementsMatch(t, []string{"boom", "fine"}, ids(log.take()))
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"boom"}, ids(log.take()), "the panicked item is retried")

		cs := statusOf(t, e.Runtime, "q")
		assert.Equal(t, observe.LifecycleRunning, cs.Lifecycle)
		assert.GreaterOrEqual(t, cs.Metrics.Crashes, uint64(3))
		for _, msg := range []string{"Reconcile panicked; retrying after backoff", "MapInput panicked; retrying after backoff"} {
			entries := logs.FilterMessage(msg).All()
			require.NotEmpty(t, entries, msg)
			assert.Contains(t, entries[0].ContextMap()["stack"], "qcontroller_test", msg)
		}
	})
}

// TestLogs_RequeueErrorIsAFailureOnlyWhenWrapping: a RequeueError that
// wraps an error is logged like any retried failure (at warn level, with
// the error and the interval, and as the controller's last error); a plain
// requeue logs nothing above info and is no error.
func TestLogs_RequeueErrorIsAFailureOnlyWhenWrapping(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.InfoLevel)
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		opts := []runtimetest.Option{runtimetest.WithState(st)}
		opts = append(opts, runtimetest.WithLogger(zap.New(core)))
		var n atomic.Int32
		opts = append(opts, runtimetest.WithQControllers(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				switch n.Add(1) {
				case 1:
					return controller.NewRequeueInterval(time.Second)
				case 2:
					return controller.NewRequeueError(errors.New("disk on fire"), time.Second)
				}
				return nil
			}}))
		e := start(t, opts...)
		mustCreate(t, st, newPair(typeA, "x", 0))
		synctest.Wait()
		require.EqualValues(t, 1, n.Load())
		assert.Zero(t, len(warnings(logs)),
			"a plain requeue is not a failure: %v", logs.All())
		assert.Empty(t, statusOf(t, e.Runtime, "q").LastError)

		time.Sleep(time.Second)
		synctest.Wait()
		require.EqualValues(t, 2, n.Load())
		failures := logs.FilterLevelExact(zapcore.WarnLevel).FilterFieldKey("error").All()
		require.Len(t, failures, 1, "a wrapping requeue is logged as a failure: %v", logs.All())
		assert.Contains(t, failures[0].ContextMap()["error"], "disk on fire")
		assert.Equal(t, time.Second, failures[0].ContextMap()["interval"])
		assert.Contains(t, statusOf(t, e.Runtime, "q").LastError, "disk on fire")

		time.Sleep(time.Second)
		synctest.Wait()
		assert.EqualValues(t, 3, n.Load())
	})
}

// TestLogs_NilPointerFromMapInputIsLoggedOnce: a nil pointer returned by
// MapInput is an error of the item like a pointer of an undeclared kind:
// logged once, not silently retried forever.
func TestLogs_NilPointerFromMapInputIsLoggedOnce(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.InfoLevel)
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		opts := []runtimetest.Option{runtimetest.WithState(st), runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, time.Second))}
		opts = append(opts, runtimetest.WithLogger(zap.New(core)))
		reconciled := &callLog{}
		opts = append(opts, runtimetest.WithQControllers(&funcQController{name: "q",
			settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)}},
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				reconciled.add(p.ID())
				return nil
			},
			mapInput: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
				return []resource.Pointer{nil, ptr(typeA, "ok"), (*resource.Metadata)(nil)}, nil
			}}))
		e := start(t, opts...)
		mustCreate(t, st, newPair(typeC, "m", 0))
		synctest.Wait()
		assert.Equal(t, []string{"ok"}, ids(reconciled.take()), "the valid pointer is queued")
		assert.Contains(t, statusOf(t, e.Runtime, "q").LastError, "<nil>")
		time.Sleep(3 * time.Second) // retried: still bad, not logged again
		entries := logs.FilterMessage("MapInput returned a pointer that is not of a primary input kind").All()
		require.Len(t, entries, 1, "logged once: %v", logs.All())
		assert.Equal(t, "<nil>", entries[0].ContextMap()["pointer"])
	})
}

// TestLogs_MapInputOfAnUndeclaredKindIsLoggedOncePerKind: MapInput
// returning a pointer of a kind that is not a primary input fails the item
// (its status names the pointer) and is logged once per kind however often
// the item is retried; the valid pointers are queued.
func TestLogs_MapInputOfAnUndeclaredKindIsLoggedOncePerKind(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.DebugLevel)
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		opts := []runtimetest.Option{runtimetest.WithState(st), runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, time.Second))}
		opts = append(opts, runtimetest.WithLogger(zap.New(core)))
		log := &callLog{}
		opts = append(opts, runtimetest.WithQControllers(&funcQController{name: "q",
			settings: controller.QSettings{
				Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)},
			},
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				return nil
			},
			mapInput: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
				return []resource.Pointer{ptr(typeA, "ok"), ptr(typeX, "nope")}, nil
			}}))
		e := start(t, opts...)

		mustCreate(t, st, newPair(typeC, "bad", 0))
		synctest.Wait()
		assert.Equal(t, []string{"ok"}, ids(log.take()))
		assert.Contains(t, statusOf(t, e.Runtime, "q").LastError, "Xs.test.resgraph.dev(test/nope)")
		time.Sleep(3 * time.Second) // retried: still bad, not logged again
		assert.Len(t, logs.FilterMessage("MapInput returned a pointer that is not of a primary input kind").All(), 1)
	})
}
