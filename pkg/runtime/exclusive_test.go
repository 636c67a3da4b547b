package runtime_test

import (
	"context"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// selfMapped is a QController whose primary input kind is also its mapped
// input (as qtransform's WithExtraMappedInput of its own input type does):
// every change of a pointer queues both its Reconcile and its MapInput.
func selfMapped(concurrency uint, reconcile, mapInput func(p resource.Pointer)) *funcQController {
	return &funcQController{name: "q",
		settings: controller.QSettings{
			Inputs:      []controller.Input{in(typeA, controller.InputQPrimary), in(typeA, controller.InputQMapped)},
			Concurrency: optional.Some(concurrency),
		},
		reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
			reconcile(p)
			return nil
		},
		mapInput: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
			mapInput(p)
			return []resource.Pointer{p}, nil
		}}
}

// TestReconcileAndMapInputOfOnePointerNeverOverlap: what the runtime adds
// to rule Q2 (see RegisterQController's doc): a pointer is never reconciled and
// mapped at once.
// Issue 14: with the same kind as primary and mapped input, Reconcile(p)
// and MapInput(p) ran concurrently.
func TestReconcileAndMapInputOfOnePointerNeverOverlap(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		inReconcile := make(chan struct{})
		release := make(chan struct{})
		var mapped, mappedDuringReconcile atomic.Int32
		var first, reconciling atomic.Bool
		st := start(t, runtimetest.WithQControllers(selfMapped(2,
			func(resource.Pointer) {
				reconciling.Store(true)
				defer reconciling.Store(false)
				if first.CompareAndSwap(false, true) { // the first call waits for the test
					inReconcile <- struct{}{}
					<-release
				}
			},
			func(resource.Pointer) {
				mapped.Add(1)
				if reconciling.Load() {
					mappedDuringReconcile.Add(1)
				}
			}))).State

		mustCreate(t, st, newPair(typeA, "x", 0))
		<-inReconcile
		synctest.Wait() // a second worker is free: it would take MapInput(x) now
		assert.Zero(t, mappedDuringReconcile.Load(), "MapInput(x) ran while Reconcile(x) was running")
		close(release)
		synctest.Wait()
		assert.Positive(t, mapped.Load(), "MapInput(x) ran once Reconcile(x) was done")
	})
}

// sink keeps the stress test's busy work from being optimized away.
var sink atomic.Uint64

// TestReconcileAndMapInputStress: 2,000 updates of 20 resources with
// 4 workers never run Reconcile and MapInput of one pointer at once (the
// issue measured 77 overlaps in such a run).
func TestReconcileAndMapInputStress(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	running := map[string]string{} // pointer ID -> "reconcile" or "map"; protected by mu
	var overlaps, calls atomic.Int32
	enter := func(op string) func(p resource.Pointer) {
		return func(p resource.Pointer) {
			calls.Add(1)
			mu.Lock()
			if _, busy := running[p.ID()]; busy {
				overlaps.Add(1)
			}
			running[p.ID()] = op
			mu.Unlock()
			// Some work (about 10 µs), so that calls can overlap.
			h := uint64(len(p.ID()))
			for j := range 20000 {
				h = h*31 + uint64(j)
			}
			sink.Add(h)
			goruntime.Gosched()
			mu.Lock()
			delete(running, p.ID())
			mu.Unlock()
		}
	}
	// Outside a bubble: on the wall clock, with real scheduling.
	e := runtimetest.Start(t, runtimetest.WithLogger(zap.NewNop()), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(selfMapped(4, enter("reconcile"), enter("map"))))
	rt, st := e.Runtime, e.State
	ctx := t.Context()
	for i := range 2000 {
		id := strconv.Itoa(i % 20)
		require.NoError(t, st.Modify(ctx, newPair(typeA, id, 0), func(r resource.Resource) error {
			r.(*Pair).TypedSpec().A = i
			return nil
		}))
	}
	runtimetest.Settle(t, rt)
	assert.Zero(t, overlaps.Load(), "overlapping calls of one pointer out of %d calls", calls.Load())
}
