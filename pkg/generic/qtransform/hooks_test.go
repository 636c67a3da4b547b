package qtransform_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/controller/task"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// pollers records the tasks a task runner starts and stops, by input and
// spec.
type pollers struct {
	mu      sync.Mutex
	running map[string]int // input → the N it polls
	started []string
}

func (p *pollers) poll(ctx context.Context, _ *zap.Logger, id string, n int) error {
	p.mu.Lock()
	p.running[id] = n
	p.started = append(p.started, id)
	p.mu.Unlock()
	<-ctx.Done()
	p.mu.Lock()
	delete(p.running, id)
	p.mu.Unlock()
	return nil
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
	p := &pollers{running: map[string]int{}}
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
	runtimetest.Await(t, st, "m2", fixture.RunningN[*B](4))
	runtimetest.Await(t, st, "m1", fixture.RunningN[*B](2))
	assert.Equal(t, map[string]int{"m1": 1, "m2": 2}, p.snapshot(), "one task per input")

	fixture.SetN[*A](t, st, ptrA("m1"), 5)
	runtimetest.Await(t, st, "m1", fixture.RunningN[*B](10))
	assert.Equal(t, map[string]int{"m1": 5, "m2": 2}, p.snapshot(), "the changed input's task replaced")

	teardownAndDestroy(t, st, ptrA("m2"))
	assert.Equal(t, map[string]int{"m1": 5}, p.snapshot(), "the task of an input gone is stopped")

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
