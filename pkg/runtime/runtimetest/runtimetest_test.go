package runtimetest_test

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type NumberSpec struct{ N int }
type NumberDef struct{}

func (NumberDef) Definition() typed.Definition {
	return typed.Definition{Type: "Numbers.test.resgraph.dev", DefaultNamespace: "default"}
}

type Number = typed.Resource[NumberSpec, NumberDef]

type LabelSpec struct{ Text string }
type LabelDef struct{}

func (LabelDef) Definition() typed.Definition {
	return typed.Definition{Type: "Labels.test.resgraph.dev", DefaultNamespace: "default"}
}

type Label = typed.Resource[LabelSpec, LabelDef]

func number(id string, n int) *Number {
	return typed.NewDefault[NumberSpec, NumberDef](id, NumberSpec{N: n})
}

// numberToLabel keeps a Label "number N" for every Number.
func numberToLabel() controller.Controller {
	return transform.NewController(transform.Settings[*Number, *Label]{
		Name: "number-to-label",
		MapMetadataFunc: func(n *Number) *Label {
			return typed.NewDefault[LabelSpec, LabelDef](n.Metadata().ID(), LabelSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, n *Number, l *Label) error {
			l.TypedSpec().Text = "number " + strconv.Itoa(n.TypedSpec().N)
			return nil
		},
	})
}

// TestAssertResourceNoResourceAndAll: a predicate (Holds) is an
// assertion; the resource returned is a private copy; AssertAll sees the
// kind's list sorted by ID.
func TestAssertResourceNoResourceAndAll(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithControllers(numberToLabel()))
	runtimetest.Create(t, e.State, number("one", 1), number("two", 2))

	l := runtimetest.AssertResource(t, e.State, "one", runtimetest.Holds(func(l *Label) bool { return l.TypedSpec().Text == "number 1" }))
	assert.Equal(t, "number-to-label", l.Metadata().Owner())
	l.TypedSpec().Text = "mine" // a private copy: the state is not changed

	all := runtimetest.AssertAll(t, e.State, runtimetest.Holds(func(ls []*Label) bool { return len(ls) == 2 }))
	assert.Equal(t, "one", all[0].Metadata().ID(), "sorted by ID")
	assert.Equal(t, "number 2", all[1].TypedSpec().Text)

	require.NoError(t, e.State.Destroy(t.Context(), typed.Pointer[*Number]("one")))
	runtimetest.AssertNoResource[*Label](t, e.State, "one")
	runtimetest.AssertAll(t, e.State, runtimetest.Holds(func(ls []*Label) bool { return len(ls) == 1 }))
}

// TestHoldsOnMetadata waits for a finalizer and a phase, and reports the
// last state seen when the condition does not hold.
func TestHoldsOnMetadata(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := runtimetest.Start(t)
		ptr := typed.Pointer[*Number]("one")
		runtimetest.Create(t, e.State, number("one", 1))
		changed := make(chan error, 1)
		go func() {
			synctest.Wait() // the test goroutine waits in AssertResource
			err := e.State.AddFinalizer(t.Context(), ptr, "keeper")
			if err == nil {
				_, err = e.State.Teardown(t.Context(), ptr)
			}
			changed <- err
		}()
		n := runtimetest.AssertResource(t, e.State, "one", runtimetest.Holds(func(n *Number) bool {
			return n.Metadata().Finalizers().Has("keeper") && n.Metadata().Phase() == resource.PhaseTearingDown
		}))
		require.NoError(t, <-changed)
		md := n.Metadata()
		assert.True(t, md.Finalizers().Has("keeper"))
		assert.Equal(t, resource.PhaseTearingDown, md.Phase())
		md.Finalizers().Remove("keeper") // a private copy: the state is not changed
		cur, err := e.State.Get(t.Context(), ptr)
		require.NoError(t, err)
		assert.True(t, cur.Metadata().Finalizers().Has("keeper"))

		msg := run(t, func(tb testing.TB) {
			runtimetest.AssertResource(tb, e.State, "one", runtimetest.Holds(func(n *Number) bool { return n.Metadata().Owner() == "nobody" }))
		})
		assert.Contains(t, msg, "assert Numbers.test.resgraph.dev(default): not passed within 30s")
		assert.Contains(t, msg, "--- one: Error:      \tcondition 1 of 1 does not hold")
		assert.Contains(t, msg, "keeper", "the last state seen")
	})
}

