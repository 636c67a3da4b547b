package conformance

import (
	"context"
	"fmt"
	"slices"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// namedController overrides a controller's name (the example controllers
// never have an empty one).
type namedController struct {
	controller.Controller
	name string
}

func (c namedController) Name() string { return c.name }

// TestC1_RegistrationErrors: registration fails for an empty or duplicate
// name, a second exclusive owner of an output type, and an exclusive
// output another controller declares shared (and the reverse); a refused
// registration registers nothing.
func (s *RuntimeSuite) TestC1_RegistrationErrors() {
	s.inBubble(func(e *runtimeEnv) {
		in := []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}
		owner := &WakeCounterController{ControllerName: "owner", ControllerInputs: in,
			ControllerOutputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}}}
		shared1 := &WakeCounterController{ControllerName: "shared-1", ControllerInputs: in,
			ControllerOutputs: []controller.Output{{Type: IntResourceType, Kind: controller.OutputShared}}}
		shared2 := &WakeCounterController{ControllerName: "shared-2", ControllerInputs: in,
			ControllerOutputs: []controller.Output{{Type: IntResourceType, Kind: controller.OutputShared}}}
		e.registerController(owner)
		e.registerController(shared1)
		e.registerController(shared2) // two shared owners are fine

		for _, tc := range []struct {
			rule string
			c    controller.Controller
		}{
			{"empty name", namedController{&WakeCounterController{ControllerInputs: in}, ""}},
			{"duplicate name", &WakeCounterController{ControllerName: "owner", ControllerInputs: in}},
			{"second exclusive owner of an output type", &WakeCounterController{ControllerName: "other", ControllerInputs: in,
				ControllerOutputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}}}},
			{"shared output of a type another controller owns exclusively", &WakeCounterController{ControllerName: "other", ControllerInputs: in,
				ControllerOutputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputShared}}}},
			{"exclusive output of a type other controllers share", &WakeCounterController{ControllerName: "other", ControllerInputs: in,
				ControllerOutputs: []controller.Output{{Type: IntResourceType, Kind: controller.OutputExclusive}}}},
		} {
			e.assert.Error(e.engine.RegisterController(tc.c), "C1: RegisterController must fail: %s", tc.rule)
		}
		e.assert.Error(e.engine.RegisterQController(namedQController{&QFailingController{}, "owner"}),
			"C1: a QController may not take a Controller's name")

		// The refused registrations registered nothing: the name "other"
		// is free and Str/Int keep their owners.
		other := &WakeCounterController{ControllerName: "other", ControllerInputs: in}
		e.registerController(other)

		e.start()
		e.eventually(func() bool {
			return owner.Wakes() >= 1 && shared1.Wakes() >= 1 && shared2.Wakes() >= 1 && other.Wakes() >= 1
		}, "every registered controller runs")
	})
}

// TestC2_StartEvent: a Controller gets one ReconcileEvent at start, even
// when its inputs already hold resources (they are not changes).
func (s *RuntimeSuite) TestC2_StartEvent() {
	s.inBubble(func(e *runtimeEnv) {
		e.setInt(DefaultNamespace, "a", 1)
		e.setInt(DefaultNamespace, "b", 2)
		c := &WakeCounterController{ControllerName: "counter",
			ControllerInputs: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}}
		e.registerController(c)
		e.start()

		e.eventually(func() bool { return c.Wakes() >= 1 }, "C2: no ReconcileEvent at start")
		e.assert.Equal(1, c.Wakes(), "C2: exactly one ReconcileEvent at start")
		e.assert.Equal(1, c.Runs())
	})
}

