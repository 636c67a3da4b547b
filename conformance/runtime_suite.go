package conformance

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// RuntimeSuite is a testify suite that checks a [controller.Engine] against
// the controller rules C1–C9, the QController rules Q1–Q5 and the Runtime
// rules E1–E3 of the contract, one or more tests per rule, named after it
// (TestC2_CoalescingWhileBusy, TestQ3_..., TestE1_...). It drives the
// Runtime with the example controllers of this package and observes it
// through the public API only. It is where resgraph's own Runtime is
// checked against those rules (package runtime runs it); the Runtime's own
// tests check what it documents beyond them.
//
// Run it from a test of the Runtime:
//
//	func TestRuntimeConformance(t *testing.T) {
//		suite.Run(t, &conformance.RuntimeSuite{
//			NewEngine: func(t *testing.T) (controller.Engine, state.State) {
//				st := inmem.NewState()
//				rt, err := runtime.New(st, zaptest.NewLogger(t))
//				require.NoError(t, err)
//				return rt, st
//			},
//		})
//	}
//
// Every test runs inside a [testing/synctest] bubble, so that time is
// virtual: backoffs and requeue intervals are measured exactly and cost no
// wall-clock time, and "nothing more happens" is checked by waiting until
// every goroutine of the bubble is durably blocked ([synctest.Wait]) instead
// of sleeping. NewEngine is called inside the bubble; the Runtime and the
// state must therefore run entirely in goroutines they start themselves
// (no goroutine, network or process outside the bubble), which an
// in-process Runtime over an in-memory state does.
//
// Each test makes a fresh Runtime, registers its controllers, runs the
// Runtime in a goroutine, and at the end cancels Run's context and checks
// that Run returns nil within [RuntimeStopDeadline] (virtual time). Waits
// for a condition end with a failure after [RuntimeWaitDeadline]. Leaked
// goroutines are left to the caller's goleak.VerifyTestMain (and synctest
// itself fails a test whose goroutines outlive it).
//
// A backend whose Runtime or state cannot run in a bubble (a state that
// does network I/O) sets RealTime: every test then runs on the wall clock
// (see [RealTime]), none is skipped.
//
// Runtimes that also implement [DependencyGraphProvider] are checked against
// rule E2; for the others that test is skipped. Assumptions beyond the
// contract's letter, stated so a Runtime author can tell a failure from a
// disagreement: the restart backoff (C6) and the per-item backoff (Q3)
// grow by a factor of at least 1.5 per failure, with jitter of at most
// ±50% (cenkalti/backoff's defaults), and their maximum is at least four
// times their initial delay; so the fifth delay is always longer than the
// first, and than any delay right after a reset. Rule C2's "one
// ReconcileEvent at start" is read strictly: resources that exist when the
// controller starts are not changes and wake it no further.
type RuntimeSuite struct {
	suite.Suite

	// NewEngine returns a fresh Runtime that is not running yet, over a
	// fresh, empty State, which the suite uses to set up and inspect
	// resources. It is called once per test, inside the test's synctest
	// bubble, with the bubble's *testing.T (use it for loggers and
	// cleanups). Runtime options are the factory's choice, but the
	// restart and per-item backoffs must let five consecutive failures
	// pass well within RuntimeWaitDeadline (an initial delay of 100 ms or
	// less does; time is virtual, so short delays cost nothing). The State
	// must accept any namespace: the suite uses a few fixed ones
	// ([DefaultNamespace], [SumNamespace], [MappedNamespace], "elsewhere",
	// "weak", "other", "dyn", "dyn1", "dyn2", and "hostile-..." in the
	// TestHostile_* tests), which never collide since every test has a
	// fresh State.
	NewEngine func(t *testing.T) (controller.Engine, state.State)

	// NewEngineOver, when set, returns a fresh Runtime, not running yet,
	// over st: a State the suite builds around the fresh State of a
	// NewEngine call (whose Runtime it does not run) to make its watches
	// misbehave. TestHostile_ForeignStateWatchesFailSafely needs it and is
	// skipped without it. It is called like NewEngine (in the bubble, with
	// its *testing.T).
	NewEngineOver func(t *testing.T, st state.State) controller.Engine

	// RealTime, when set, runs every test in real time instead of in a
	// synctest bubble; NewEngine is then called with the test's own
	// *testing.T, and its Runtime's backoffs must be the short ones that
	// RealTime.Backoff states.
	RealTime *RealTime
}