func TestSettleReturnsOnceTheChainIsDone(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithControllers(numberToLabel()))
	for i := range 20 {
		id := "n" + strconv.Itoa(i)
		runtimetest.Create(t, e.State, number(id, i))
		runtimetest.Settle(t, e.Runtime)
		// No waiting: the label is there once the Runtime settled.
		l, err := safe.StateGet[*Label](t.Context(), e.State, typed.Pointer[*Label](id))
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, "number "+strconv.Itoa(i), l.TypedSpec().Text)
	}
}

// failTB records a Fatalf (and the Errorf before it) instead of failing,
// so that the reports of the kit can be checked.
type failTB struct {
	testing.TB
	msg string

	mu   sync.Mutex
	errs []string // protected by mu: Errorf may be called from any goroutine
}

func (f *failTB) Helper() {}

func (f *failTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

// errors returns what Errorf recorded.
func (f *failTB) errors() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.errs, "\n")
}

func (f *failTB) Fatalf(format string, args ...any) {
	f.msg = strings.TrimSpace(fmt.Sprintf(format, args...))
	goruntime.Goexit()
}

// run calls fn with a failTB on its own goroutine (Fatalf ends it with
// runtime.Goexit, as testing does) and returns the failure message.
func run(t *testing.T, fn func(tb testing.TB)) string {
	f := &failTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.msg
}

// TestStartReportsARefusedRegistrationOnce: a registration the Runtime
// refuses fails the test with the Runtime's error, its prefix said once.
func TestStartReportsARefusedRegistrationOnce(t *testing.T) {
	msg := run(t, func(tb testing.TB) {
		runtimetest.Start(tb, runtimetest.WithControllers((*funcController)(nil)))
	})
	assert.Equal(t, "runtimetest: register controller: nil controller", msg)
	msg = run(t, func(tb testing.TB) {
		runtimetest.Start(tb, runtimetest.WithQControllers(controller.QController(nil)))
	})
	assert.Equal(t, "runtimetest: register qcontroller: nil controller", msg)
}

// TestTimeoutsReportWhatIsMissing runs in a synctest bubble: the kit's
// 30-second deadlines pass in virtual time.
func TestTimeoutsReportWhatIsMissing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		stuck := &funcController{name: "stuck", input: typed.Kind[*Number](), run: func(ctx context.Context) {
			select {
			case <-block:
			case <-ctx.Done():
			}
		}}
		e := runtimetest.Start(t, runtimetest.WithControllers(stuck, numberToLabel()))
		runtimetest.Create(t, e.State, number("one", 1))

		msg := run(t, func(tb testing.TB) {
			runtimetest.AssertResource(tb, e.State, "one", runtimetest.Holds(func(l *Label) bool { return l.TypedSpec().Text == "never" }))
		})
		assert.Contains(t, msg, "assert Labels.test.resgraph.dev(default): not passed within 30s")
		assert.Contains(t, msg, `Text:number 1`, "the last state seen")

		msg = run(t, func(tb testing.TB) { runtimetest.AssertNoResource[*Number](tb, e.State, "one") })
		assert.Contains(t, msg, "assert Numbers.test.resgraph.dev(default/one) gone")

		msg = run(t, func(tb testing.TB) {
			runtimetest.AssertAll(tb, e.State, runtimetest.Holds(func(ls []*Label) bool { return len(ls) == 3 }))
		})
		assert.Contains(t, msg, "last state: IDs [one]")

		msg = run(t, func(tb testing.TB) { runtimetest.Settle(tb, e.Runtime) })
		assert.Contains(t, msg, "did not settle within 30s")
		assert.Contains(t, msg, "controller stuck: in a reconcile pass", "names the busy controller")
		close(block)
		runtimetest.Settle(t, e.Runtime)
	})
}