// TestC2_ChangeEvents: every change to an input (create, update, teardown,
// destroy) wakes the controller once; changes to other kinds do not.
func (s *RuntimeSuite) TestC2_ChangeEvents() {
	s.inBubble(func(e *runtimeEnv) {
		c := &WakeCounterController{ControllerName: "counter",
			ControllerInputs: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}}
		e.registerController(c)
		e.start()
		e.eventually(func() bool { return c.Wakes() == 1 }, "C2: no ReconcileEvent at start")

		e.expectWakes("C2", c.Wakes, 1, []wakeStep{
			{"create an input", func() { e.setInt(DefaultNamespace, "a", 1) }, true},
			{"update an input", func() { e.setInt(DefaultNamespace, "a", 2) }, true},
			{"create a resource of another namespace", func() { e.setInt("elsewhere", "a", 1) }, false},
			{"create a resource of another type", func() { e.setStr(DefaultNamespace, "a", "x", "") }, false},
			{"tear an input down", func() {
				_, err := e.state.Teardown(e.ctx, intPtr(DefaultNamespace, "a"))
				e.require.NoError(err)
			}, true},
			{"destroy an input", func() { e.destroy(intPtr(DefaultNamespace, "a")) }, true},
		})
	})
}

// TestC2_CoalescingWhileBusy: the many changes that happen while the
// controller handles an event coalesce into one ReconcileEvent.
func (s *RuntimeSuite) TestC2_CoalescingWhileBusy() {
	s.inBubble(func(e *runtimeEnv) {
		gate := make(chan struct{})
		c := &WakeCounterController{ControllerName: "busy", Gate: gate,
			ControllerInputs: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}}
		release := func() bool { return e.release(gate) }
		e.registerController(c)
		e.hold("busy") // busy with each event until released
		e.start()
		e.eventually(func() bool { return c.Wakes() == 1 }, "C2: no ReconcileEvent at start")

		// Busy with the start event: 40 changes happen meanwhile.
		for i := range 20 {
			e.setInt(DefaultNamespace, "a", i)
			e.setInt(DefaultNamespace, fmt.Sprintf("n%02d", i), i)
		}
		e.settle()
		e.require.Equal(1, c.Wakes(), "the controller is still busy with its start event")

		e.require.True(release(), "the controller waits on its gate")
		e.eventually(func() bool { return c.Wakes() >= 2 }, "C2: no ReconcileEvent for the changes made while busy")
		e.require.True(release(), "the controller waits on its gate")
		e.hold() // from now on it must become idle
		e.settle()
		e.assert.Equal(2, c.Wakes(), "C2: changes made while busy coalesce into one ReconcileEvent")
		e.assert.False(e.releaseIfWaiting(gate), "the controller is idle")
	})
}

// TestC2_IDSpecificInput: an input with an ID fires only for that ID.
func (s *RuntimeSuite) TestC2_IDSpecificInput() {
	s.inBubble(func(e *runtimeEnv) {
		e.setInt(DefaultNamespace, "watched", 1)
		watched := input(DefaultNamespace, IntResourceType, controller.InputWeak)
		watched.ID = someID("watched")
		c := &WakeCounterController{ControllerName: "one-id", ControllerInputs: []controller.Input{watched}}
		e.registerController(c)
		e.start()
		e.eventually(func() bool { return c.Wakes() >= 1 }, "C2: no ReconcileEvent at start")

		// TestC2_StartEvent checks that c.Wakes() is 1 here.
		e.expectWakes("C2", c.Wakes, c.Wakes(), []wakeStep{
			{"create another ID", func() { e.setInt(DefaultNamespace, "other", 1) }, false},
			{"update another ID", func() { e.setInt(DefaultNamespace, "other", 2) }, false},
			{"destroy another ID", func() { e.destroy(intPtr(DefaultNamespace, "other")) }, false},
			{"update the ID", func() { e.setInt(DefaultNamespace, "watched", 2) }, true},
			{"destroy the ID", func() { e.destroy(intPtr(DefaultNamespace, "watched")) }, true},
			{"create the ID again", func() { e.setInt(DefaultNamespace, "watched", 3) }, true},
		})
	})
}

