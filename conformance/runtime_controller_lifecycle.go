package conformance

import (
	"slices"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestC6_RestartAfterError: a controller whose Run returns an error is
// restarted after a backoff that grows with each failure, while the rest of
// the Runtime keeps running.
func (s *RuntimeSuite) TestC6_RestartAfterError() {
	s.inBubble(func(e *runtimeEnv) {
		in := []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}
		failing := &FailingController{ControllerName: "failing", ControllerInputs: in, Failures: 5}
		rest := &IntToStrController{ControllerName: "rest"}
		e.setInt(DefaultNamespace, "a", 1)
		e.registerController(failing)
		e.registerController(rest)
		e.start()

		e.waitStr(DefaultNamespace, "a", "1")
		e.eventually(func() bool { return len(failing.RunStarts()) == 6 && failing.Wakes() >= 1 },
			"C6: a failing controller is restarted until it works")
		g := gaps(failing.RunStarts())
		for i, d := range g {
			e.assert.Positive(d, "C6: restart %d must wait a backoff", i+1)
		}
		e.assert.Greater(g[4], g[0], "C6: the restart backoff grows (gaps %v)", g)

		e.setInt(DefaultNamespace, "a", 7)
		e.waitStr(DefaultNamespace, "a", "7")
		e.assert.Len(failing.RunStarts(), 6, "C6: a working controller is not restarted")
	})
}

// TestC6_RestartAfterPanic: a controller whose Run panics is restarted,
// and the rest of the Runtime keeps running.
func (s *RuntimeSuite) TestC6_RestartAfterPanic() {
	s.inBubble(func(e *runtimeEnv) {
		in := []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}
		panicking := &PanickingController{ControllerName: "panicking", ControllerInputs: in}
		rest := &IntToStrController{ControllerName: "rest"}
		e.setInt(DefaultNamespace, "a", 1)
		e.registerController(panicking)
		e.registerController(rest)
		e.start()

		e.waitStr(DefaultNamespace, "a", "1")
		e.eventually(func() bool { return len(panicking.RunStarts()) == 2 && panicking.Wakes() >= 1 },
			"C6: a panicking controller is restarted")
		e.assert.Positive(gaps(panicking.RunStarts())[0], "C6: the restart waits a backoff")

		wakes := panicking.Wakes()
		e.setInt(DefaultNamespace, "a", 7)
		e.waitStr(DefaultNamespace, "a", "7")
		e.eventually(func() bool { return panicking.Wakes() > wakes }, "C6: the restarted controller gets events")
		e.assert.Len(panicking.RunStarts(), 2, "C6: a working controller is not restarted")
	})
}

// TestC6_ResetRestartBackoff: ResetRestartBackoff makes the next restart
// wait the initial backoff again.
func (s *RuntimeSuite) TestC6_ResetRestartBackoff() {
	s.inBubble(func(e *runtimeEnv) {
		in := []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}
		plain := &FailingController{ControllerName: "plain", ControllerInputs: in, Failures: 5}
		reset := &FailingController{ControllerName: "reset", ControllerInputs: in, Failures: 5, ResetBackoff: true}
		e.registerController(plain)
		e.registerController(reset)
		e.start()

		e.eventually(func() bool { return len(plain.RunStarts()) == 6 && len(reset.RunStarts()) == 6 },
			"C6: both failing controllers are restarted until they work")
		pg, rg := gaps(plain.RunStarts()), gaps(reset.RunStarts())
		e.assert.Less(slices.Max(rg), pg[4],
			"C6: with ResetRestartBackoff every restart waits about the initial backoff (reset gaps %v, plain gaps %v)", rg, pg)
	})
}

// TestC7_UpdateInputs: UpdateInputs replaces the dynamic inputs; changes
// to the new inputs wake the controller and may be read, changes to the
// replaced ones no longer do, the declared inputs stay, and the controller
// is not restarted.
func (s *RuntimeSuite) TestC7_UpdateInputs() {
	s.inBubble(func(e *runtimeEnv) {
		c := &DynamicInputsController{ControllerName: "dynamic",
			StaticInputs: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}}
		c.SetDynamicInputs([]controller.Input{input("dyn1", StrResourceType, controller.InputWeak)})
		e.registerController(c)
		e.start()
		e.eventually(func() bool { return c.Applied() == 1 }, "C7: UpdateInputs never succeeded: %v", c.Errors())

		e.expectWakes("C7", c.Wakes, c.Wakes(), []wakeStep{
			{"create in a dynamic input", func() { e.setStr("dyn1", "a", "x", "") }, true},
			{"update in a dynamic input", func() { e.setStr("dyn1", "a", "y", "") }, true},
		})

		c.SetDynamicInputs([]controller.Input{input("dyn2", StrResourceType, controller.InputWeak)})
		e.setInt(DefaultNamespace, "trigger", 1)
		e.eventually(func() bool { return c.Applied() == 2 }, "C7: the second UpdateInputs never succeeded: %v", c.Errors())

		e.expectWakes("C7", c.Wakes, c.Wakes(), []wakeStep{
			{"create in a replaced dynamic input", func() { e.setStr("dyn1", "b", "x", "") }, false},
			{"create in the new dynamic input", func() { e.setStr("dyn2", "a", "x", "") }, true},
			{"update in a declared input", func() { e.setInt(DefaultNamespace, "trigger", 2) }, true},
		})

		e.assert.Equal(1, c.Runs(), "C7: UpdateInputs does not restart the controller")
		e.assert.Empty(c.Errors(), "C7: dynamic inputs may be read")
	})
}