// TestSynctestBackoffTakesNoWallTime retries a QController item with the
// default backoff (100ms, doubling) eight times inside a bubble: exactly
// 25.5s of the bubble's virtual clock, which only the backoff's timers
// advance (no wall-clock bound: the test does not wait for real time).
func TestSynctestBackoffTakesNoWallTime(t *testing.T) {
	outside := time.Now()
	synctest.Test(t, func(t *testing.T) {
		require.True(t, time.Now().Before(outside), "the bubble's clock is virtual (it starts in 2000)")
		var tries atomic.Int32
		q := &funcQController{name: "flaky", primary: typed.Kind[*Number](), output: "Labels.test.resgraph.dev",
			reconcile: func(ctx context.Context, r controller.QRuntime, p resource.Pointer) error {
				if tries.Add(1) <= 8 {
					return errors.New("not yet")
				}
				return r.Create(ctx, typed.NewDefault[LabelSpec, LabelDef](p.ID(), LabelSpec{Text: "done"}))
			}}
		e := runtimetest.Start(t, runtimetest.WithQControllers(q), runtimetest.WithLogger(zap.NewNop()))
		virtual := time.Now()
		runtimetest.Create(t, e.State, number("one", 1))

		runtimetest.Settle(t, e.Runtime) // the first failure is done; the retry waits out its backoff
		st := e.Runtime.Observe().Activity(t.Context())
		require.True(t, st.Idle())
		assert.Equal(t, 1, st.Controllers[0].Delayed)

		runtimetest.AssertResource(t, e.State, "one", runtimetest.Holds(func(l *Label) bool { return l.TypedSpec().Text == "done" }))
		assert.EqualValues(t, 9, tries.Load())
		assert.Equal(t, 25500*time.Millisecond, time.Since(virtual), "virtual time: 100ms+200ms+...+12.8s")
	})
}

// TestSettleWorksOnAnyRuntime settles a Runtime the test built itself.
func TestSettleWorksOnAnyRuntime(t *testing.T) {
	st := inmem.NewState()
	rt, err := runtime.New(st, zap.NewNop())
	require.NoError(t, err)
	require.NoError(t, rt.RegisterController(numberToLabel()))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	defer func() {
		cancel()
		assert.NoError(t, <-done)
	}()
	runtimetest.Create(t, st, number("x", 7))
	runtimetest.Settle(t, rt)
	_, err = safe.StateGet[*Label](t.Context(), st, typed.Pointer[*Label]("x"))
	require.NoError(t, err)
}

// TestSettleTakesTheTestsTimeout: SetTimeout is the one timeout knob, and
// Within overrides it for one call, for Settle as for the assertions.
func TestSettleTakesTheTestsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		stuck := &funcController{name: "stuck", input: typed.Kind[*Number](), run: func(ctx context.Context) {
			select {
			case <-block:
			case <-ctx.Done():
			}
		}}
		e := runtimetest.Start(t, runtimetest.WithControllers(stuck))
		runtimetest.Create(t, e.State, number("one", 1))
		start := time.Now()
		msg := run(t, func(tb testing.TB) {
			runtimetest.SetTimeout(tb, 2*time.Second)
			runtimetest.Settle(tb, e.Runtime)
		})
		assert.Contains(t, msg, "did not settle within 2s")
		assert.Equal(t, 2*time.Second, time.Since(start), "virtual time waited")
		start = time.Now()
		msg = run(t, func(tb testing.TB) {
			runtimetest.SetTimeout(tb, 2*time.Second)
			runtimetest.Settle(tb, e.Runtime, runtimetest.Within(time.Second))
		})
		assert.Contains(t, msg, "did not settle within 1s")
		assert.Equal(t, time.Second, time.Since(start), "virtual time waited")
		close(block)
		runtimetest.Settle(t, e.Runtime, runtimetest.Except("stuck"))
	})
}

func TestStopReturnsRunsResult(t *testing.T) {
	e := runtimetest.Start(t)
	require.NoError(t, e.Stop())
	require.NoError(t, e.Stop(), "idempotent")
	err := e.Runtime.RegisterController(numberToLabel())
	require.Error(t, err, "the Runtime stopped")
}

// funcController is a Controller over one input kind that calls run on
// each event.
type funcController struct {
	name  string
	input resource.Kind
	run   func(ctx context.Context)
}

func (c *funcController) Name() string { return c.name }
func (c *funcController) Inputs() []controller.Input {
	return []controller.Input{{Namespace: c.input.Namespace(), Type: c.input.Type(), Kind: controller.InputWeak}}
}
func (c *funcController) Outputs() []controller.Output { return nil }
func (c *funcController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		c.run(ctx)
	}
}

// funcQController is a QController with one primary input and one output.
type funcQController struct {
	name      string
	primary   resource.Kind
	output    resource.Type
	reconcile func(ctx context.Context, r controller.QRuntime, p resource.Pointer) error
}

func (c *funcQController) Name() string { return c.name }
func (c *funcQController) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs:  []controller.Input{{Namespace: c.primary.Namespace(), Type: c.primary.Type(), Kind: controller.InputQPrimary}},
		Outputs: []controller.Output{{Type: c.output, Kind: controller.OutputExclusive}},
	}
}
func (c *funcQController) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
	return c.reconcile(ctx, r, p)
}
func (c *funcQController) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// TestExampleStart runs the test ExampleStart shows.
func TestExampleStart(t *testing.T) { numberGetsALabel(t) }