// DependencyGraphProvider is the optional capability of a Runtime that
// reports its dependency graph (rule E2).
type DependencyGraphProvider interface {
	GetDependencyGraph() (*controller.DependencyGraph, error)
}

const (
	// RuntimeWaitDeadline bounds, in the bubble's virtual time, every wait
	// of the suite for a condition.
	RuntimeWaitDeadline = 10 * time.Second
	// RuntimeStopDeadline bounds, in virtual time, how long Run may take
	// to return after its context is canceled (rule E1 says one second for
	// controllers that honour their context; every example controller
	// does).
	RuntimeStopDeadline = time.Second

	// waitTick is the polling period of waits, in virtual time.
	waitTick = 5 * time.Millisecond
)

// runtimeEnv is one test's Runtime, state and helpers. All its methods run
// on the bubble's root goroutine.
type runtimeEnv struct {
	t       *testing.T
	require *require.Assertions
	assert  *assert.Assertions
	engine  controller.Engine
	state   state.State
	ctx     context.Context // the test's context

	cancelRun context.CancelFunc // cancels Run's context; nil until start
	runDone   chan error         // receives Run's result

	rt   *RealTime // the real-time mode; nil in a bubble
	held []string  // controllers held at a gate (real time; see hold)
}

// inBubble runs body in a synctest bubble with a fresh Runtime, and stops
// the Runtime (if body started it) when body returns or fails.
// With RealTime set, it runs body on the wall clock instead.
func (s *RuntimeSuite) inBubble(body func(e *runtimeEnv)) {
	s.Require().NotNil(s.NewEngine, "RuntimeSuite.NewEngine is not set")
	if s.RealTime != nil {
		s.inRealTime(body)
		return
	}
	synctest.Test(s.T(), func(t *testing.T) {
		eng, st := s.NewEngine(t)
		require.NotNil(t, eng, "NewEngine returned a nil Runtime")
		require.NotNil(t, st, "NewEngine returned a nil state")
		e := &runtimeEnv{
			t: t, require: require.New(t), assert: assert.New(t),
			engine: eng, state: st, ctx: t.Context(),
			runDone: make(chan error, 1),
		}
		defer e.stop()
		body(e)
	})
}

// start runs the Runtime in a goroutine.
func (e *runtimeEnv) start() {
	e.t.Helper()
	e.require.Nil(e.cancelRun, "Runtime started twice by the test")
	ctx, cancel := context.WithCancel(e.ctx)
	e.cancelRun = cancel
	done := e.runDone
	go func() { done <- e.engine.Run(ctx) }()
}

// stop cancels Run's context and checks that Run returns nil within
// RuntimeStopDeadline of virtual time (in real time, within
// RuntimeWaitDeadline: a liveness bound, not E1's second, which a loaded
// machine's scheduling may exceed); it returns how long Run took to
// return. It does nothing when the Runtime was not started or was
// stopped already.
func (e *runtimeEnv) stop() time.Duration {
	if e.cancelRun == nil || e.runDone == nil {
		return 0
	}
	deadline := RuntimeStopDeadline
	if e.rt != nil {
		deadline = RuntimeWaitDeadline
	}
	begin := time.Now()
	e.cancelRun()
	done := e.runDone
	e.runDone = nil
	t := time.NewTimer(deadline)
	defer t.Stop()
	select {
	case err := <-done:
		e.assert.NoError(err, "Run must return nil after its context is canceled")
	case <-t.C:
		e.t.Errorf("Run did not return within %s after its context was canceled (rule E1)", deadline)
	}
	return time.Since(begin)
}

