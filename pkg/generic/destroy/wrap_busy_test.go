package destroy_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/destroy"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// gated is a Controller whose every pass waits on gate.
type gated struct{ gate chan struct{} }

func (gated) Name() string { return "gated" }
func (gated) Inputs() []controller.Input {
	return []controller.Input{{Namespace: kindA.Namespace(), Type: kindA.Type(), Kind: controller.InputWeak}}
}
func (gated) Outputs() []controller.Output { return []controller.Output{{Type: kindC.Type()}} }
func (g gated) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		select {
		case <-g.gate:
		case <-ctx.Done():
			return nil
		}
	}
}

// TestWrappedControllerIsBusyUntilItsPassEnds: the pass a wake-up starts
// is the wrapped controller's: the Runtime sees the controller busy until
// inner's Run comes back to EventCh, so that a wait for quiet
// (runtimetest.Settle) does not return while inner still works.
func TestWrappedControllerIsBusyUntilItsPassEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := gated{gate: make(chan struct{}, 1)}
		w, err := destroy.Wrap(g, kindC)
		require.NoError(t, err)
		e := runtimetest.Start(t, runtimetest.WithControllers(w), runtimetest.WithLogger(zap.NewNop()))
		synctest.Wait() // inner took its start event and waits at the gate
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		idle := make(chan error, 1)
		go func() { idle <- runtimetest.RealTimeWaitIdle(ctx, e.Runtime) }()
		synctest.Wait()
		select {
		case <-idle:
			t.Fatalf("idle while inner's Run is in its pass: %s", e.Runtime.Observe().Activity(ctx))
		default:
		}
		g.gate <- struct{}{}
		synctest.Wait() // inner's pass ended: it waits in EventCh again
		select {
		case err := <-idle:
			require.NoError(t, err)
		default:
			t.Fatalf("not idle once inner's pass ended: %s", e.Runtime.Observe().Activity(ctx))
		}
	})
}
