package conformance

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/siderolabs/gen/optional"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// stringPanics is a panic value whose String method panics too.
type stringPanics struct{}

func (stringPanics) String() string { panic("hostile String") }

// hostileBehaviour is what hostile user code does instead of returning
// normally: it returns one of these errors, or panics.
type hostileBehaviour struct {
	name string
	// do returns the hostile error, or panics.
	do func() error
}

// hostileBehaviours are the behaviours of the TestHostile_* Runtime tests.
func hostileBehaviours() []hostileBehaviour {
	return []hostileBehaviour{
		{"returns a typed-nil *controller.RequeueError", func() error {
			var rq *controller.RequeueError
			return rq
		}},
		{"returns a typed-nil error of its own type", func() error {
			var e *nilError
			return e
		}},
		{"returns an error chain holding a typed-nil RequeueError", func() error {
			return fmt.Errorf("wrapped: %w", (*controller.RequeueError)(nil))
		}},
		{"returns an error whose Error panics", func() error { return hostileError{} }},
		{"returns a RequeueError wrapping an error whose Error panics", func() error {
			return controller.NewRequeueError(hostileError{}, 100*time.Millisecond)
		}},
		{"panics with a value whose String panics", func() error { panic(stringPanics{}) }},
		{"panics with an error whose Error panics", func() error { panic(hostileError{}) }},
		{"panics with nil", func() error { panic(nil) }},
	}
}

// hostileQController is a QController whose Reconcile (or MapInput, with
// mapped) of the resource "bad" behaves as hostile says, and succeeds for
// any other resource. Its primary input is the IntResources of its
// namespace; its mapped input the StrResources, which map to the
// IntResource of the same ID.
type hostileQController struct {
	name    string
	ns      resource.Namespace
	hostile hostileBehaviour
	mapped  bool
	calls   callCounts[string] // Reconcile and MapInput calls, "map "+ID for MapInput
}

func (c *hostileQController) Name() string { return c.name }

func (c *hostileQController) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs: []controller.Input{
			{Namespace: c.ns, Type: IntResourceType, Kind: controller.InputQPrimary},
			{Namespace: c.ns, Type: StrResourceType, Kind: controller.InputQMapped},
		},
		Concurrency: optional.Some[uint](2),
	}
}

func (c *hostileQController) Reconcile(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
	c.calls.add(p.ID())
	if !c.mapped && p.ID() == "bad" {
		return c.hostile.do()
	}
	return nil
}

func (c *hostileQController) MapInput(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
	c.calls.add("map " + p.ID())
	if c.mapped && p.ID() == "bad" {
		return nil, c.hostile.do()
	}
	return []resource.Pointer{intPtr(c.ns, p.ID())}, nil
}

// TestHostile_QControllerUserCodeFailsOnlyItsItem: Reconcile or MapInput
// returning a typed-nil error (a *RequeueError among them), an error whose
// Error panics, or panicking with a value that cannot even be printed,
// fails that item only (rules Q3, Q5): the item is retried, the
// controller's other items and the other controllers go on, and Run
// returns when its context is canceled (rule E1).
func (s *RuntimeSuite) TestHostile_QControllerUserCodeFailsOnlyItsItem() {
	s.inBubble(func(e *runtimeEnv) {
		var qs []*hostileQController
		for i, h := range hostileBehaviours() {
			for _, mapped := range []bool{false, true} {
				q := &hostileQController{name: fmt.Sprintf("hostile-q-%d-%v", i, mapped), ns: fmt.Sprintf("hostile-%d-%v", i, mapped), hostile: h, mapped: mapped}
				e.registerQController(q)
				qs = append(qs, q)
			}
		}
		canary := &WakeCounterController{ControllerName: "canary", ControllerInputs: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}}
		e.registerController(canary)
		e.start()
		for _, q := range qs {
			if q.mapped {
				e.setStr(q.ns, "bad", "x", "")
			} else {
				e.setInt(q.ns, "bad", 1)
			}
			e.setInt(q.ns, "good", 1)
		}
		for _, q := range qs {
			bad := "bad"
			if q.mapped {
				bad = "map bad"
			}
			e.eventually(func() bool { return q.calls.get(bad) >= 2 }, "%s: the item whose %s %s is retried", q.name, map[bool]string{false: "Reconcile", true: "MapInput"}[q.mapped], q.hostile.name)
			e.eventually(func() bool { return q.calls.get("good") >= 1 }, "%s: the other items go on", q.name)
		}
		wakes := canary.Wakes()
		e.setInt(DefaultNamespace, "canary", 1)
		e.eventually(func() bool { return canary.Wakes() > wakes }, "another controller goes on")
		e.t.Logf("%d hostile QControllers", len(qs))
	})
}