// TestC3_ReadScope: reads of declared inputs and of the controller's own
// outputs are allowed; reads of any other kind are refused with an error
// naming the controller and the resource.
func (s *RuntimeSuite) TestC3_ReadScope() {
	s.inBubble(func(e *runtimeEnv) {
		const name = "reader"
		e.setInt(DefaultNamespace, "a", 1)
		e.setInt("elsewhere", "x", 1)
		e.create(NewUndeclaredResource(DefaultNamespace, "u", 1), "")
		e.create(NewStrResource(DefaultNamespace, "mine", "v"), name)

		get := func(ptr resource.Pointer) func(context.Context, controller.ReaderWriter) error {
			return func(ctx context.Context, rw controller.ReaderWriter) error { _, err := rw.Get(ctx, ptr); return err }
		}
		list := func(kind resource.Kind) func(context.Context, controller.ReaderWriter) error {
			return func(ctx context.Context, rw controller.ReaderWriter) error { _, err := rw.List(ctx, kind); return err }
		}
		probe := &AccessProbeController{
			ControllerName:    name,
			ControllerInputs:  []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)},
			ControllerOutputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}},
			Accesses: []Access{
				{"Get declared input", get(intPtr(DefaultNamespace, "a"))},
				{"List declared input", list(resource.NewKind(DefaultNamespace, IntResourceType))},
				{"Get own output", get(strPtr(DefaultNamespace, "mine"))},
				{"List own output", list(resource.NewKind(DefaultNamespace, StrResourceType))},
				{"Get undeclared namespace", get(intPtr("elsewhere", "x"))},
				{"List undeclared namespace", list(resource.NewKind("elsewhere", IntResourceType))},
				{"Get undeclared type", get(resource.NewPointer(DefaultNamespace, UndeclaredResourceType, "u"))},
				{"List undeclared type", list(resource.NewKind(DefaultNamespace, UndeclaredResourceType))},
				{"ContextWithTeardown undeclared type", func(ctx context.Context, rw controller.ReaderWriter) error {
					_, err := rw.ContextWithTeardown(ctx, resource.NewPointer(DefaultNamespace, UndeclaredResourceType, "u"))
					return err
				}},
			},
		}
		e.registerController(probe)
		e.start()
		res := e.probeResults(probe.Results)

		for _, allowed := range []string{"Get declared input", "List declared input", "Get own output", "List own output"} {
			e.assert.NoError(res[allowed], "C3: %s is allowed", allowed)
		}
		e.assertRefused("Get undeclared namespace", res["Get undeclared namespace"], name, IntResourceType, "x")
		e.assertRefused("List undeclared namespace", res["List undeclared namespace"], name, IntResourceType, "")
		e.assertRefused("Get undeclared type", res["Get undeclared type"], name, UndeclaredResourceType, "u")
		e.assertRefused("List undeclared type", res["List undeclared type"], name, UndeclaredResourceType, "")
		e.assertRefused("ContextWithTeardown undeclared type", res["ContextWithTeardown undeclared type"], name, UndeclaredResourceType, "u")
	})
}

