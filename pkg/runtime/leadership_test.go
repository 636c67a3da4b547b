package runtime_test

import (
	"context"
	"sync"
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
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// The Runtime's side of leadership against a real etcd elector is tested
// in the etcd state's module (leadership_test.go, ha_test.go). Here: the
// elector is user code, and the Runtime survives one that misbehaves.

// scriptedElector hands out the terms of its script, one per Campaign,
// then blocks; it accepts any state.
type scriptedElector struct {
	mu     sync.Mutex
	script []func() leadership.Term // guarded by mu
}

func (e *scriptedElector) CheckState(state.State) error { return nil }

func (e *scriptedElector) Campaign(ctx context.Context, _ string) (leadership.Term, error) {
	e.mu.Lock()
	if len(e.script) == 0 {
		e.mu.Unlock()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	next := e.script[0]
	e.script = e.script[1:]
	e.mu.Unlock()
	return next(), nil
}

type fakeFence struct{}

func (fakeFence) String() string { return "a fake fence" }

// scriptedTerm is a term whose accessors may panic.
type scriptedTerm struct {
	panicNumber bool
	noFence     bool
	resigned    *atomic.Int32
}

func (t scriptedTerm) Election() string { return "runtime" }
func (t scriptedTerm) Number() uint64 {
	if t.panicNumber {
		panic("Number broke")
	}
	return 9
}
func (t scriptedTerm) Since() time.Time { return time.Now() }
func (t scriptedTerm) Fence() state.Fence {
	if t.noFence {
		return nil
	}
	return fakeFence{}
}
func (t scriptedTerm) Done() <-chan struct{} { return nil }
func (t scriptedTerm) Err() error            { return nil }
func (t scriptedTerm) Resign(context.Context) error {
	t.resigned.Add(1)
	return nil
}

// TestLeadership_ElectorIsUserCode: a Campaign that panics, a term whose
// accessors panic and a term without a fence are failures of the
// campaign (the bad terms resigned), retried after the backoff; the
// Runtime goes on, and runs the controller under the first good term.
func TestLeadership_ElectorIsUserCode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var resigned atomic.Int32
		el := &scriptedElector{script: []func() leadership.Term{
			func() leadership.Term { panic("Campaign broke") },
			func() leadership.Term { return scriptedTerm{panicNumber: true, resigned: &resigned} },
			func() leadership.Term { return scriptedTerm{noFence: true, resigned: &resigned} },
			func() leadership.Term { return scriptedTerm{resigned: &resigned} },
		}}
		var runs atomic.Int32
		ctrl := &funcController{name: "c", outputs: []controller.Output{out(typeB, controller.OutputExclusive)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				runs.Add(1)
				<-ctx.Done()
				return nil
			}}
		e := start(t, runtimetest.WithControllers(ctrl), runtimetest.WithRuntimeOptions(runtime.WithLeadership(el, runtime.LeadPerRuntime)))
		time.Sleep(10 * time.Second) // virtual: the campaign's backoffs
		synctest.Wait()
		assert.Equal(t, int32(1), runs.Load())
		assert.Equal(t, int32(2), resigned.Load(), "the two bad terms were resigned")
		st := e.Runtime.Observe().Controllers()
		require.Len(t, st, 1)
		require.NotNil(t, st[0].Leadership)
		assert.Equal(t, observe.RoleLeader, st[0].Leadership.Role)
		assert.Equal(t, uint64(9), st[0].Leadership.Term)
	})
}