// hostileController is a Controller whose first Run takes its start event
// and then behaves as hostile says; later Runs take their events and do
// nothing.
type hostileController struct {
	name    string
	hostile hostileBehaviour
	runs    atomic.Int32
}

func (c *hostileController) Name() string                 { return c.name }
func (c *hostileController) Inputs() []controller.Input   { return nil }
func (c *hostileController) Outputs() []controller.Output { return nil }

func (c *hostileController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	first := c.runs.Add(1) == 1
	for {
		select {
		case <-r.EventCh():
		case <-ctx.Done():
			return nil
		}
		if first {
			return c.hostile.do()
		}
	}
}

// idle takes the controller's events and does nothing until ctx is done,
// as a Run loop that is done with its work does.
func idle(ctx context.Context, r controller.Runtime) error {
	for {
		select {
		case <-r.EventCh():
		case <-ctx.Done():
			return nil
		}
	}
}

// TestHostile_ControllerUserCodeIsRestarted: a Controller whose Run returns
// a typed-nil error, an error whose Error panics, or panics with a value
// that cannot be printed, is restarted like any failing Controller (rule
// C6): the Runtime neither crashes nor hangs, the other controllers go on,
// and Run returns when its context is canceled.
func (s *RuntimeSuite) TestHostile_ControllerUserCodeIsRestarted() {
	s.inBubble(func(e *runtimeEnv) {
		var cs []*hostileController
		for i, h := range hostileBehaviours() {
			c := &hostileController{name: fmt.Sprintf("hostile-c-%d", i), hostile: h}
			e.registerController(c)
			cs = append(cs, c)
		}
		canary := &WakeCounterController{ControllerName: "canary", ControllerInputs: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}}
		e.registerController(canary)
		e.start()
		for _, c := range cs {
			e.eventually(func() bool { return c.runs.Load() >= 2 }, "%s: a Run that %s is restarted", c.name, c.hostile.name)
		}
		wakes := canary.Wakes()
		e.setInt(DefaultNamespace, "canary", 1)
		e.eventually(func() bool { return canary.Wakes() > wakes }, "another controller goes on")
		e.t.Logf("%d hostile Controllers", len(cs))
	})
}

// badCallsController makes, in its first pass, every call of its runtime
// with a bad argument or a nil option, and records the results.
type badCallsController struct {
	ns      resource.Namespace
	results chan map[string]error
}

func (c *badCallsController) Name() string { return "bad-calls" }
func (c *badCallsController) Inputs() []controller.Input {
	return []controller.Input{input(c.ns, IntResourceType, controller.InputStrong)}
}

func (c *badCallsController) Outputs() []controller.Output {
	return []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}}
}

