package route

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestRoutedKind_AwaitReturnsOnceRoutedAndLeavesNoWaiter: Await returns
// at once for a revision routed, once the watch routes it otherwise; a
// waiter that gives up (its context) or whose watch stopped leaves no
// barrier behind, so reads that keep giving up never grow the router.
func TestRoutedKind_AwaitReturnsOnceRoutedAndLeavesNoWaiter(t *testing.T) {
	r := New(Config{Logger: zap.NewNop()})
	rk := r.RoutedKind(resource.KindOf(resource.NewKind("ns", "Ts.test")))
	b := &rk.w.barriers

	b.reached(5)
	require.NoError(t, rk.Await(t.Context(), 5), "routed already")
	assert.Equal(t, uint64(5), rk.Routed())

	done := make(chan error)
	go func() { done <- rk.Await(t.Context(), 7) }()
	for b.pending.Load() == 0 { // the waiter is registered: wait on that condition
		select {
		case err := <-done:
			t.Fatalf("Await returned before the revision was routed: %v", err)
		default:
			runtime.Gosched()
		}
	}
	b.reached(6)
	b.reached(7)
	require.NoError(t, <-done)
	assert.Zero(t, b.pending.Load())

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, rk.Await(ctx, 9), context.Canceled)
	assert.Zero(t, b.pending.Load(), "a waiter that gave up is forgotten")

	close(rk.w.relists.stopped)
	assert.ErrorIs(t, rk.Await(t.Context(), 9), ErrStopped)
	assert.Zero(t, b.pending.Load(), "nor one whose watch stopped")
}