// TestC3_WriteScope: every write to a type that is not a declared output
// is refused with an error naming the controller and the resource, and
// nothing is written.
func (s *RuntimeSuite) TestC3_WriteScope() {
	s.inBubble(func(e *runtimeEnv) {
		const name = "writer"
		uPtr := resource.NewPointer(DefaultNamespace, UndeclaredResourceType, "u")
		e.create(NewUndeclaredResource(DefaultNamespace, "u", 1), "")
		e.require.NoError(e.state.AddFinalizer(e.ctx, uPtr, "keep"))
		before := e.get(uPtr)

		setValue := func(r resource.Resource) error {
			u, err := as[*UndeclaredResource](r)
			if err != nil {
				return err
			}
			u.TypedSpec().Value = 42
			return nil
		}
		probe := &AccessProbeController{
			ControllerName:    name,
			ControllerInputs:  []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)},
			ControllerOutputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}},
			Accesses: []Access{
				{"Create", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, NewUndeclaredResource(DefaultNamespace, "new", 1))
				}},
				{"Modify", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Modify(ctx, NewUndeclaredResource(DefaultNamespace, "new-modify", 0), setValue)
				}},
				{"ModifyWithResult", func(ctx context.Context, rw controller.ReaderWriter) error {
					_, err := rw.ModifyWithResult(ctx, NewUndeclaredResource(DefaultNamespace, "new-modify-result", 0), setValue)
					return err
				}},
				{"Update", func(ctx context.Context, rw controller.ReaderWriter) error {
					r := before.DeepCopy()
					if err := setValue(r); err != nil {
						return err
					}
					return rw.Update(ctx, r)
				}},
				{"Teardown", func(ctx context.Context, rw controller.ReaderWriter) error {
					_, err := rw.Teardown(ctx, uPtr, controller.WithOwner(""))
					return err
				}},
				{"Destroy", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Destroy(ctx, uPtr, controller.WithOwner(""))
				}},
				{"AddFinalizer", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.AddFinalizer(ctx, uPtr, "added")
				}},
				{"RemoveFinalizer", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.RemoveFinalizer(ctx, uPtr, "keep")
				}},
				{"Create an input type", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, NewIntResource(DefaultNamespace, "new", 1))
				}},
			},
		}
		e.registerController(probe)
		e.start()
		res := e.probeResults(probe.Results)

		e.assertRefused("Create", res["Create"], name, UndeclaredResourceType, "new")
		e.assertRefused("Modify", res["Modify"], name, UndeclaredResourceType, "new-modify")
		e.assertRefused("ModifyWithResult", res["ModifyWithResult"], name, UndeclaredResourceType, "new-modify-result")
		for _, access := range []string{"Update", "Teardown", "Destroy", "AddFinalizer", "RemoveFinalizer"} {
			e.assertRefused(access, res[access], name, UndeclaredResourceType, "u")
		}
		e.assertRefused("Create an input type", res["Create an input type"], name, IntResourceType, "new")

		e.settle()
		for _, id := range []resource.ID{"new", "new-modify", "new-modify-result"} {
			e.assert.False(e.exists(resource.NewPointer(DefaultNamespace, UndeclaredResourceType, id)), "C3: nothing written: %s created", id)
		}
		e.assert.False(e.exists(intPtr(DefaultNamespace, "new")), "C3: nothing written: IntResource created")
		after := e.get(uPtr)
		if e.assert.NotNil(after, "C3: nothing written: the resource was destroyed") {
			e.assert.True(resource.Equal(before, after), "C3: nothing written: %s became %s", before.Metadata(), after.Metadata())
		}
	})
}

// TestC4_OwnerOnWrites: every resource a controller writes carries its name
// as owner, unless written WithCreateNoOwner or WithModifyNoOwner.
func (s *RuntimeSuite) TestC4_OwnerOnWrites() {
	s.inBubble(func(e *runtimeEnv) {
		const name = "writer"
		setValue := func(r resource.Resource) error {
			str, err := as[*StrResource](r)
			if err != nil {
				return err
			}
			str.TypedSpec().Value = "v"
			return nil
		}
		probe := &AccessProbeController{
			ControllerName:    name,
			ControllerInputs:  []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)},
			ControllerOutputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputShared}},
			Accesses: []Access{
				{"Create", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, NewStrResource(DefaultNamespace, "created", "v"))
				}},
				{"Modify", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Modify(ctx, NewStrResource(DefaultNamespace, "modified", ""), setValue)
				}},
				{"ModifyWithResult", func(ctx context.Context, rw controller.ReaderWriter) error {
					r, err := rw.ModifyWithResult(ctx, NewStrResource(DefaultNamespace, "modified-result", ""), setValue)
					if err == nil && r.Metadata().Owner() != name {
						return fmt.Errorf("ModifyWithResult returned owner %q", r.Metadata().Owner())
					}
					return err
				}},
				{"Update", func(ctx context.Context, rw controller.ReaderWriter) error {
					r := NewStrResource(DefaultNamespace, "updated", "v1")
					if err := rw.Create(ctx, r); err != nil {
						return err
					}
					r.TypedSpec().Value = "v2"
					return rw.Update(ctx, r)
				}},
				{"Create WithCreateNoOwner", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, NewStrResource(DefaultNamespace, "created-no-owner", "v"), controller.WithCreateNoOwner())
				}},
				{"Modify WithModifyNoOwner", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Modify(ctx, NewStrResource(DefaultNamespace, "modified-no-owner", ""), setValue, controller.WithModifyNoOwner())
				}},
			},
		}
		e.registerController(probe)
		e.start()
		res := e.probeResults(probe.Results)

		for access, want := range map[string]struct {
			id    resource.ID
			owner string
		}{
			"Create":                   {"created", name},
			"Modify":                   {"modified", name},
			"ModifyWithResult":         {"modified-result", name},
			"Update":                   {"updated", name},
			"Create WithCreateNoOwner": {"created-no-owner", ""},
			"Modify WithModifyNoOwner": {"modified-no-owner", ""},
		} {
			if !e.assert.NoError(res[access], "C4: %s of a declared output", access) {
				continue
			}
			r := e.get(strPtr(DefaultNamespace, want.id))
			if e.assert.NotNil(r, "C4: %s wrote nothing", access) {
				e.assert.Equal(want.owner, r.Metadata().Owner(), "C4: owner after %s", access)
			}
		}
	})
}

