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
	"github.com/resgraph/resgraph/pkg/resource"
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

// endingTerm is a term whose Done closes when end is closed (lost).
type endingTerm struct {
	n     uint64
	since time.Time
	end   chan struct{}
}

func (t *endingTerm) Election() string      { return runtime.RuntimeElection }
func (t *endingTerm) Number() uint64        { return t.n }
func (t *endingTerm) Since() time.Time      { return t.since }
func (t *endingTerm) Fence() state.Fence    { return fakeFence{} }
func (t *endingTerm) Done() <-chan struct{} { return t.end }
func (t *endingTerm) Resign(context.Context) error {
	return nil
}

func (t *endingTerm) Err() error {
	select {
	case <-t.end:
		return leadership.ErrLost
	default:
		return nil
	}
}

// termRecorder records the terms the contexts of a Controller's Runs
// and of a QController's Reconciles and MapInputs carry.
type termRecorder struct {
	mu   sync.Mutex
	seen map[string][]leadership.TermInfo // by "run", "reconcile", "map"; guarded by mu
}

func (r *termRecorder) record(what string, ctx context.Context) {
	t, ok := leadership.FromContext(ctx)
	if !ok {
		t = leadership.TermInfo{Election: "none"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string][]leadership.TermInfo{}
	}
	r.seen[what] = append(r.seen[what], t)
}

func (r *termRecorder) last(what string) leadership.TermInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seen[what]) == 0 {
		return leadership.TermInfo{}
	}
	return r.seen[what][len(r.seen[what])-1]
}

// controllers returns a Controller and a QController (primary input A,
// mapped input C) that record their terms.
func (r *termRecorder) controllers() (*funcController, *funcQController) {
	c := &funcController{name: "c", outputs: []controller.Output{out(typeB, controller.OutputExclusive)},
		run: func(ctx context.Context, _ controller.Runtime, _ *zap.Logger) error {
			r.record("run", ctx)
			<-ctx.Done()
			return nil
		}}
	q := &funcQController{name: "q",
		settings: controller.QSettings{
			Inputs:  []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)},
			Outputs: []controller.Output{out(typeD, controller.OutputExclusive)},
		},
		reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, _ resource.Pointer) error {
			r.record("reconcile", ctx)
			return nil
		},
		mapInput: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
			r.record("map", ctx)
			return []resource.Pointer{ptr(typeA, p.ID())}, nil
		}}
	return c, q
}

// TestE4_ControllerReadsItsTermFromItsContext: under leadership, the
// context of a Controller's Run and of a QController's Reconcile and
// MapInput carries the term the replica leads (election, number, since);
// after the term is lost and a new one won, the controllers run again
// under contexts that carry the new term.
func TestE4_ControllerReadsItsTermFromItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		since := time.Now()
		first := &endingTerm{n: 7, since: since, end: make(chan struct{})}
		second := &endingTerm{n: 12, since: since.Add(time.Hour), end: make(chan struct{})}
		el := &scriptedElector{script: []func() leadership.Term{
			func() leadership.Term { return first },
			func() leadership.Term { return second },
		}}
		var rec termRecorder
		c, q := rec.controllers()
		e := start(t, runtimetest.WithControllers(c), runtimetest.WithQControllers(q), runtimetest.WithRuntimeOptions(runtime.WithLeadership(el, runtime.LeadPerRuntime)))

		runtimetest.Create(t, e.State, newPair(typeA, "a1", 1), newPair(typeC, "a1", 1))
		synctest.Wait()
		want := leadership.TermInfo{Election: runtime.RuntimeElection, Number: 7, Since: since}
		for _, what := range []string{"run", "reconcile", "map"} {
			assert.Equal(t, want, rec.last(what), "%s under the first term", what)
		}

		close(first.end) // lost: the Runtime stops the controllers and campaigns again
		time.Sleep(time.Minute)
		synctest.Wait()
		runtimetest.Create(t, e.State, newPair(typeA, "a2", 1), newPair(typeC, "a2", 1))
		synctest.Wait()
		want = leadership.TermInfo{Election: runtime.RuntimeElection, Number: 12, Since: since.Add(time.Hour)}
		for _, what := range []string{"run", "reconcile", "map"} {
			assert.Equal(t, want, rec.last(what), "%s under the second term", what)
		}
	})
}

// TestE4_NoTermWithoutLeadership: without runtime.WithLeadership the
// controllers' contexts carry no term.
func TestE4_NoTermWithoutLeadership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec termRecorder
		c, q := rec.controllers()
		e := start(t, runtimetest.WithControllers(c), runtimetest.WithQControllers(q))
		runtimetest.Create(t, e.State, newPair(typeA, "a1", 1), newPair(typeC, "a1", 1))
		synctest.Wait()
		for _, what := range []string{"run", "reconcile", "map"} {
			assert.Equal(t, leadership.TermInfo{Election: "none"}, rec.last(what), what)
		}
	})
}
