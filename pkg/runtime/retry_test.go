package runtime_test

import (
	"context"
	"encoding/json"
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
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// policyQController is a funcQController with a retry policy
// (controller.RetryPolicyProvider).
type policyQController struct {
	funcQController
	policy func() controller.RetryPolicy
}

func (c *policyQController) RetryPolicy() controller.RetryPolicy { return c.policy() }

// failingQ returns a QController on typeA whose Reconcile logs its calls and
// fails while *failing is set.
func failingQ(name string, log *callLog, failing *atomic.Bool) funcQController {
	return funcQController{name: name, settings: primaryOf(typeA),
		reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
			log.add(p.ID())
			if failing.Load() {
				return errors.New("boom")
			}
			return nil
		}}
}

// offsets returns the times of calls since start.
func offsets(calls []call, start time.Time) []time.Duration {
	out := make([]time.Duration, 0, len(calls))
	for _, c := range calls {
		out = append(out, c.at.Sub(start))
	}
	return out
}

// touchA sets spec A of the Pair typeA/id in st.
func touchA(t *testing.T, st state.State, id string, a int) {
	t.Helper()
	require.NoError(t, st.Modify(context.Background(), newPair(typeA, id, 0), func(r resource.Resource) error {
		r.(*Pair).TypedSpec().A = a
		return nil
	}))
}

// TestRetryPolicy_MaxAttemptsParksTheItem: with RetryPolicy.MaxAttempts an
// item that fails that many times in a row is parked — not retried, logged,
// shown in the status and the metrics with its last error, still failing —
// and is retried as a fresh item on its next change. The controller's own
// backoff bounds replace the Runtime's.
func TestRetryPolicy_MaxAttemptsParksTheItem(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.DebugLevel)
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		log := &callLog{}
		var failing atomic.Bool
		failing.Store(true)
		q := &policyQController{funcQController: failingQ("q", log, &failing), policy: func() controller.RetryPolicy {
			return controller.RetryPolicy{MaxAttempts: 3, BackoffInitial: time.Second, BackoffMax: 10 * time.Second}
		}}
		e := start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.New(core)), runtimetest.WithQControllers(q))
		t0 := time.Now()
		mustCreate(t, st, newPair(typeA, "f", 0))
		time.Sleep(time.Hour)
		synctest.Wait()
		// The Runtime's default backoff is 100ms: these are the policy's.
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second}, offsets(log.take(), t0), "three attempts, then parked")

		cs := statusOf(t, e.Runtime, "q")
		assert.Equal(t, 1, cs.ParkedItems)
		assert.Equal(t, 1, cs.FailingItems, "a parked item is failing")
		assert.False(t, cs.Recovered)
		assert.Equal(t, 0, cs.QueueLen, "a parked item is not waiting")
		assert.Equal(t, []observe.ParkedItem{{Item: "Reconcile As.test.resgraph.dev(test/f)", Attempts: 3, LastError: "boom",
			ParkedAt: t0.Add(3 * time.Second)}}, cs.Parked)
		assert.EqualValues(t, 2, cs.Metrics.Requeues, "the parking failure is not a requeue")
		m := e.Runtime.Observe().Metrics()
		js, err := json.Marshal(m)
		require.NoError(t, err)
		assert.Contains(t, string(js), `"parkedItems":1,"parked":[{"item":"Reconcile As.test.resgraph.dev(test/f)","attempts":3,"lastError":"boom"`)
		parkedLogs := logs.FilterMessage("reconcile failed; parked until the item changes").All()
		require.Len(t, parkedLogs, 1)
		assert.Equal(t, zapcore.WarnLevel, parkedLogs[0].Level)
		assert.Equal(t, "boom", parkedLogs[0].ContextMap()["error"])
		assert.EqualValues(t, 3, parkedLogs[0].ContextMap()["attempts"])

		// Its next change retries it as a fresh item: three more attempts,
		// from the initial delay.
		t1 := time.Now()
		touchA(t, st, "f", 1)
		time.Sleep(time.Hour)
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second}, offsets(log.take(), t1))
		assert.Equal(t, 1, statusOf(t, e.Runtime, "q").ParkedItems)

		// Once it succeeds, nothing is parked or failing any more.
		failing.Store(false)
		touchA(t, st, "f", 2)
		synctest.Wait()
		assert.Len(t, log.take(), 1)
		cs = statusOf(t, e.Runtime, "q")
		assert.Zero(t, cs.ParkedItems)
		assert.Empty(t, cs.Parked)
		assert.Zero(t, cs.FailingItems)
		assert.True(t, cs.Recovered)
	})
}