// TestC4_SharedOutputOwnerConflict: writing a shared output that another
// controller (or a user) owns is an owner conflict, and writes nothing.
func (s *RuntimeSuite) TestC4_SharedOutputOwnerConflict() {
	s.inBubble(func(e *runtimeEnv) {
		const name, other = "p1", "p2"
		shared := []controller.Output{{Type: StrResourceType, Kind: controller.OutputShared}}
		in := []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}
		theirs, users := strPtr(DefaultNamespace, "theirs"), strPtr(DefaultNamespace, "users")
		e.create(NewStrResource(DefaultNamespace, "theirs", "v"), other)
		e.create(NewStrResource(DefaultNamespace, "users", "v"), "")
		before := map[resource.Pointer]resource.Resource{theirs: e.get(theirs), users: e.get(users)}

		setValue := func(r resource.Resource) error {
			str, err := as[*StrResource](r)
			if err != nil {
				return err
			}
			str.TypedSpec().Value = "changed"
			return nil
		}
		probe := &AccessProbeController{
			ControllerName: name, ControllerInputs: in, ControllerOutputs: shared,
			Accesses: []Access{
				{"Modify", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Modify(ctx, NewStrResource(DefaultNamespace, "theirs", ""), setValue)
				}},
				{"Update", func(ctx context.Context, rw controller.ReaderWriter) error {
					r, err := rw.Get(ctx, theirs)
					if err != nil {
						return fmt.Errorf("get (allowed: own output type): %w", err)
					}
					if err := setValue(r); err != nil {
						return err
					}
					return rw.Update(ctx, r)
				}},
				{"Teardown", func(ctx context.Context, rw controller.ReaderWriter) error {
					_, err := rw.Teardown(ctx, theirs)
					return err
				}},
				{"Destroy", func(ctx context.Context, rw controller.ReaderWriter) error { return rw.Destroy(ctx, theirs) }},
				{"Modify a user's resource", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Modify(ctx, NewStrResource(DefaultNamespace, "users", ""), setValue)
				}},
			},
		}
		e.registerController(probe)
		e.registerController(&WakeCounterController{ControllerName: other, ControllerInputs: in, ControllerOutputs: shared})
		e.start()
		res := e.probeResults(probe.Results)

		for _, access := range []string{"Modify", "Update", "Teardown", "Destroy", "Modify a user's resource"} {
			e.assert.True(state.IsOwnerConflictError(res[access]),
				"C4: %s of a shared output owned by someone else must be an owner conflict, got %v", access, res[access])
		}
		e.settle()
		for ptr, r := range before {
			after := e.get(ptr)
			if e.assert.NotNil(after, "C4: %s was destroyed", resource.PointerString(ptr)) {
				e.assert.True(resource.Equal(r, after), "C4: nothing written: %s became %s", r.Metadata(), after.Metadata())
			}
		}
	})
}

