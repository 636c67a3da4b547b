package transform_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// calls records the TransformFunc calls per input: when, and whether they
// failed.
type calls struct {
	mu  sync.Mutex
	log map[resource.ID][]call
}

type call struct {
	at     time.Time
	failed bool
}

func newCalls() *calls { return &calls{log: map[resource.ID][]call{}} }

func (c *calls) add(id resource.ID, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log[id] = append(c.log[id], call{at: time.Now(), failed: failed})
}

func (c *calls) of(id resource.ID) []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]call(nil), c.log[id]...)
}

func (c *calls) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.log {
		n += len(l)
	}
	return n
}

// itemBackoff is the Runtime's default item backoff's initial delay
// (runtime.WithQueueBackoff), which the transform's inputs get.
const itemBackoff = 100 * time.Millisecond

// hasN is an Await condition: the output's N is n.
func hasN(n int) func(*B) bool { return func(b *B) bool { return b.TypedSpec().N == n } }

// assertNoRestart checks that the controller never failed Run.
func assertNoRestart(t *testing.T, rt *runtime.Runtime, name string) {
	t.Helper()
	for _, s := range rt.Observe().Controllers() {
		if s.Name == name {
			assert.Zero(t, s.Metrics.Crashes, "Run failed")
			assert.Zero(t, s.Metrics.Restarts, "the controller was restarted")
			return
		}
	}
	t.Errorf("no status for %q", name)
}

// Issue 14 item 4: one input that always fails, and a healthy input created
// later. The failing input is retried with its own backoff (100 ms,
// doubling); the healthy one gets its output at once, and the controller
// is never restarted.
func TestAFailingInputDoesNotDelayTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := newCalls()
		ctrl := transform.NewController(transform.Settings[*A, *B]{
			Name:            "AtoB",
			MapMetadataFunc: fixture.Map[*A, fixture.BDef],
			TransformFunc: func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
				bad := a.Metadata().ID() == "bad"
				seen.add(a.Metadata().ID(), bad)
				if bad {
					return errors.New("always fails")
				}
				return double(ctx, r, l, a, b)
			},
		})
		engine := runtimetest.Start(t, runtimetest.WithControllers(ctrl))
		st := engine.State
		runtimetest.Create(t, st, newA("bad", 1))
		for len(seen.of("bad")) < 9 {
			time.Sleep(time.Second)
		}

		start := time.Now()
		runtimetest.Create(t, st, newA("good", 2))
		runtimetest.AssertResource(t, st, "good", runtimetest.Holds(hasN(4)))
		assert.Less(t, time.Since(start), itemBackoff, "the healthy input waited for the failing one")

		// Let the failing input go through two more retries: its schedule
		// is its own, not moved by the other input's events.
		for len(seen.of("bad")) < 11 {
			time.Sleep(time.Second)
		}
		bad := seen.of("bad")
		for i := 1; i < len(bad); i++ {
			want := itemBackoff << (i - 1)
			assert.Equal(t, want, bad[i].at.Sub(bad[i-1].at), "retry %d", i)
		}
		assert.Len(t, seen.of("good"), 1, "the healthy input was transformed once")
		assertNoRestart(t, engine.Runtime, "AtoB")
		status := engine.Runtime.Observe().Controllers()[0]
		assert.Equal(t, "input "+resource.PointerString(ptrA("bad"))+": TransformFunc: always fails", status.LastError,
			"the failure shows in the controller's status")
	})
}

// Issue 14 item 4: a TransformFunc failing transiently 20% of the time over
// 40 unchanged inputs. Every output ends correct, each input is
// transformed until it succeeds and never again, the controller is never
// restarted, and it settles (no more calls).
func TestTransientFailuresAreRetriedPerInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := newCalls()
		var mu sync.Mutex
		rnd := rand.New(rand.NewPCG(14, 4))
		ctrl := transform.NewController(transform.Settings[*A, *B]{
			Name:            "AtoB",
			MapMetadataFunc: fixture.Map[*A, fixture.BDef],
			TransformFunc: func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
				mu.Lock()
				fail := rnd.IntN(5) == 0
				mu.Unlock()
				seen.add(a.Metadata().ID(), fail)
				if fail {
					return errors.New("transient")
				}
				return double(ctx, r, l, a, b)
			},
		})
		const n = 40
		st := newState()
		for i := range n {
			runtimetest.Create(t, st, newA(fmt.Sprintf("a%02d", i), i))
		}
		engine := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
		runtimetest.AssertAll(t, st, runtimetest.Holds(func(bs []*B) bool {
			if len(bs) != n {
				return false
			}
			for i, b := range bs {
				if b.TypedSpec().N != 2*i {
					return false
				}
			}
			return true
		}))
		// Settled: idle now, and still without a call 10 virtual minutes
		// later (no retry was left).
		runtimetest.Settle(t, engine.Runtime)
		total := seen.total()
		time.Sleep(10 * time.Minute)
		runtimetest.Settle(t, engine.Runtime)
		assert.Equal(t, total, seen.total(), "the controller did not settle")

		failures := 0
		for i := range n {
			id := fmt.Sprintf("a%02d", i)
			log := seen.of(id)
			require.NotEmpty(t, log, id)
			for j, c := range log[:len(log)-1] {
				assert.True(t, c.failed, "%s: call %d of %d succeeded, yet it was called again", id, j+1, len(log))
				failures++
			}
			assert.False(t, log[len(log)-1].failed, "%s: the last call failed", id)
		}
		assert.Positive(t, failures, "the test made some calls fail")
		assertNoRestart(t, engine.Runtime, "AtoB")
	})
}

