package qtransform_test

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/controller/mapper"
	"github.com/resgraph/resgraph/pkg/controller/task"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// pollers records the tasks a task runner starts and stops, by input and
// spec.
type pollers struct {
	mu      sync.Mutex
	running map[string]int // input → the N it polls
	started []string
	changed chan struct{} // signalled on every change
}

func (p *pollers) poll(ctx context.Context, _ *zap.Logger, id string, n int) error {
	p.mu.Lock()
	p.running[id] = n
	p.started = append(p.started, id)
	p.mu.Unlock()
	p.signal()
	<-ctx.Done()
	p.mu.Lock()
	delete(p.running, id)
	p.mu.Unlock()
	p.signal()
	return nil
}

func (p *pollers) signal() {
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// await waits until the running tasks are want.
func (p *pollers) await(t *testing.T, want map[string]int, msg string) {
	t.Helper()
	deadline := time.After(runtimetest.DefaultTimeout)
	for !maps.Equal(p.snapshot(), want) {
		select {
		case <-p.changed:
		case <-deadline:
			t.Fatalf("%s: running %v, want %v", msg, p.snapshot(), want)
		}
	}
}

func (p *pollers) snapshot() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.running {
		out[k] = v
	}
	return out
}

// TestHooks_TaskPerInputStartedReplacedStopped: a qtransform with a
// per-input task runner (pkg/controller/task) — TransformFunc sets each
// input's task, FinalizerRemovalFunc removes it, the shutdown hook stops
// the runner — runs one task per input, replaces it when the input
// changes, stops it when the input goes, and leaves none once the Runtime
// stopped; its run hook runs while the controller serves, and is called
// again after a failure.
func TestHooks_TaskPerInputStartedReplacedStopped(t *testing.T) {
	st := newState()
	p := &pollers{running: map[string]int{}, changed: make(chan struct{}, 1)}
	runner := task.NewRunner(zap.NewNop(), p.poll)
	var hookCalls atomic.Int32
	hookRunning := make(chan struct{})
	s := settings("Pollers")
	s.TransformFunc = func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
		runner.Set(a.Metadata().ID(), a.TypedSpec().N)
		return double(ctx, r, l, a, b)
	}
	s.FinalizerRemovalFunc = func(_ context.Context, _ controller.Reader, _ *zap.Logger, a *A) error {
		runner.Remove(a.Metadata().ID())
		return nil
	}
	ctrl := qtransform.NewQController(s,
		qtransform.WithShutdownHook(runner.Stop),
		qtransform.WithRunHook(func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime) error {
			if hookCalls.Add(1) == 1 {
				return errors.New("first call fails")
			}
			close(hookRunning)
			<-ctx.Done()
			return nil
		}))
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))

	runtimetest.Create(t, st, newA("m1", 1), newA("m2", 2))
	runtimetest.AssertResource(t, st, "m2", runtimetest.Holds(fixture.RunningN[*B](4)))
	runtimetest.AssertResource(t, st, "m1", runtimetest.Holds(fixture.RunningN[*B](2)))
	p.await(t, map[string]int{"m1": 1, "m2": 2}, "one task per input")

	fixture.SetN[*A](t, st, ptrA("m1"), 5)
	runtimetest.AssertResource(t, st, "m1", runtimetest.Holds(fixture.RunningN[*B](10)))
	p.await(t, map[string]int{"m1": 5, "m2": 2}, "the changed input's task replaced")

	teardownAndDestroy(t, st, ptrA("m2"))
	p.await(t, map[string]int{"m1": 5}, "the task of an input gone is stopped")

	select { // called again after its failure
	case <-hookRunning:
	case <-time.After(runtimetest.DefaultTimeout):
		t.Fatal("the run hook was not called again after its failure")
	}
	require.NoError(t, e.Stop())
	assert.Empty(t, p.snapshot(), "the shutdown hook stopped every task")
	assert.Equal(t, int32(2), hookCalls.Load())
	assert.Equal(t, []resource.ID{"m1", "m2", "m1"}, sortedFirstTwo(p.started))
}

// sortedFirstTwo sorts the first two starts (concurrent inputs) and keeps
// the rest in order.
func sortedFirstTwo(ids []string) []resource.ID {
	out := append([]resource.ID(nil), ids...)
	if len(out) >= 2 && out[0] > out[1] {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// TestHooks_FinalizerRemovalWritesExtraOutputs: FinalizerRemovalExtraOutputFunc
// may write the controller's extra outputs before its finalizer goes —
// here it tears down and destroys the record (an extra output C) that
// TransformExtraOutputFunc keeps per input, vetoing the removal while the
// record has finalizers; WithExtraMappedDestroyReadyInput brings the input
// back once the record is destroy-ready.
func TestHooks_FinalizerRemovalWritesExtraOutputs(t *testing.T) {
	st := newState()
	s := settings("Recorder")
	s.TransformExtraOutputFunc = func(ctx context.Context, rw controller.ReaderWriter, _ *zap.Logger, a *A, _ *B) error {
		return rw.Modify(ctx, fixture.New[fixture.CDef](a.Metadata().ID(), 0), func(r resource.Resource) error {
			r.(*C).TypedSpec().N = a.TypedSpec().N
			return nil
		})
	}
	s.FinalizerRemovalExtraOutputFunc = func(ctx context.Context, rw controller.ReaderWriter, _ *zap.Logger, a *A) error {
		ptr := fixture.New[fixture.CDef](a.Metadata().ID(), 0).Metadata()
		ready, err := rw.Teardown(ctx, ptr)
		switch {
		case state.IsNotFoundError(err):
			return nil
		case err != nil:
			return err
		case !ready:
			return errors.New("the record still has finalizers")
		}
		return rw.Destroy(ctx, ptr)
	}
	ctrl := qtransform.NewQController(s,
		qtransform.WithExtraOutputs(controller.Output{Type: kindC.Type(), Kind: controller.OutputExclusive}),
		qtransform.WithExtraMappedDestroyReadyInput(mapper.ByID[*C](typed.Kind[*A]())))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))
	ctx := context.Background()

	runtimetest.Create(t, st, newA("a1", 3))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*C](3)))
	require.NoError(t, st.AddFinalizer(ctx, typed.Pointer[*C]("a1"), "hold"))
	_, err := st.Teardown(ctx, ptrA("a1"))
	require.NoError(t, err)
	runtimetest.AssertNoResource[*B](t, st, "a1")
	runtimetest.AssertResource(t, st, "a1", fixture.Meta[*C](func(md *resource.Metadata) bool { return md.Phase() == resource.PhaseTearingDown }))
	md := runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(*resource.Metadata) bool { return true })).Metadata()
	assert.True(t, md.Finalizers().Has("Recorder"), "vetoed while the record has finalizers")

	require.NoError(t, st.RemoveFinalizer(ctx, typed.Pointer[*C]("a1"), "hold"))
	runtimetest.AssertNoResource[*C](t, st, "a1")
	runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(md *resource.Metadata) bool { return md.Finalizers().Empty() }))
}