// settle waits until every goroutine of the bubble but the test's is
// durably blocked: whatever the last action triggered without a timer has
// happened. In real time it waits until the Runtime is idle but for the
// held controllers.
func (e *runtimeEnv) settle() {
	e.t.Helper()
	if e.rt != nil {
		e.waitIdle()
		return
	}
	synctest.Wait()
}

// eventually waits, in virtual time (or real time), until cond holds, or
// fails the test after RuntimeWaitDeadline; it then settles.
func (e *runtimeEnv) eventually(cond func() bool, msgAndArgs ...any) {
	e.t.Helper()
	e.settle()
	e.require.Eventually(cond, RuntimeWaitDeadline, waitTick, msgAndArgs...)
	e.settle()
}

// wakeStep is a change made while a controller runs, and whether it must
// wake the controller.
type wakeStep struct {
	name   string
	change func()
	fires  bool
}

// expectWakes makes each change in order and checks that wakes (the
// controller's count of ReconcileEvents, from before the first step) grows
// by exactly one after a step that fires and stays put after one that does
// not. Messages start with rule.
func (e *runtimeEnv) expectWakes(rule string, wakes func() int, from int, steps []wakeStep) {
	e.t.Helper()
	want := from
	for _, step := range steps {
		step.change()
		if step.fires {
			want++
			e.eventually(func() bool { return wakes() >= want }, rule+": no ReconcileEvent after: %s", step.name)
		} else {
			e.settle()
		}
		e.assert.Equal(want, wakes(), rule+": ReconcileEvents after: %s", step.name)
	}
}

// registerController registers c, which must succeed.
func (e *runtimeEnv) registerController(c controller.Controller) {
	e.t.Helper()
	e.require.NoError(e.engine.RegisterController(c), "RegisterController(%s)", c.Name())
}

// registerQController registers c, which must succeed.
func (e *runtimeEnv) registerQController(c controller.QController) {
	e.t.Helper()
	e.require.NoError(e.engine.RegisterQController(c), "RegisterQController(%s)", c.Name())
}

// create creates r in the state with the given owner.
func (e *runtimeEnv) create(r resource.Resource, owner string) {
	e.t.Helper()
	e.require.NoError(e.state.Create(e.ctx, r, state.WithCreateOwner(owner)), "create %s", resource.String(r))
}

// setInt writes value into the user-owned IntResource ns/id, creating it
// when absent.
func (e *runtimeEnv) setInt(ns resource.Namespace, id resource.ID, value int) {
	e.t.Helper()
	e.require.NoError(e.state.Modify(e.ctx, NewIntResource(ns, id, 0), func(r resource.Resource) error {
		in, err := as[*IntResource](r)
		if err != nil {
			return err
		}
		in.TypedSpec().Value = value
		return nil
	}), "write IntResource %s/%s", ns, id)
}

// setStr writes value into the StrResource ns/id owned by owner, creating
// it when absent.
func (e *runtimeEnv) setStr(ns resource.Namespace, id resource.ID, value, owner string) {
	e.t.Helper()
	e.require.NoError(e.state.Modify(e.ctx, NewStrResource(ns, id, ""), func(r resource.Resource) error {
		s, err := as[*StrResource](r)
		if err != nil {
			return err
		}
		s.TypedSpec().Value = value
		return nil
	}, state.WithUpdateOwner(owner)), "write StrResource %s/%s", ns, id)
}

// destroy destroys the user-owned resource ptr.
func (e *runtimeEnv) destroy(ptr resource.Pointer) {
	e.t.Helper()
	e.require.NoError(e.state.Destroy(e.ctx, ptr), "destroy %s", resource.PointerString(ptr))
}

// get returns the resource ptr points to, or nil when it does not exist;
// any other error fails the test.
func (e *runtimeEnv) get(ptr resource.Pointer) resource.Resource {
	e.t.Helper()
	r, err := e.state.Get(e.ctx, ptr)
	if state.IsNotFoundError(err) {
		return nil
	}
	e.require.NoError(err, "get %s", resource.PointerString(ptr))
	return r
}