func (c *badCallsController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	select {
	case <-r.EventCh():
	case <-ctx.Done():
		return nil
	}
	var nilStr *StrResource
	var nilMD *resource.Metadata
	own := func(id resource.ID) *StrResource { return NewStrResource(c.ns, id, "v") }
	noop := func(resource.Resource) error { return nil }
	res := map[string]error{}
	call := func(name string, fn func() error) {
		panicked, err := callRecovering(fn)
		if panicked != nil {
			err = fmt.Errorf("panicked: %v", panicked)
		}
		res[name] = err
	}
	// Bad arguments: invalid-class errors.
	call("invalid: Get(nil)", func() error { _, err := r.Get(ctx, nil); return err })
	call("invalid: Get(typed-nil pointer)", func() error { _, err := r.Get(ctx, nilMD); return err })
	call("invalid: List(nil kind)", func() error { _, err := r.List(ctx, nil); return err })
	call("invalid: Create(nil)", func() error { return r.Create(ctx, nil) })
	call("invalid: Create(typed-nil resource)", func() error { return r.Create(ctx, nilStr) })
	call("invalid: Update(nil)", func() error { return r.Update(ctx, nil) })
	call("invalid: Modify(nil resource)", func() error { return r.Modify(ctx, nil, noop) })
	call("invalid: Modify(nil function)", func() error { return r.Modify(ctx, own("m"), nil) })
	call("invalid: ModifyWithResult(typed-nil resource)", func() error {
		_, err := r.ModifyWithResult(ctx, nilStr, noop)
		return err
	})
	call("invalid: Teardown(nil)", func() error { _, err := r.Teardown(ctx, nil); return err })
	call("invalid: Destroy(typed-nil pointer)", func() error { return r.Destroy(ctx, nilMD) })
	call("invalid: AddFinalizer(nil)", func() error { return r.AddFinalizer(ctx, nil, "f") })
	call("invalid: RemoveFinalizer(typed-nil pointer)", func() error { return r.RemoveFinalizer(ctx, nilMD, "f") })
	call("invalid: ContextWithTeardown(nil)", func() error { _, err := r.ContextWithTeardown(ctx, nil); return err })
	call("invalid: UpdateInputs(input with an empty type)", func() error {
		return r.UpdateInputs([]controller.Input{{Namespace: c.ns, Kind: controller.InputWeak}})
	})
	call("invalid: CleanupOutputs(nil kind)", func() error { return r.CleanupOutputs(ctx, nil) })
	// Nil options: skipped.
	call("ok: Get(ptr, nil)", func() error { _, err := r.Get(ctx, intPtr(c.ns, "in"), nil); return err })
	call("ok: List(kind, nil, WithLabelQuery(nil))", func() error {
		_, err := r.List(ctx, resource.NewKind(c.ns, IntResourceType), nil, state.WithLabelQuery(nil))
		return err
	})
	call("ok: Create(r, nil)", func() error { return r.Create(ctx, own("a"), nil) })
	call("ok: Modify(r, fn, nil)", func() error { return r.Modify(ctx, own("a"), noop, nil) })
	call("ok: ModifyWithResult(r, fn, nil)", func() error {
		_, err := r.ModifyWithResult(ctx, own("a"), noop, nil, controller.WithExpectedPhaseAny())
		return err
	})
	call("ok: AddFinalizer, RemoveFinalizer", func() error {
		if err := r.AddFinalizer(ctx, intPtr(c.ns, "in"), "f"); err != nil {
			return err
		}
		return r.RemoveFinalizer(ctx, intPtr(c.ns, "in"), "f")
	})
	call("ok: Teardown(ptr, nil)", func() error { _, err := r.Teardown(ctx, strPtr(c.ns, "a"), nil); return err })
	call("ok: Destroy(ptr, nil)", func() error { return r.Destroy(ctx, strPtr(c.ns, "a"), nil) })
	call("ok: UpdateInputs(nil)", func() error { return r.UpdateInputs(nil) })
	c.results <- res
	return idle(ctx, r)
}

// TestHostile_RuntimeCallsWithBadArguments: a controller's runtime refuses
// a bad argument — a nil or typed-nil pointer, kind or resource, a nil
// function, an input with an empty type — with an invalid-class error, and
// never panics; a nil option is skipped (rules C3–C5 and the state package
// doc's rule on options).
func (s *RuntimeSuite) TestHostile_RuntimeCallsWithBadArguments() {
	s.inBubble(func(e *runtimeEnv) {
		c := &badCallsController{ns: "hostile-calls", results: make(chan map[string]error, 1)}
		e.setInt(c.ns, "in", 1)
		e.registerController(c)
		e.start()
		var res map[string]error
		e.eventually(func() bool {
			select {
			case res = <-c.results:
				return true
			default:
				return res != nil
			}
		}, "the controller never made its calls")
		for name, err := range res {
			switch {
			case len(name) > 3 && name[:3] == "ok:":
				e.assert.NoError(err, name)
			default:
				e.assert.True(state.IsInvalidError(err), "%s: want an invalid-class error, got %v", name, describe(err))
			}
		}
		e.assert.False(e.exists(strPtr(c.ns, "a")), "the output written with nil options was destroyed with them")
		e.t.Logf("%d calls with bad arguments or nil options", len(res))
	})
}