// A controller.RequeueError from TransformFunc retries that input after
// its interval, without failing the others or Run.
func TestRequeueErrorRetriesTheInputAfterItsInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := newCalls()
		ctrl := record(transform.NewController(transform.Settings[*A, *B]{
			Name:            "AtoB",
			MapMetadataFunc: fixture.Map[*A, fixture.BDef],
			TransformFunc: func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
				seen.add(a.Metadata().ID(), false)
				if len(seen.of(a.Metadata().ID())) < 3 {
					return controller.NewRequeueInterval(5 * time.Second)
				}
				return double(ctx, r, l, a, b)
			},
		}))
		engine := runtimetest.Start(t, runtimetest.WithControllers(ctrl))
		start := time.Now()
		runtimetest.Create(t, engine.State, newA("a1", 4))
		runtimetest.AssertResource(t, engine.State, "a1", runtimetest.Holds(hasN(8)))
		assert.Equal(t, 10*time.Second, time.Since(start), "requeued twice, 5 s each")
		assert.Empty(t, ctrl.Errors, "a requeue that wraps no error is not a failure")
		assertNoRestart(t, engine.Runtime, "AtoB")
	})
}

// Issue 9 item 7: a failure's error names what failed, and each resource
// once: a refused write is the write, a veto is the removal function.
func TestTheErrorNamesWhatFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		ctx := context.Background()
		runtimetest.Create(t, st, newA("a1", 1))
		ctrl := record(transform.NewController(transform.Settings[*A, *B]{
			Name:            "AtoB",
			MapMetadataFunc: fixture.Map[*A, fixture.BDef],
			TransformFunc:   double,
			FinalizerRemovalFunc: func(context.Context, controller.Reader, *zap.Logger, *A) error {
				return errors.New("not yet")
			},
		}, transform.WithInputFinalizers()))
		// Someone else owns the output of "taken": the write is refused.
		require.NoError(t, st.Create(ctx, fixture.New[fixture.BDef]("taken", 0), state.WithCreateOwner("someone")))
		runtimetest.Create(t, st, newA("taken", 1))
		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))

		err := ctrl.Await(t, func(err error) bool { return strings.Contains(err.Error(), "taken") })
		msg := err.Error()
		assert.True(t, strings.HasPrefix(msg, "input "+resource.PointerString(ptrA("taken"))+": write output"), msg)
		assert.NotContains(t, msg, "TransformFunc", "TransformFunc did not fail")
		assert.Equal(t, 1, strings.Count(msg, resource.PointerString(ptrA("taken"))), "the input is named once: %s", msg)
		assert.Equal(t, 1, strings.Count(msg, resource.PointerString(ptrB("taken"))), "the output is named once: %s", msg)

		runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(hasN(2)))
		_, err = st.Teardown(ctx, ptrA("a1"))
		require.NoError(t, err)
		err = ctrl.Await(t, func(err error) bool { return strings.Contains(err.Error(), "not yet") })
		assert.Equal(t, "input "+resource.PointerString(ptrA("a1"))+`: remove finalizer "AtoB": FinalizerRemovalFunc: not yet`, err.Error())
	})
}

// gaps returns the time between consecutive calls.
func gaps(log []call) []time.Duration {
	var g []time.Duration
	for i := 1; i < len(log); i++ {
		g = append(g, log[i].at.Sub(log[i-1].at))
	}
	return g
}