// exists reports whether ptr exists. It never fails the test, so that
// conditions of eventually (which run on other goroutines) may call it.
func (e *runtimeEnv) exists(ptr resource.Pointer) bool {
	_, err := e.state.Get(e.ctx, ptr)
	return err == nil
}

// strValue returns the value of the StrResource ns/id and whether it
// exists. It never fails the test.
func (e *runtimeEnv) strValue(ns resource.Namespace, id resource.ID) (string, bool) {
	r, err := e.state.Get(e.ctx, strPtr(ns, id))
	if err != nil {
		return "", false
	}
	s, err := as[*StrResource](r)
	if err != nil {
		return "", false
	}
	return s.TypedSpec().Value, true
}

// intValue returns the value of the IntResource ns/id and whether it
// exists. It never fails the test.
func (e *runtimeEnv) intValue(ns resource.Namespace, id resource.ID) (int, bool) {
	r, err := e.state.Get(e.ctx, intPtr(ns, id))
	if err != nil {
		return 0, false
	}
	in, err := as[*IntResource](r)
	if err != nil {
		return 0, false
	}
	return in.TypedSpec().Value, true
}

// waitStr waits until the StrResource ns/id holds value.
func (e *runtimeEnv) waitStr(ns resource.Namespace, id resource.ID, value string) {
	e.t.Helper()
	e.eventually(func() bool {
		v, ok := e.strValue(ns, id)
		return ok && v == value
	}, "StrResource %s/%s never held %q", ns, id, value)
}

// waitGone waits until ptr does not exist.
func (e *runtimeEnv) waitGone(ptr resource.Pointer) {
	e.t.Helper()
	e.eventually(func() bool {
		_, err := e.state.Get(e.ctx, ptr)
		return state.IsNotFoundError(err)
	}, "%s was never destroyed", resource.PointerString(ptr))
}

// probeResults waits until the probe made every access and returns the
// results by name.
func (e *runtimeEnv) probeResults(results func() ([]AccessResult, bool)) map[string]error {
	e.t.Helper()
	e.eventually(func() bool { _, done := results(); return done }, "the probe never made its accesses")
	list, _ := results()
	byName := make(map[string]error, len(list))
	for _, r := range list {
		byName[r.Name] = r.Err
	}
	return byName
}

// assertRefused checks that err refuses an access of controller name to
// the resource of type typ (and ID id when not empty): it is an error whose
// message names both, and it is not a not-found error.
func (e *runtimeEnv) assertRefused(access string, err error, name string, typ resource.Type, id resource.ID) {
	e.t.Helper()
	if !e.assert.Error(err, "%s: access must be refused", access) {
		return
	}
	e.assert.False(state.IsNotFoundError(err), "%s: refusal must not be a not-found error: %v", access, err)
	msg := err.Error()
	e.assert.True(strings.Contains(msg, name), "%s: error %q must name the controller %q", access, msg, name)
	e.assert.True(strings.Contains(msg, typ), "%s: error %q must name the resource type %q", access, msg, typ)
	if id != "" {
		e.assert.True(strings.Contains(msg, id), "%s: error %q must name the resource ID %q", access, msg, id)
	}
}

// gaps returns the durations between consecutive times.
func gaps(times []time.Time) []time.Duration {
	var d []time.Duration
	for i := 1; i < len(times); i++ {
		d = append(d, times[i].Sub(times[i-1]))
	}
	return d
}

// Shorthands for the example kinds.

func intPtr(ns resource.Namespace, id resource.ID) resource.Pointer {
	return resource.NewPointer(ns, IntResourceType, id)
}

func strPtr(ns resource.Namespace, id resource.ID) resource.Pointer {
	return resource.NewPointer(ns, StrResourceType, id)
}

func input(ns resource.Namespace, typ resource.Type, kind controller.InputKind) controller.Input {
	return controller.Input{Namespace: ns, Type: typ, Kind: kind}
}

func someID(id resource.ID) optional.Optional[resource.ID] { return optional.Some(id) }