// TestRetryPolicy_DefaultsKeepTodaysBehaviour: a QController without a
// policy and one whose policy is the zero RetryPolicy retry a failing item
// forever with the Runtime's backoff, and a change runs a backing-off item
// at once with its failures still counting (rule Q3).
func TestRetryPolicy_DefaultsKeepTodaysBehaviour(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		var failing atomic.Bool
		failing.Store(true)
		plainLog, zeroLog := &callLog{}, &callLog{}
		plain := failingQ("plain", plainLog, &failing)
		zero := &policyQController{funcQController: failingQ("zero", zeroLog, &failing), policy: func() controller.RetryPolicy { return controller.RetryPolicy{} }}
		e := start(t, runtimetest.WithState(st), runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, 8*time.Second)),
			runtimetest.WithQControllers(&plain, zero))
		t0 := time.Now()
		mustCreate(t, st, newPair(typeA, "f", 0))
		time.Sleep(20 * time.Second)
		want := []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second, 15 * time.Second}
		assert.Equal(t, want, offsets(plainLog.take(), t0))
		assert.Equal(t, want, offsets(zeroLog.take(), t0))
		// At 20s both wait out an 8s backoff (due at 23s): a change runs
		// them now, and the next failure still waits the capped 8s.
		t1 := time.Now()
		touchA(t, st, "f", 1)
		time.Sleep(10 * time.Second)
		assert.Equal(t, []time.Duration{0, 8 * time.Second}, offsets(plainLog.take(), t1))
		assert.Equal(t, []time.Duration{0, 8 * time.Second}, offsets(zeroLog.take(), t1))
		time.Sleep(time.Hour)
		assert.Greater(t, len(plainLog.take()), 100, "never parked")
		for _, name := range []string{"plain", "zero"} {
			cs := statusOf(t, e.Runtime, name)
			assert.Zero(t, cs.ParkedItems)
			assert.Equal(t, 1, cs.FailingItems)
		}
	})
}

// TestRetryPolicy_ChangeAbandonsRetry: with ChangeAbandonsRetry a change to
// an item waiting out its backoff runs it now as a fresh item (its backoff
// starts over); by default the change runs it now too, but its failures
// keep counting.
func TestRetryPolicy_ChangeAbandonsRetry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		var failing atomic.Bool
		failing.Store(true)
		keepLog, dropLog := &callLog{}, &callLog{}
		keep := &policyQController{funcQController: failingQ("keep", keepLog, &failing), policy: func() controller.RetryPolicy {
			return controller.RetryPolicy{MaxAttempts: 4}
		}}
		drop := &policyQController{funcQController: failingQ("drop", dropLog, &failing), policy: func() controller.RetryPolicy {
			return controller.RetryPolicy{MaxAttempts: 4, ChangeAbandonsRetry: true}
		}}
		start(t, runtimetest.WithState(st), runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, time.Minute)),
			runtimetest.WithQControllers(keep, drop))
		t0 := time.Now()
		mustCreate(t, st, newPair(typeA, "f", 0))
		time.Sleep(4 * time.Second) // failed at 0, 1s, 3s; the next retry is due at 7s
		touchA(t, st, "f", 1)
		time.Sleep(time.Hour)
		// keep: the change is its fourth attempt, which parks it.
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, 4 * time.Second}, offsets(keepLog.take(), t0))
		// drop: the change started over: four more attempts from 1s.
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second, 7 * time.Second, 11 * time.Second},
			offsets(dropLog.take(), t0))
	})
}

// TestRetryPolicy_RefusedAtRegistration: a retry policy that cannot work,
// or a RetryPolicy method that panics, refuses the registration with an
// invalid-class error naming the controller; nothing is registered.
func TestRetryPolicy_RefusedAtRegistration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		policy func() controller.RetryPolicy
		want   string
	}{
		{"negative initial", func() controller.RetryPolicy { return controller.RetryPolicy{BackoffInitial: -1} }, "negative backoff"},
		{"negative max", func() controller.RetryPolicy { return controller.RetryPolicy{BackoffMax: -1} }, "negative backoff"},
		{"max below initial", func() controller.RetryPolicy {
			return controller.RetryPolicy{BackoffInitial: time.Second, BackoffMax: time.Millisecond}
		}, "below its initial delay"},
		{"initial above the Runtime's max", func() controller.RetryPolicy { return controller.RetryPolicy{BackoffInitial: time.Hour} }, "below its initial delay"},
		{"panics", func() controller.RetryPolicy { panic("no policy") }, "RetryPolicy panicked: no policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := runtime.New(inmem.NewState(), zap.NewNop())
			require.NoError(t, err)
			q := &policyQController{funcQController: funcQController{name: "q", settings: primaryOf(typeA)}, policy: tc.policy}
			err = rt.RegisterQController(q)
			require.Error(t, err)
			assert.True(t, state.IsInvalidError(err), "%v", err)
			assert.Contains(t, err.Error(), `"q"`)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, rt.Observe().Controllers(), "nothing registered")
		})
	}
}

// TestRetryPolicy_PanickingMapInputIsParkedToo: MapInput items obey the
// policy like Reconcile items; a panic that parks its item is logged at
// ERROR with its stack.
func TestRetryPolicy_PanickingMapInputIsParkedToo(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.DebugLevel)
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		var maps atomic.Int32
		q := &policyQController{funcQController: funcQController{name: "q",
			settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)}},
			mapInput: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
				maps.Add(1)
				panic("map boom")
			}}, policy: func() controller.RetryPolicy { return controller.RetryPolicy{MaxAttempts: 2} }}
		e := start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.New(core)), runtimetest.WithQControllers(q))
		mustCreate(t, st, newPair(typeC, "m", 0))
		time.Sleep(time.Hour)
		assert.EqualValues(t, 2, maps.Load())
		cs := statusOf(t, e.Runtime, "q")
		require.Len(t, cs.Parked, 1)
		assert.Equal(t, "MapInput Cs.test.resgraph.dev(test/m)", cs.Parked[0].Item)
		assert.Equal(t, "map boom", cs.Parked[0].LastError)
		assert.EqualValues(t, 2, cs.Metrics.Crashes, "each panic is a crash")
		parked := logs.FilterMessage("MapInput panicked; parked until the item changes").All()
		require.Len(t, parked, 1)
		assert.Equal(t, zapcore.ErrorLevel, parked[0].Level)
		assert.Contains(t, parked[0].ContextMap()["stack"], "runtime_test")
	})
}