// failing returns the A → B transform whose TransformFunc records its
// calls and fails for the inputs fail says, with the error it returns.
func failing(seen *calls, fail func(a *A, n int) error, opts ...transform.ControllerOption) *transform.Controller[*A, *B] {
	return transform.NewController(transform.Settings[*A, *B]{
		Name:            "AtoB",
		MapMetadataFunc: fixture.Map[*A, fixture.BDef],
		TransformFunc: func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
			id := a.Metadata().ID()
			err := fail(a, len(seen.of(id)))
			seen.add(id, err != nil)
			if err != nil {
				return err
			}
			return double(ctx, r, l, a, b)
		},
	}, opts...)
}

// waitCalls sleeps (virtual time) until id was called n times, failing
// the test when that takes more than an hour.
func waitCalls(t *testing.T, seen *calls, id resource.ID, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Hour)
	for len(seen.of(id)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d calls after an hour, want %d", id, len(seen.of(id)), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func alwaysFails(*A, int) error { return errors.New("always fails") }

// The Runtime's per-item backoff (runtime.WithQueueBackoff) is the
// transform's: a failing input is retried after 1 s, 2 s, 4 s, then 4 s,
// not after the default 100 ms doubling.
func TestTheRuntimeItemBackoffReachesTheTransform(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := newCalls()
		engine := runtimetest.Start(t, runtimetest.WithControllers(failing(seen, alwaysFails)),
			runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, 4*time.Second)))
		runtimetest.Create(t, engine.State, newA("bad", 1))
		waitCalls(t, seen, "bad", 6)
		assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second},
			gaps(seen.of("bad"))[:5])
		assertNoRestart(t, engine.Runtime, "AtoB")
	})
}

// WithRetryPolicy's backoff bounds override the Runtime's for this
// controller.
func TestWithRetryPolicyOverridesTheRuntimeBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := newCalls()
		ctrl := failing(seen, alwaysFails, transform.WithRetryPolicy(controller.RetryPolicy{
			BackoffInitial: 300 * time.Millisecond, BackoffMax: 600 * time.Millisecond,
		}))
		engine := runtimetest.Start(t, runtimetest.WithControllers(ctrl),
			runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, 4*time.Second)))
		runtimetest.Create(t, engine.State, newA("bad", 1))
		waitCalls(t, seen, "bad", 4)
		assert.Equal(t, []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, 600 * time.Millisecond},
			gaps(seen.of("bad"))[:3])
	})
}

// A policy that cannot work is refused when the transform is registered,
// as it is for a QController.
func TestRegistrationRefusesARetryPolicyThatCannotWork(t *testing.T) {
	rt, err := runtime.New(newState(), zap.NewNop())
	require.NoError(t, err)
	for _, p := range []controller.RetryPolicy{
		{BackoffInitial: -time.Second},
		{BackoffInitial: time.Minute, BackoffMax: time.Second},
	} {
		err := rt.RegisterController(aToB("AtoB", transform.WithRetryPolicy(p)))
		require.Error(t, err, "%+v", p)
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.Contains(t, err.Error(), `"AtoB"`)
		assert.Contains(t, err.Error(), "RetryPolicy")
	}
}

// With MaxAttempts an input whose runs failed that many times in a row is
// parked: not retried until it changes, when it runs at once as a fresh
// input (its backoff from the start). The other inputs go on.
func TestMaxAttemptsParksAnInputUntilItChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := newCalls()
		ctrl := failing(seen, func(a *A, n int) error {
			if a.Metadata().ID() == "bad" && a.TypedSpec().N < 10 {
				return errors.New("not yet")
			}
			return nil
		}, transform.WithRetryPolicy(controller.RetryPolicy{MaxAttempts: 3}))
		engine := runtimetest.Start(t, runtimetest.WithControllers(ctrl))
		st := engine.State
		runtimetest.Create(t, st, newA("bad", 1))
		waitCalls(t, seen, "bad", 3)
		time.Sleep(time.Hour)
		assert.Len(t, seen.of("bad"), 3, "parked after 3 failed runs: not retried")
		runtimetest.Create(t, st, newA("good", 2))
		runtimetest.AssertResource(t, st, "good", runtimetest.Holds(hasN(4)))

		// A change brings it back, fresh: 3 more attempts from 100 ms.
		start := time.Now()
		require.NoError(t, st.Modify(t.Context(), newA("bad", 0), func(r resource.Resource) error {
			r.(*A).TypedSpec().N = 2
			return nil
		}))
		waitCalls(t, seen, "bad", 6)
		time.Sleep(time.Hour)
		log := seen.of("bad")
		assert.Len(t, log, 6, "parked again after 3 more")
		assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, gaps(log[3:]))
		assert.Less(t, log[3].at.Sub(start), 100*time.Millisecond, "the change ran it at once")

		require.NoError(t, st.Modify(t.Context(), newA("bad", 0), func(r resource.Resource) error {
			r.(*A).TypedSpec().N = 10
			return nil
		}))
		runtimetest.AssertResource(t, st, "bad", runtimetest.Holds(hasN(20)))
	})
}

