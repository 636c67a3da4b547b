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
func TestT19_AFailingInputDoesNotDelayTheOthers(t *testing.T) {
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
		runtimetest.Await(t, st, "good", hasN(4))
		assert.Less(t, time.Since(start), transform.RetryBackoffInitial, "the healthy input waited for the failing one")

		// Let the failing input go through two more retries: its schedule
		// is its own, not moved by the other input's events.
		for len(seen.of("bad")) < 11 {
			time.Sleep(time.Second)
		}
		bad := seen.of("bad")
		for i := 1; i < len(bad); i++ {
			want := transform.RetryBackoffInitial << (i - 1)
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
func TestT20_TransientFailuresAreRetriedPerInput(t *testing.T) {
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
		runtimetest.AwaitAll(t, st, func(bs []*B) bool {
			if len(bs) != n {
				return false
			}
			for i, b := range bs {
				if b.TypedSpec().N != 2*i {
					return false
				}
			}
			return true
		})
		// Settled: idle now, and still without a call 10 virtual minutes
		// later (no retry was left).
		engine.Settle(t)
		total := seen.total()
		time.Sleep(10 * time.Minute)
		engine.Settle(t)
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
func TestT21_RequeueErrorRetriesTheInputAfterItsInterval(t *testing.T) {
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
		runtimetest.Await(t, engine.State, "a1", hasN(8))
		assert.Equal(t, 10*time.Second, time.Since(start), "requeued twice, 5 s each")
		assert.Empty(t, ctrl.Errors, "a requeue that wraps no error is not a failure")
		assertNoRestart(t, engine.Runtime, "AtoB")
	})
}

// Issue 9 item 7: a failure's error names what failed, and each resource
// once: a refused write is the write, a veto is the removal function.
func TestT22_TheErrorNamesWhatFailed(t *testing.T) {
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

		runtimetest.Await(t, st, "a1", hasN(2))
		_, err = st.Teardown(ctx, ptrA("a1"))
		require.NoError(t, err)
		err = ctrl.Await(t, func(err error) bool { return strings.Contains(err.Error(), "not yet") })
		assert.Equal(t, "input "+resource.PointerString(ptrA("a1"))+`: remove finalizer "AtoB": FinalizerRemovalFunc: not yet`, err.Error())
	})
}