// declPanics is a controller whose declaration method named by what
// panics.
type declPanics struct{ what string }

func (d *declPanics) Name() string {
	if d.what == "Name" {
		panic("hostile Name")
	}
	return "decl-" + d.what
}

func (d *declPanics) Inputs() []controller.Input {
	if d.what == "Inputs" {
		panic(stringPanics{})
	}
	return nil
}

func (d *declPanics) Outputs() []controller.Output {
	if d.what == "Outputs" {
		panic(hostileError{})
	}
	return nil
}

func (d *declPanics) Settings() controller.QSettings {
	if d.what == "Settings" {
		panic("hostile Settings")
	}
	return controller.QSettings{Inputs: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputQPrimary)}}
}

func (d *declPanics) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	return idle(ctx, r)
}

func (d *declPanics) Reconcile(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
	return nil
}

func (d *declPanics) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// TestHostile_BadRegistrationsAreRefused: a nil or typed-nil controller,
// and declaration methods that panic (with values that cannot even be
// printed), are refused by registration with an error, before and during
// Run (rules C1, E3); the Runtime goes on.
func (s *RuntimeSuite) TestHostile_BadRegistrationsAreRefused() {
	s.inBubble(func(e *runtimeEnv) {
		var nilC *hostileController
		var nilQ *hostileQController
		registrations := map[string]func() error{
			"RegisterController(nil)":           func() error { return e.engine.RegisterController(nil) },
			"RegisterController(typed nil)":     func() error { return e.engine.RegisterController(nilC) },
			"RegisterQController(nil)":          func() error { return e.engine.RegisterQController(nil) },
			"RegisterQController(typed nil)":    func() error { return e.engine.RegisterQController(nilQ) },
			"RegisterController(Name panics)":   func() error { return e.engine.RegisterController(&declPanics{what: "Name"}) },
			"RegisterController(Inputs panics)": func() error { return e.engine.RegisterController(&declPanics{what: "Inputs"}) },
			"RegisterController(Outputs panics)": func() error {
				return e.engine.RegisterController(&declPanics{what: "Outputs"})
			},
			"RegisterQController(Settings panics)": func() error {
				return e.engine.RegisterQController(&declPanics{what: "Settings"})
			},
		}
		check := func(when string) {
			for name, reg := range registrations {
				panicked, err := callRecovering(reg)
				e.assert.Nil(panicked, "%s %s panicked", name, when)
				e.assert.Error(err, "%s %s must be refused", name, when)
			}
		}
		check("before Run")
		canary := &WakeCounterController{ControllerName: "canary", ControllerInputs: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}}
		e.registerController(canary)
		e.start()
		check("during Run")
		wakes := canary.Wakes()
		e.setInt(DefaultNamespace, "canary", 1)
		e.eventually(func() bool { return canary.Wakes() > wakes }, "the Runtime goes on")
		e.t.Logf("%d bad registrations, twice", len(registrations))
	})
}

// misbehavingWatches is a State whose kind watches (WatchKind and
// WatchKindAggregated) of IntResources in namespace ns relay the real
// stream up to and including its first Bootstrapped event, then misbehave
// once — the first such watch only; later watches are honest. With
// panicFirst, the first such call panics instead.
type misbehavingWatches struct {
	state.State
	ns resource.Namespace
	// bad is the misbehaviour: it gets the watch's context and a function
	// that sends one batch of events (or one event, for WatchKind), and
	// the function that closes the stream.
	bad        func(ctx context.Context, send func([]state.Event), closeStream func())
	panicFirst bool
	used       atomic.Bool
}

func (m *misbehavingWatches) hostile(k resource.Kind) bool {
	return k != nil && k.Namespace() == m.ns && k.Type() == IntResourceType && !m.used.Swap(true)
}

