package conformance

import (
	"context"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TestE1_SecondRunFails: a second call of Run, during or after the first,
// fails at once.
func (s *RuntimeSuite) TestE1_SecondRunFails() {
	s.inBubble(func(e *runtimeEnv) {
		c := &WakeCounterController{ControllerName: "counter",
			ControllerInputs: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}}
		e.registerController(c)
		e.start()
		e.eventually(func() bool { return c.Wakes() >= 1 }, "C2: no ReconcileEvent at start")

		secondRun := func(when string) {
			ctx, cancel := context.WithTimeout(e.ctx, RuntimeWaitDeadline)
			defer cancel()
			begin := time.Now()
			err := e.engine.Run(ctx)
			e.assert.Error(err, "E1: a second Run %s must fail", when)
			if e.rt != nil {
				// Real time: at once means without waiting for
				// anything — not for its context, which ends only
				// at its deadline.
				e.assert.NoError(ctx.Err(), "E1: a second Run %s must fail at once", when)
			} else {
				e.assert.Zero(time.Since(begin), "E1: a second Run %s must fail at once", when)
			}
		}
		secondRun("during the first")
		e.assert.Equal(1, c.Runs(), "E1: the failed Run started nothing")
		e.stop()
		secondRun("after the first")
		e.assert.Equal(1, c.Runs(), "E1: the failed Run started nothing")
	})
}

// TestE1_RunReturnsAfterCancel: after its context is canceled, Run returns
// nil within a second, and only after every controller stopped: Runs
// returned, reconciles ended, even for controllers that were busy,
// restarting or retrying with backoff.
func (s *RuntimeSuite) TestE1_RunReturnsAfterCancel() {
	s.inBubble(func(e *runtimeEnv) {
		in := []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}
		gate := make(chan struct{})
		counter := &WakeCounterController{ControllerName: "counter", ControllerInputs: in}
		busy := &WakeCounterController{ControllerName: "busy", ControllerInputs: in, Gate: gate}
		failing := &FailingController{ControllerName: "failing", ControllerInputs: in, Failures: 1 << 30}
		sum := &SumController{ControllerName: "sum"}
		qBusy := &QIntToStrController{ControllerName: "q-busy", Gate: gate}
		qFailing := &QFailingController{ControllerName: "q-failing"}
		qFailing.AddFailures("a", 1<<30)
		e.setInt(DefaultNamespace, "a", 1)
		for _, c := range []controller.Controller{counter, busy, failing, sum} {
			e.registerController(c)
		}
		e.registerQController(qBusy)
		e.registerQController(qFailing)
		e.hold("busy", "q-busy") // they wait on the gate until Run stops
		e.start()

		e.eventually(func() bool {
			v, ok := e.intValue(SumNamespace, SumID)
			return counter.Wakes() >= 1 && busy.Active() == 1 && busy.Wakes() == 1 && len(failing.RunStarts()) >= 2 &&
				ok && v == 1 && len(qBusy.InFlight()) == 1 && len(qFailing.Attempts("a")) >= 2
		}, "every controller is running, busy, restarting or retrying")

		took := e.stop()
		if e.rt == nil {
			// Virtual time: only the controllers' own waits count. In
			// real time a loaded machine's scheduling counts too; stop
			// checks that Run returns nil (within RuntimeWaitDeadline).
			e.assert.LessOrEqual(took, RuntimeStopDeadline, "E1: Run returns within a second after cancel")
		}
		e.assert.Zero(counter.Active(), "E1: Run returns after every controller's Run returned")
		e.assert.Zero(busy.Active(), "E1: Run returns after every controller's Run returned")
		e.assert.Empty(qBusy.InFlight(), "E1: Run returns after every Reconcile returned")
	})
}