// A change to a failing input runs it at once. By default its failures
// keep counting (the next backoff goes on doubling); with
// ChangeAbandonsRetry the change starts its backoff over.
func TestAChangeKeepsOrAbandonsTheRetry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		policy  controller.RetryPolicy
		wantGap time.Duration
	}{
		{"default keeps counting", controller.RetryPolicy{}, 800 * time.Millisecond},
		{"ChangeAbandonsRetry starts over", controller.RetryPolicy{ChangeAbandonsRetry: true}, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				seen := newCalls()
				engine := runtimetest.Start(t, runtimetest.WithControllers(failing(seen, alwaysFails, transform.WithRetryPolicy(tc.policy))))
				st := engine.State
				runtimetest.Create(t, st, newA("bad", 1))
				waitCalls(t, seen, "bad", 3) // failed at 0, 100 ms, 300 ms; next at 700 ms
				require.NoError(t, st.Modify(t.Context(), newA("bad", 0), func(r resource.Resource) error {
					r.(*A).TypedSpec().N = 2
					return nil
				}))
				waitCalls(t, seen, "bad", 5)
				log := seen.of("bad")
				assert.Less(t, log[3].at.Sub(log[2].at), 100*time.Millisecond, "the change ran it at once")
				assert.Equal(t, tc.wantGap, log[4].at.Sub(log[3].at))
			})
		})
	}
}

// A controller.RequeueError wrapping no error is not a failure, and it
// leaves the input's backoff where it was (as for a QController's item,
// rule Q3): the failure after it waits twice the one before.
func TestARequeueLeavesTheBackoffWhereItWas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := newCalls()
		ctrl := record(failing(seen, func(_ *A, n int) error {
			switch n {
			case 2:
				return controller.NewRequeueInterval(5 * time.Second)
			case 5:
				return nil
			}
			return errors.New("fails")
		}))
		engine := runtimetest.Start(t, runtimetest.WithControllers(ctrl))
		runtimetest.Create(t, engine.State, newA("a", 1))
		runtimetest.AssertResource(t, engine.State, "a", runtimetest.Holds(hasN(2)))
		assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 5 * time.Second, 400 * time.Millisecond, 800 * time.Millisecond},
			gaps(seen.of("a")))
		assert.Len(t, ctrl.Errors, 4, "the requeue was not reported as a failure")
	})
}

// TestC3_ADenialParksTheInputUntilItChanges: an input whose transform is
// denied access (TransformExtraOutputFunc writing a type the controller
// does not declare as an output) is a programming error: it is parked at
// once with the denial as the controller's last error, never retried with
// a backoff (issue 27), and runs again when it changes. The others go on.
func TestC3_ADenialParksTheInputUntilItChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := newCalls()
		ctrl := transform.NewController(transform.Settings[*A, *B]{
			Name:            "AtoB",
			MapMetadataFunc: fixture.Map[*A, fixture.BDef],
			TransformFunc:   double,
			TransformExtraOutputFunc: func(ctx context.Context, r controller.ReaderWriter, _ *zap.Logger, a *A, _ *B) error {
				id := a.Metadata().ID()
				if id != "bad" {
					return nil
				}
				err := r.Modify(ctx, fixture.New[fixture.CDef](id, 0), func(resource.Resource) error { return nil })
				seen.add(id, err != nil)
				return err
			},
		})
		engine := runtimetest.Start(t, runtimetest.WithControllers(ctrl))
		st := engine.State
		runtimetest.Create(t, st, newA("bad", 1))
		waitCalls(t, seen, "bad", 1)
		time.Sleep(time.Hour)
		assert.Len(t, seen.of("bad"), 1, "denied once, then parked: not retried")
		status := engine.Runtime.Observe().Controllers()[0]
		assert.Contains(t, status.LastError, "not a declared output")
		runtimetest.Create(t, st, newA("good", 2))
		runtimetest.AssertResource(t, st, "good", runtimetest.Holds(hasN(4)))
		assertNoRestart(t, engine.Runtime, "AtoB")

		// A change runs it again, once.
		require.NoError(t, st.Modify(t.Context(), newA("bad", 0), func(r resource.Resource) error {
			r.(*A).TypedSpec().N = 2
			return nil
		}))
		waitCalls(t, seen, "bad", 2)
		time.Sleep(time.Hour)
		assert.Len(t, seen.of("bad"), 2)
	})
}