// TestC5_Finalizers: finalizers may be added to and removed from strong
// inputs and the controller's own outputs; finalizers on weak inputs, and
// every other write to an input, are refused and write nothing.
func (s *RuntimeSuite) TestC5_Finalizers() {
	s.inBubble(func(e *runtimeEnv) {
		const name = "finalizing"
		strong, weak, own := intPtr(DefaultNamespace, "s"), intPtr("weak", "w"), strPtr(DefaultNamespace, "own")
		e.setInt(DefaultNamespace, "s", 1)
		e.setInt("weak", "w", 1)
		e.require.NoError(e.state.AddFinalizer(e.ctx, weak, "other"))
		e.create(NewStrResource(DefaultNamespace, "own", "v"), name)

		setValue := func(r resource.Resource) error {
			in, err := as[*IntResource](r)
			if err != nil {
				return err
			}
			in.TypedSpec().Value = 42
			return nil
		}
		probe := &AccessProbeController{
			ControllerName: name,
			ControllerInputs: []controller.Input{
				input(DefaultNamespace, IntResourceType, controller.InputStrong),
				input("weak", IntResourceType, controller.InputWeak),
			},
			ControllerOutputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}},
			Accesses: []Access{
				{"AddFinalizer strong input", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.AddFinalizer(ctx, strong, "keep", "tmp")
				}},
				{"RemoveFinalizer strong input", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.RemoveFinalizer(ctx, strong, "tmp")
				}},
				{"AddFinalizer own output", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.AddFinalizer(ctx, own, "out", "out-tmp")
				}},
				{"RemoveFinalizer own output", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.RemoveFinalizer(ctx, own, "out-tmp")
				}},
				{"AddFinalizer weak input", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.AddFinalizer(ctx, weak, "mine")
				}},
				{"RemoveFinalizer weak input", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.RemoveFinalizer(ctx, weak, "other")
				}},
				{"Update strong input", func(ctx context.Context, rw controller.ReaderWriter) error {
					r, err := rw.Get(ctx, strong)
					if err != nil {
						return fmt.Errorf("get (allowed: input): %w", err)
					}
					if err := setValue(r); err != nil {
						return err
					}
					return rw.Update(ctx, r)
				}},
				{"Modify strong input", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Modify(ctx, NewIntResource(DefaultNamespace, "s", 0), setValue, controller.WithModifyNoOwner())
				}},
				{"Teardown strong input", func(ctx context.Context, rw controller.ReaderWriter) error {
					_, err := rw.Teardown(ctx, strong, controller.WithOwner(""))
					return err
				}},
				{"Destroy strong input", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Destroy(ctx, strong, controller.WithOwner(""))
				}},
				{"Create in an input kind", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, NewIntResource(DefaultNamespace, "new", 1))
				}},
			},
		}
		e.registerController(probe)
		e.start()
		res := e.probeResults(probe.Results)

		for _, allowed := range []string{"AddFinalizer strong input", "RemoveFinalizer strong input",
			"AddFinalizer own output", "RemoveFinalizer own output"} {
			e.assert.NoError(res[allowed], "C5: %s is allowed", allowed)
		}
		e.assertRefused("AddFinalizer weak input", res["AddFinalizer weak input"], name, IntResourceType, "w")
		e.assertRefused("RemoveFinalizer weak input", res["RemoveFinalizer weak input"], name, IntResourceType, "w")
		for _, access := range []string{"Update strong input", "Modify strong input", "Teardown strong input", "Destroy strong input"} {
			e.assertRefused(access, res[access], name, IntResourceType, "s")
		}
		e.assertRefused("Create in an input kind", res["Create in an input kind"], name, IntResourceType, "new")

		e.settle()
		finalizers := func(ptr resource.Pointer) []string {
			r := e.get(ptr)
			e.require.NotNil(r, "%s was destroyed", resource.PointerString(ptr))
			return slices.Clone(*r.Metadata().Finalizers())
		}
		e.assert.Equal([]string{"keep"}, finalizers(strong), "C5: finalizers of the strong input")
		e.assert.Equal([]string{"other"}, finalizers(weak), "C5: finalizers of the weak input are untouched")
		e.assert.Equal([]string{"out"}, finalizers(own), "C5: finalizers of the own output")
		if v, ok := e.intValue(DefaultNamespace, "s"); e.assert.True(ok) {
			e.assert.Equal(1, v, "C5: the strong input's spec is untouched")
		}
		e.assert.Equal(resource.PhaseRunning, e.get(strong).Metadata().Phase(), "C5: the strong input was not torn down")
		e.assert.False(e.exists(intPtr(DefaultNamespace, "new")), "C5: nothing created in an input kind")
	})
}