// TestE2_DependencyGraph: the dependency graph has one edge per declared
// input and output, dynamic inputs included (an input declared both
// statically and by UpdateInputs is one edge), sorted by controller name,
// edge type, namespace, type and ID. Skipped for Runtimes that do not
// implement [DependencyGraphProvider].
func (s *RuntimeSuite) TestE2_DependencyGraph() {
	s.inBubble(func(e *runtimeEnv) {
		provider, ok := e.engine.(DependencyGraphProvider)
		if !ok {
			e.t.Skipf("the Runtime (%T) does not report a dependency graph", e.engine)
		}
		graph := func() []controller.DependencyEdge {
			g, err := provider.GetDependencyGraph()
			e.require.NoError(err, "GetDependencyGraph")
			e.require.NotNil(g, "GetDependencyGraph")
			return g.Edges
		}
		edge := func(ctrl string, t controller.DependencyEdgeType, ns resource.Namespace, typ resource.Type, id resource.ID) controller.DependencyEdge {
			return controller.DependencyEdge{ControllerName: ctrl, EdgeType: t, ResourceNamespace: ns, ResourceType: typ, ResourceID: id}
		}

		dynamic := &DynamicInputsController{ControllerName: "a-dynamic",
			StaticInputs: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}}
		yInput := input("other", IntResourceType, controller.InputStrong)
		yInput.ID = someID("y")
		dynamic.SetDynamicInputs([]controller.Input{input("dyn", StrResourceType, controller.InputWeak), yInput})
		xInput := input(DefaultNamespace, StrResourceType, controller.InputWeak)
		xInput.ID = someID("x")
		counter := &WakeCounterController{ControllerName: "b-counter",
			ControllerInputs:  []controller.Input{xInput, input(DefaultNamespace, IntResourceType, controller.InputStrong)},
			ControllerOutputs: []controller.Output{{Type: IntResourceType, Kind: controller.OutputShared}}}
		// Registered in an order that is not the graph's.
		e.registerQController(&QMappedController{ControllerName: "c-q"})
		e.registerController(counter)
		e.registerController(dynamic)

		static := []controller.DependencyEdge{
			edge("b-counter", controller.EdgeOutputShared, "", IntResourceType, ""),
			edge("b-counter", controller.EdgeInputStrong, DefaultNamespace, IntResourceType, ""),
			edge("b-counter", controller.EdgeInputWeak, DefaultNamespace, StrResourceType, "x"),
			edge("c-q", controller.EdgeOutputExclusive, "", StrResourceType, ""),
			edge("c-q", controller.EdgeInputQPrimary, DefaultNamespace, IntResourceType, ""),
			edge("c-q", controller.EdgeInputQMapped, MappedNamespace, StrResourceType, ""),
			edge("c-q", controller.EdgeInputQMappedDestroyReady, DefaultNamespace, StrResourceType, ""),
		}
		e.assert.Equal(slices.Concat([]controller.DependencyEdge{
			edge("a-dynamic", controller.EdgeInputWeak, DefaultNamespace, IntResourceType, ""),
		}, static), graph(), "E2: the graph before Run")

		e.start()
		e.eventually(func() bool { return dynamic.Applied() == 1 }, "C7: UpdateInputs never succeeded: %v", dynamic.Errors())
		e.assert.Equal(slices.Concat([]controller.DependencyEdge{
			edge("a-dynamic", controller.EdgeInputStrong, "other", IntResourceType, "y"),
			edge("a-dynamic", controller.EdgeInputWeak, DefaultNamespace, IntResourceType, ""),
			edge("a-dynamic", controller.EdgeInputWeak, "dyn", StrResourceType, ""),
		}, static), graph(), "E2: the graph with dynamic inputs")

		// The static input declared again by UpdateInputs is still one edge.
		dynamic.SetDynamicInputs([]controller.Input{input("dyn2", StrResourceType, controller.InputWeak), input(DefaultNamespace, IntResourceType, controller.InputWeak)})
		e.setInt(DefaultNamespace, "trigger", 1)
		e.eventually(func() bool { return dynamic.Applied() == 2 }, "C7: the second UpdateInputs never succeeded: %v", dynamic.Errors())
		e.assert.Equal(slices.Concat([]controller.DependencyEdge{
			edge("a-dynamic", controller.EdgeInputWeak, DefaultNamespace, IntResourceType, ""),
			edge("a-dynamic", controller.EdgeInputWeak, "dyn2", StrResourceType, ""),
		}, static), graph(), "E2: the graph after the dynamic inputs were replaced")
	})
}

// TestE3_RegisterDuringRun: controllers and QControllers registered while
// Run is running start at once with the current state of their inputs,
// receive later changes, and are validated like the others.
func (s *RuntimeSuite) TestE3_RegisterDuringRun() {
	s.inBubble(func(e *runtimeEnv) {
		in := []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}
		first := &WakeCounterController{ControllerName: "first", ControllerInputs: in}
		e.setInt(DefaultNamespace, "a", 1)
		e.setInt(DefaultNamespace, "b", 2)
		e.registerController(first)
		e.start()
		e.eventually(func() bool { return first.Wakes() >= 1 }, "C2: no ReconcileEvent at start")

		late := &WakeCounterController{ControllerName: "late", ControllerInputs: in}
		e.registerController(late)
		e.eventually(func() bool { return late.Wakes() >= 1 }, "E3: a controller registered during Run starts at once")
		e.assert.Equal(1, late.Wakes(), "E3/C2: one ReconcileEvent at start")

		e.registerController(&IntToStrController{ControllerName: "int-to-str"})
		e.waitStr(DefaultNamespace, "a", "1")
		e.waitStr(DefaultNamespace, "b", "2")
		e.registerController(&SumController{ControllerName: "sum"})
		e.eventually(func() bool { v, ok := e.intValue(SumNamespace, SumID); return ok && v == 3 },
			"E3: a controller registered during Run sees the current state")
		q := &QFailingController{ControllerName: "q"}
		e.registerQController(q)
		e.eventually(func() bool { return q.Successes("a") == 1 && q.Successes("b") == 1 },
			"E3/Q1: a QController registered during Run starts with every existing primary resource")

		e.assert.Error(e.engine.RegisterController(&IntToStrController{ControllerName: "int-to-str"}),
			"E3/C1: a duplicate name is refused during Run")
		e.assert.Error(e.engine.RegisterController(&WakeCounterController{ControllerName: "other", ControllerInputs: in,
			ControllerOutputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}}}),
			"E3/C1: a second exclusive owner is refused during Run")
		e.assert.Error(e.engine.RegisterQController(staticQController{"first", controller.QSettings{
			Inputs: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputQPrimary)}}}),
			"E3/C1: a duplicate name is refused during Run")

		e.setInt(DefaultNamespace, "a", 5)
		e.waitStr(DefaultNamespace, "a", "5")
		e.eventually(func() bool { v, ok := e.intValue(SumNamespace, SumID); return ok && v == 7 },
			"E3: a controller registered during Run receives later changes")
		e.eventually(func() bool { return q.Successes("a") == 2 },
			"E3: a QController registered during Run receives later changes")
	})
}