func (m *misbehavingWatches) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if !m.hostile(k) {
		return m.State.WatchKindAggregated(ctx, k, ch, opts...)
	}
	if m.panicFirst {
		panic("hostile WatchKindAggregated")
	}
	inner := make(chan []state.Event)
	wctx, cancel := context.WithCancel(ctx)
	if err := m.State.WatchKindAggregated(wctx, k, inner, opts...); err != nil {
		cancel()
		return err
	}
	go func() {
		defer cancel()
		send := func(b []state.Event) {
			select {
			case ch <- b:
			case <-ctx.Done():
			}
		}
		for {
			select {
			case b := <-inner:
				send(b)
				for _, ev := range b {
					if ev.Type == state.Bootstrapped {
						m.bad(ctx, send, func() { close(ch) })
						return
					}
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
}

func (m *misbehavingWatches) WatchKind(ctx context.Context, k resource.Kind, ch chan<- state.Event, opts ...state.WatchKindOption) error {
	if !m.hostile(k) {
		return m.State.WatchKind(ctx, k, ch, opts...)
	}
	if m.panicFirst {
		panic("hostile WatchKind")
	}
	inner := make(chan state.Event)
	wctx, cancel := context.WithCancel(ctx)
	if err := m.State.WatchKind(wctx, k, inner, opts...); err != nil {
		cancel()
		return err
	}
	go func() {
		defer cancel()
		send := func(b []state.Event) {
			for _, ev := range b {
				select {
				case ch <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
		for {
			select {
			case ev := <-inner:
				send([]state.Event{ev})
				if ev.Type == state.Bootstrapped {
					m.bad(ctx, send, func() { close(ch) })
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
}

// TestHostile_ForeignStateWatchesFailSafely: a Runtime over a State whose
// kind watch, after its bootstrap, closes its stream, sends an Errored
// event, a change without a resource or with a resource whose Metadata
// panics, or whose watch call itself panics, neither crashes nor stops: the
// controllers of the kind still get every resource (the Runtime watches
// again). Needs NewEngineOver; skipped without it.
func (s *RuntimeSuite) TestHostile_ForeignStateWatchesFailSafely() {
	if s.NewEngineOver == nil {
		s.T().Skip("RuntimeSuite.NewEngineOver is not set")
	}
	const ns = "hostile-watch"
	cases := []struct {
		name       string
		bad        func(ctx context.Context, send func([]state.Event), closeStream func())
		panicFirst bool
	}{
		{"stream closed", func(_ context.Context, _ func([]state.Event), closeStream func()) { closeStream() }, false},
		{"Errored event", func(_ context.Context, send func([]state.Event), _ func()) {
			send([]state.Event{{Type: state.Errored, Error: state.NewBufferOverrunError(nil, "hostile overrun")}})
		}, false},
		{"Errored event with an error whose Error panics", func(_ context.Context, send func([]state.Event), _ func()) {
			send([]state.Event{{Type: state.Errored, Error: hostileError{}}})
		}, false},
		{"change without a resource", func(_ context.Context, send func([]state.Event), _ func()) {
			send([]state.Event{{Type: state.Created}})
		}, false},
		{"change whose resource's Metadata panics", func(_ context.Context, send func([]state.Event), _ func()) {
			send([]state.Event{{Type: state.Updated, Resource: newHostile(ns, "x", metadataPanics)}})
		}, false},
		{"change whose resource's Metadata returns nil", func(_ context.Context, send func([]state.Event), _ func()) {
			send([]state.Event{{Type: state.Destroyed, Resource: newHostile(ns, "x", metadataNil)}})
		}, false},
		{"watch call panics", nil, true},
	}
	for _, c := range cases {
		s.Run(c.name, func() {
			s.inBubble(func(e *runtimeEnv) {
				hostile := &misbehavingWatches{State: e.state, ns: ns, bad: c.bad, panicFirst: c.panicFirst}
				e.engine = s.NewEngineOver(e.t, hostile)
				e.require.NotNil(e.engine, "NewEngineOver returned a nil Runtime")
				q := &hostileQController{name: "watcher", ns: ns, hostile: hostileBehaviour{do: func() error { return nil }}}
				e.setInt(ns, "x", 1)
				e.registerQController(q)
				e.start()
				e.setInt(ns, "y", 1)
				e.eventually(func() bool { return q.calls.get("x") >= 1 && q.calls.get("y") >= 1 },
					"%s: the controller never got every resource", c.name)
			})
		})
	}
	s.T().Logf("%d hostile watch behaviours", len(cases))
}
