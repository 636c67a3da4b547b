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

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/leadership"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// healthOf returns the health rt tells.
func healthOf(t *testing.T, rt *runtime.Runtime) observe.Health {
	t.Helper()
	h, ok := observe.HealthOf(rt.Observe())
	require.True(t, ok, "the Runtime's Observer tells its health")
	return h
}

// checks formats the failing checks of h, sorted as h lists them.
func checks(cs []observe.HealthCheck) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

// TestHealth_ReadyOnceEveryControllerCaughtUp: a Runtime is ready once it
// runs and every controller has caught up with the first listing of its
// inputs — a Controller ended its first pass, a QController ran every item
// the listing queued — and not before: /readyz's text names the
// controllers held back and why. Before Run and after it, neither ready
// nor live.
func TestHealth_ReadyOnceEveryControllerCaughtUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		for _, id := range []string{"1", "2"} {
			mustCreate(t, st, newPair(typeA, id, 1))
		}
		release := make(chan struct{})
		held := &funcController{name: "held", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					select { // its first pass waits for the test
					case <-release:
					case <-ctx.Done():
						return nil
					}
				}
			}}
		q := &funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, _ resource.Pointer) error {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			}}
		rt, err := runtime.New(st, zap.NewNop())
		require.NoError(t, err)
		require.NoError(t, rt.RegisterController(held))
		require.NoError(t, rt.RegisterQController(q))
		h := healthOf(t, rt)
		assert.False(t, h.Ready)
		assert.False(t, h.Live)
		assert.Equal(t, []string{"runtime: not running: Run has not started"}, checks(h.NotReady))

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		synctest.Wait()
		h = healthOf(t, rt)
		assert.True(t, h.Live, "%v", h.NotLive)
		assert.False(t, h.Ready)
		assert.Equal(t, []string{
			"controller held: its first pass has not ended",
			"controller q: catching up with the first listing of its inputs: 1 item due, 1 in flight",
		}, checks(h.NotReady))
		assert.Equal(t, "not ready\n  controller held: its first pass has not ended\n  controller q: catching up with the first listing of its inputs: 1 item due, 1 in flight\n", h.ReadyText())

		close(release)
		synctest.Wait()
		h = healthOf(t, rt)
		assert.True(t, h.Ready, "%v", h.NotReady)
		assert.True(t, h.Live, "%v", h.NotLive)
		assert.Equal(t, "ready\n", h.ReadyText())
		assert.Equal(t, "live\n", h.LiveText())

		// Caught up stays caught up: a later change and its work are not
		// a readiness matter.
		mustCreate(t, st, newPair(typeA, "3", 1))
		assert.True(t, healthOf(t, rt).Ready)

		cancel()
		require.NoError(t, <-done)
		h = healthOf(t, rt)
		assert.False(t, h.Ready)
		assert.False(t, h.Live)
		assert.Equal(t, "not live\n  runtime: not running: Run returned or is stopping\n", h.LiveText())
	})
}

// TestHealth_NotLiveWhileAReconcileIsStuckPastTheBound: a Controller in
// one pass, or a QController item, for longer than the health bound makes
// the Runtime not live, naming the controller (and the item); within the
// bound it is live.
func TestHealth_NotLiveWhileAReconcileIsStuckPastTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		stuck := make(chan struct{})
		c := &funcController{name: "c", inputs: []controller.Input{in(typeB, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				for first := true; ; first = false {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					if !first { // the pass after its start pass is stuck
						select {
						case <-stuck:
						case <-ctx.Done():
							return nil
						}
					}
				}
			}}
		q := &funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, _ resource.Pointer) error {
				select {
				case <-stuck:
				case <-ctx.Done():
				}
				return nil
			}}
		e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(c), runtimetest.WithQControllers(q),
			runtimetest.WithRuntimeOptions(runtime.WithHealthBound(10*time.Second)))
		require.True(t, healthOf(t, e.Runtime).Live)
		mustCreate(t, st, newPair(typeA, "x", 1))
		mustCreate(t, st, newPair(typeB, "y", 1))
		time.Sleep(9 * time.Second)
		synctest.Wait()
		assert.True(t, healthOf(t, e.Runtime).Live, "within the bound")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		h := healthOf(t, e.Runtime)
		assert.False(t, h.Live)
		assert.Equal(t, []string{
			"controller c: stuck in one pass for 11s (the health bound is 10s)",
			"controller q: stuck in one item for 11s (the health bound is 10s); in flight: Reconcile As.test.resgraph.dev(test/x)",
		}, checks(h.NotLive))
		assert.True(t, h.Ready, "readiness is not liveness: %v", h.NotReady)
		close(stuck)
		synctest.Wait()
		assert.True(t, healthOf(t, e.Runtime).Live)
	})
}

