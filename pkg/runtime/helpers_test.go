package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testNS is the namespace of every test resource.
const testNS = "test"

// Test resource types; every one is a Pair with its type set in the
// metadata.
const (
	typeA = "As.test.resgraph.dev"
	typeB = "Bs.test.resgraph.dev"
	typeC = "Cs.test.resgraph.dev"
	typeD = "Ds.test.resgraph.dev"
	typeE = "Es.test.resgraph.dev"
	typeX = "Xs.test.resgraph.dev"
)

// PairSpec is the spec of every test resource: two ints.
type PairSpec struct{ A, B int }

type pairDef struct{}

func (pairDef) Definition() typed.Definition {
	return typed.Definition{Type: typeA, DefaultNamespace: testNS}
}

// Pair is the test resource.
type Pair = typed.Resource[PairSpec, pairDef]

func newPair(typ resource.Type, id resource.ID, a int) *Pair {
	return typed.New[PairSpec, pairDef](resource.NewMetadata(testNS, typ, id, resource.VersionUndefined), PairSpec{A: a})
}

func ptr(typ resource.Type, id resource.ID) resource.Pointer {
	return resource.NewPointer(testNS, typ, id)
}

func kind(typ resource.Type) resource.Kind { return resource.NewKind(testNS, typ) }

func specA(t testing.TB, r resource.Resource) int {
	t.Helper()
	p, ok := r.(*Pair)
	require.True(t, ok, "resource %T is not a *Pair", r)
	return p.TypedSpec().A
}

func in(typ resource.Type, k controller.InputKind) controller.Input {
	return controller.Input{Namespace: testNS, Type: typ, Kind: k}
}

func inID(typ resource.Type, id resource.ID, k controller.InputKind) controller.Input {
	return controller.Input{Namespace: testNS, Type: typ, ID: optional.Some(id), Kind: k}
}

func out(typ resource.Type, k controller.OutputKind) controller.Output {
	return controller.Output{Type: typ, Kind: k}
}

// funcController is a Controller built from fields.
type funcController struct {
	run     func(ctx context.Context, r controller.Runtime, l *zap.Logger) error
	name    string
	inputs  []controller.Input
	outputs []controller.Output
}

func (c *funcController) Name() string                 { return c.name }
func (c *funcController) Inputs() []controller.Input   { return c.inputs }
func (c *funcController) Outputs() []controller.Output { return c.outputs }
func (c *funcController) Run(ctx context.Context, r controller.Runtime, l *zap.Logger) error {
	if c.run == nil {
		<-ctx.Done()
		return nil
	}
	return c.run(ctx, r, l)
}

// funcQController is a QController built from fields.
type funcQController struct {
	reconcile func(ctx context.Context, l *zap.Logger, r controller.QRuntime, p resource.Pointer) error
	mapInput  func(ctx context.Context, l *zap.Logger, r controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error)
	name      string
	settings  controller.QSettings
}

func (c *funcQController) Name() string                   { return c.name }
func (c *funcQController) Settings() controller.QSettings { return c.settings }
func (c *funcQController) Reconcile(ctx context.Context, l *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
	if c.reconcile == nil {
		return nil
	}
	return c.reconcile(ctx, l, r, p)
}

func (c *funcQController) MapInput(ctx context.Context, l *zap.Logger, r controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
	if c.mapInput == nil {
		return nil, nil
	}
	return c.mapInput(ctx, l, r, p)
}

// newEngine returns an engine over a fresh in-memory state.
func newEngine(t testing.TB, opts ...Option) (*Runtime, state.State) {
	t.Helper()
	st := inmem.NewState()
	rt, err := New(st, zap.NewNop(), opts...)
	require.NoError(t, err)
	return rt, st
}

// startEngine runs rt until the test ends (or stop is called) and checks
// that Run returns nil.
func startEngine(t testing.TB, rt *Runtime) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
	}
	t.Cleanup(stop)
	return stop
}

// captureRuntime returns a Controller that hands its Runtime to the test
// and then waits for its context.
func captureRuntime(name string, inputs []controller.Input, outputs []controller.Output) (*funcController, <-chan controller.Runtime) {
	ch := make(chan controller.Runtime, 1)
	return &funcController{
		name:    name,
		inputs:  inputs,
		outputs: outputs,
		run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
			select {
			case ch <- r:
			default:
			}
			<-ctx.Done()
			return nil
		},
	}, ch
}

// recvWithin receives from ch or fails after a generous deadline.
func recvWithin[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		require.FailNow(t, "timed out waiting for a value")
		var zero T
		return zero
	}
}

// eventCounter counts the ReconcileEvents a Controller receives; each pass
// waits for a token on gate when gate is not nil.
type eventCounter struct {
	events chan struct{}
	gate   chan struct{}
}

func newEventCounter(gated bool) *eventCounter {
	ec := &eventCounter{events: make(chan struct{}, 1024)}
	if gated {
		ec.gate = make(chan struct{})
	}
	return ec
}

func (ec *eventCounter) run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		ec.events <- struct{}{}
		if ec.gate != nil {
			select {
			case <-ctx.Done():
				return nil
			case <-ec.gate:
			}
		}
	}
}

// count drains and returns the number of events received since the last
// call.
func (ec *eventCounter) count() int {
	n := 0
	for {
		select {
		case <-ec.events:
			n++
		default:
			return n
		}
	}
}

func mustCreate(t testing.TB, st state.State, r resource.Resource, opts ...state.CreateOption) {
	t.Helper()
	require.NoError(t, st.Create(context.Background(), r, opts...))
}
