package runtime_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// The tests of this package check what the Runtime documents beyond the
// rules of the contract — its backoffs to the millisecond, its statuses,
// logs and metrics, its cache, its watches' robustness, Settle — and run
// the contract's rules themselves through conformance.RuntimeSuite
// (conformance_test.go), where each rule is tested, once, for every
// Runtime. Unit tests of the Runtime's parts live beside them, in
// internal/....
//
// Every test runs its Runtime with the public test kit (runtimetest.Start),
// inside a testing/synctest bubble: time is virtual, "nothing more
// happens" is synctest.Wait, and backoffs are exact.

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

func primaryOf(typ resource.Type) controller.QSettings {
	return controller.QSettings{Inputs: []controller.Input{in(typ, controller.InputQPrimary)}}
}

// start runs a Runtime for the test with runtimetest.Start (opts add the
// controllers, the state, the runtime options, a logger), inside the
// caller's synctest bubble, and waits until every goroutine of the bubble
// is blocked: the Runtime has started and handled what existed. The Runtime
// logs nowhere unless opts give a logger; leaks are checked by TestMain.
func start(t *testing.T, opts ...runtimetest.Option) *runtimetest.Env {
	t.Helper()
	e := runtimetest.Start(t, append([]runtimetest.Option{runtimetest.WithLogger(zap.NewNop()), runtimetest.WithoutLeakCheck()}, opts...)...)
	synctest.Wait()
	return e
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

// captureRuntime returns a Controller that hands its Runtime to the test
// (on a channel of capacity one) and then waits for its context.
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

func statusOf(t *testing.T, rt *runtime.Runtime, name string) observe.ControllerStatus {
	t.Helper()
	for _, st := range rt.Observe().Controllers() {
		if st.Name == name {
			return st
		}
	}
	require.FailNow(t, "no controller "+name)
	return observe.ControllerStatus{}
}

// callLog records Reconcile calls: the ID and the (virtual) time.
type callLog struct {
	mu    sync.Mutex
	calls []call // protected by mu
}

type call struct {
	at time.Time
	id string
}

func (l *callLog) add(id string) {
	l.mu.Lock()
	l.calls = append(l.calls, call{id: id, at: time.Now()})
	l.mu.Unlock()
}

// take returns the calls made, in order, and forgets them.
func (l *callLog) take() []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls
	l.calls = nil
	return c
}

func ids(calls []call) []string {
	out := make([]string, 0, len(calls))
	for _, c := range calls {
		out = append(out, c.id)
	}
	return out
}

// forwardingState is a test State that forwards the optional
// state.RevisionReporter and state.KindHeadReporter of the State it wraps
// (embedding state.State alone hides them, and the Runtime then falls back
// to its weaker guarantees); test States that change a watch embed it.
type forwardingState struct{ state.State }

func (f forwardingState) Revision(ctx context.Context) (uint64, error) {
	return f.State.(state.RevisionReporter).Revision(ctx)
}

func (f forwardingState) KindRevision(ctx context.Context, k resource.Kind) (uint64, uint64, error) {
	return f.State.(state.RevisionReporter).KindRevision(ctx, k)
}

func (f forwardingState) KindHead(ctx context.Context, k resource.Kind) (state.Bookmark, error) {
	return f.State.(state.KindHeadReporter).KindHead(ctx, k)
}

// warnings returns the WARN and ERROR entries logged, but the Runtime's
// WARNs about input kinds that no controller writes (the tests write
// those inputs themselves).
func warnings(logs *observer.ObservedLogs) []observer.LoggedEntry {
	return logs.Filter(func(e observer.LoggedEntry) bool {
		return e.Level >= zapcore.WarnLevel && e.Message != "no controller writes this input kind; only outside writers wake it"
	}).All()
}