// TestHealth_AKindWatchDownPastTheBoundIsNotLive: a kind watch that fails
// and cannot be re-established for longer than the health bound makes the
// Runtime not live, naming the kind and the failure; once it is back, the
// Runtime is live.
func TestHealth_AKindWatchDownPastTheBoundIsNotLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := &faultyState{State: inmem.NewState(), typ: typeA}
		e := start(t, runtimetest.WithState(fs), runtimetest.WithControllers(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)}}),
			runtimetest.WithRuntimeOptions(runtime.WithHealthBound(10*time.Second)))
		fs.mu.Lock()
		fs.failCalls = 1000 // every re-establishment fails
		fs.mu.Unlock()
		fs.breakLatest()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		assert.True(t, healthOf(t, e.Runtime).Live, "down within the bound")
		time.Sleep(10 * time.Second)
		synctest.Wait()
		h := healthOf(t, e.Runtime)
		require.Len(t, h.NotLive, 1)
		assert.Equal(t, "As.test.resgraph.dev(test)", h.NotLive[0].Kind)
		assert.Contains(t, h.NotLive[0].Reason, "its watch has been down for 1")
		assert.Contains(t, h.NotLive[0].Reason, "injected")

		fs.mu.Lock()
		fs.failCalls = 0
		fs.mu.Unlock()
		time.Sleep(time.Minute) // the re-establishment's backoff
		synctest.Wait()
		assert.True(t, healthOf(t, e.Runtime).Live, "%v", healthOf(t, e.Runtime).NotLive)
	})
}

// TestHealth_ReadyNeedsTheLeadershipRole: with leadership, a controller
// whose campaign fails does not know its role: the Runtime is not ready,
// naming the election and the failure; a leader that caught up, like a
// standby, is ready.
func TestHealth_ReadyNeedsTheLeadershipRole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		el := &campaignFails{}
		el.fail.Store(true)
		ctrl := &funcController{name: "c", outputs: []controller.Output{out(typeB, controller.OutputExclusive)}}
		e := start(t, runtimetest.WithControllers(ctrl), runtimetest.WithRuntimeOptions(runtime.WithLeadership(el, runtime.LeadPerRuntime)))
		time.Sleep(time.Second)
		synctest.Wait()
		h := healthOf(t, e.Runtime)
		assert.False(t, h.Ready)
		require.Len(t, h.NotReady, 1)
		assert.Equal(t, "c", h.NotReady[0].Controller)
		assert.Contains(t, h.NotReady[0].Reason, "its leadership role is unknown: its campaign in election runtime failed: the elector's backend is unreachable")

		el.fail.Store(false)
		time.Sleep(time.Minute) // the campaign's backoff
		synctest.Wait()
		h = healthOf(t, e.Runtime)
		assert.True(t, h.Ready, "a standby knows its role: %v", h.NotReady)
	})
}

// campaignFails is an elector whose campaigns fail while fail is set,
// then block (another replica leads: this one is a standby).
type campaignFails struct{ fail atomic.Bool }

func (e *campaignFails) CheckState(state.State) error { return nil }

var errUnreachable = errors.New("the elector's backend is unreachable")

func (e *campaignFails) Campaign(ctx context.Context, _ string) (leadership.Term, error) {
	if e.fail.Load() {
		return nil, errUnreachable
	}
	<-ctx.Done()
	return nil, ctx.Err()
}