// TestC8_OutputCleanup: CleanupOutputs destroys the controller's outputs of
// the given kinds that were not written since StartTrackingOutputs; an
// output that a Modify left unchanged counts as written, others' resources
// and other kinds are left alone, and an output with finalizers is torn
// down and destroyed once they are gone.
func (s *RuntimeSuite) TestC8_OutputCleanup() {
	s.inBubble(func(e *runtimeEnv) {
		const name = "int-to-str"
		for id, v := range map[resource.ID]int{"a": 1, "b": 2, "c": 3} {
			e.setInt(DefaultNamespace, id, v)
		}
		e.create(NewStrResource(DefaultNamespace, "users", "v"), "")
		e.create(NewStrResource("elsewhere", "kept", "v"), name)
		e.registerController(&IntToStrController{ControllerName: name})
		e.start()

		e.waitStr(DefaultNamespace, "a", "1")
		e.waitStr(DefaultNamespace, "b", "2")
		e.waitStr(DefaultNamespace, "c", "3")
		va := e.get(strPtr(DefaultNamespace, "a")).Metadata().Version()
		vc := e.get(strPtr(DefaultNamespace, "c")).Metadata().Version()

		e.destroy(intPtr(DefaultNamespace, "b"))
		e.waitGone(strPtr(DefaultNamespace, "b"))
		e.assert.Equal(va, e.get(strPtr(DefaultNamespace, "a")).Metadata().Version(),
			"C8: an output a Modify left unchanged is kept, unchanged")
		e.assert.Equal(vc, e.get(strPtr(DefaultNamespace, "c")).Metadata().Version(),
			"C8: an output a Modify left unchanged is kept, unchanged")
		e.assert.True(e.exists(strPtr(DefaultNamespace, "users")), "C8: a resource the controller does not own is kept")
		e.assert.True(e.exists(strPtr("elsewhere", "kept")), "C8: an output of a kind not cleaned up is kept")

		// An output with a finalizer is torn down, and destroyed once the
		// finalizer is gone.
		c := strPtr(DefaultNamespace, "c")
		e.require.NoError(e.state.AddFinalizer(e.ctx, c, "hold"))
		e.destroy(intPtr(DefaultNamespace, "c"))
		e.eventually(func() bool {
			r, err := e.state.Get(e.ctx, c)
			return err == nil && r.Metadata().Phase() == resource.PhaseTearingDown
		}, "C8: an output with finalizers is torn down")
		e.assert.True(e.exists(c), "C8: an output with finalizers is not destroyed")
		e.require.NoError(e.state.RemoveFinalizer(e.ctx, c, "hold"))
		e.waitGone(c)
	})
}

// TestC9_DestroyReadyFiltering: an InputDestroyReady input fires only for
// the controller's own outputs that are tearing down with no finalizers.
func (s *RuntimeSuite) TestC9_DestroyReadyFiltering() {
	s.inBubble(func(e *runtimeEnv) {
		const name = "destroy-ready"
		plain, held, users := strPtr(DefaultNamespace, "plain"), strPtr(DefaultNamespace, "held"), strPtr(DefaultNamespace, "users")
		elsewhere := strPtr("elsewhere", "mine")
		e.create(NewStrResource(DefaultNamespace, "plain", "v"), name)
		e.create(NewStrResource(DefaultNamespace, "held", "v"), name)
		e.require.NoError(e.state.AddFinalizer(e.ctx, held, "hold"))
		e.create(NewStrResource(DefaultNamespace, "users", "v"), "")
		e.create(NewStrResource("elsewhere", "mine", "v"), name)
		teardown := func(ptr resource.Pointer, owner string) func() {
			return func() {
				_, err := e.state.Teardown(e.ctx, ptr, state.WithTeardownOwner(owner))
				e.require.NoError(err)
			}
		}

		c := &WakeCounterController{ControllerName: name,
			ControllerInputs:  []controller.Input{input(DefaultNamespace, StrResourceType, controller.InputDestroyReady)},
			ControllerOutputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}}}
		e.registerController(c)
		e.start()
		e.eventually(func() bool { return c.Wakes() >= 1 }, "C2: no ReconcileEvent at start")

		e.expectWakes("C9", c.Wakes, c.Wakes(), []wakeStep{
			{"own running output updated", func() { e.setStr(DefaultNamespace, "plain", "v2", name) }, false},
			{"a user's resource torn down without finalizers", teardown(users, ""), false},
			{"own output torn down with finalizers", teardown(held, name), false},
			{"own output in an undeclared namespace torn down", teardown(elsewhere, name), false},
			{"last finalizer of a tearing-down own output removed", func() {
				e.require.NoError(e.state.RemoveFinalizer(e.ctx, held, "hold"))
			}, true},
			{"own output without finalizers torn down", teardown(plain, name), true},
		})
	})
}
