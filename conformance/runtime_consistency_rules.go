package conformance

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// This file checks rules where they meet: C4 for Create, C2 with C7 (an
// UpdateInputs that changes nothing is no change), and E3 with Q1 and Q4 (a
// QController registered during Run starts like one registered before).

// TestC4_CreateOfAnothersOutputIsOwnerConflict: creating a shared output
// that exists with another owner is an owner conflict (still a conflict),
// like every other write of it; creating one's own existing output is a
// plain conflict. Nothing is written.
func (s *RuntimeSuite) TestC4_CreateOfAnothersOutputIsOwnerConflict() {
	s.inBubble(func(e *runtimeEnv) {
		const name, other = "p1", "p2"
		shared := []controller.Output{{Type: StrResourceType, Kind: controller.OutputShared}}
		in := []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)}
		theirs, mine := strPtr(DefaultNamespace, "theirs"), strPtr(DefaultNamespace, "mine")
		e.create(NewStrResource(DefaultNamespace, "theirs", "v"), other)
		e.create(NewStrResource(DefaultNamespace, "mine", "v"), name)
		before := map[resource.Pointer]resource.Resource{theirs: e.get(theirs), mine: e.get(mine)}

		probe := &AccessProbeController{
			ControllerName: name, ControllerInputs: in, ControllerOutputs: shared,
			Accesses: []Access{
				{"Create another's output", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, NewStrResource(DefaultNamespace, "theirs", "changed"))
				}},
				{"Create another's output WithCreateNoOwner", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, NewStrResource(DefaultNamespace, "theirs", "changed"), controller.WithCreateNoOwner())
				}},
				{"Create own existing output", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, NewStrResource(DefaultNamespace, "mine", "changed"))
				}},
			},
		}
		e.registerController(probe)
		e.registerController(&WakeCounterController{ControllerName: other, ControllerInputs: in, ControllerOutputs: shared})
		e.start()
		res := e.probeResults(probe.Results)

		for _, access := range []string{"Create another's output", "Create another's output WithCreateNoOwner"} {
			e.assert.True(state.IsOwnerConflictError(res[access]), "C4: %s must be an owner conflict, got %v", access, res[access])
			e.assert.True(state.IsConflictError(res[access]), "C4: %s must be a conflict, got %v", access, res[access])
		}
		e.assert.True(state.IsConflictError(res["Create own existing output"]),
			"C4/S1: Create of an existing own output is a conflict, got %v", res["Create own existing output"])
		e.assert.False(state.IsOwnerConflictError(res["Create own existing output"]),
			"C4: Create of an existing own output is not an owner conflict, got %v", res["Create own existing output"])

		e.settle()
		for ptr, r := range before {
			after := e.get(ptr)
			if e.assert.NotNil(after, "C4: %s was destroyed", resource.PointerString(ptr)) {
				e.assert.True(resource.Equal(r, after), "C4: nothing written: %s became %s", r.Metadata(), after.Metadata())
			}
		}
	})
}

// sameInputsController is a Controller that calls UpdateInputs with the
// same dynamic inputs (in alternating order) on each of its first passes
// and counts its ReconcileEvents.
type sameInputsController struct {
	name    string
	static  []controller.Input
	dynamic []controller.Input
	passes  int // UpdateInputs is called on the first passes only

	mu    sync.Mutex
	wakes int     // guarded by mu: ReconcileEvents received
	errs  []error // guarded by mu: errors of UpdateInputs
}

func (c *sameInputsController) Name() string                 { return c.name }
func (c *sameInputsController) Inputs() []controller.Input   { return c.static }
func (c *sameInputsController) Outputs() []controller.Output { return nil }

func (c *sameInputsController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		c.mu.Lock()
		c.wakes++
		n := c.wakes
		c.mu.Unlock()
		if n > c.passes {
			continue
		}
		inputs := c.dynamic
		if n%2 == 0 {
			inputs = make([]controller.Input, 0, len(c.dynamic))
			for i := len(c.dynamic) - 1; i >= 0; i-- {
				inputs = append(inputs, c.dynamic[i])
			}
		}
		if err := r.UpdateInputs(inputs); err != nil {
			c.mu.Lock()
			c.errs = append(c.errs, err)
			c.mu.Unlock()
		}
	}
}

func (c *sameInputsController) observed() (wakes int, errs []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wakes, append([]error(nil), c.errs...)
}

// TestC7_UpdateInputsWithTheSameInputsIsNoChange: a controller that calls
// UpdateInputs on every pass with the same inputs (as controllers whose
// inputs derive from what they read do) is not woken by those calls: they
// change no input (rule C2), or the controller would reconcile forever.
// Changes to the dynamic inputs still wake it once each (rule C7).
func (s *RuntimeSuite) TestC7_UpdateInputsWithTheSameInputsIsNoChange() {
	s.inBubble(func(e *runtimeEnv) {
		const passes = 50
		c := &sameInputsController{name: "same-inputs", passes: passes,
			static: []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)},
			dynamic: []controller.Input{
				input("dyn1", StrResourceType, controller.InputWeak),
				input("dyn2", StrResourceType, controller.InputWeak),
			}}
		e.registerController(c)
		e.start()
		e.eventually(func() bool { w, _ := c.observed(); return w >= 1 }, "C2: no ReconcileEvent at start")
		e.settle()

		wakes, errs := c.observed()
		e.require.Empty(errs, "C7: UpdateInputs failed")
		e.require.LessOrEqual(wakes, 2,
			"C2/C7: UpdateInputs with the same inputs must not wake the controller (at most once, for the first call)")

		e.setStr("dyn2", "a", "x", "")
		e.eventually(func() bool { w, _ := c.observed(); return w >= wakes+1 }, "C7: no ReconcileEvent after a change to a dynamic input")
		e.settle()
		w, _ := c.observed()
		e.assert.Equal(wakes+1, w, "C7: one ReconcileEvent per change to a dynamic input")
	})
}

// idPrimaryQController is a QController whose primary input has an ID and
// whose own outputs are a mapped destroy-ready input; it records its
// Reconcile and MapInput calls by ID.
type idPrimaryQController struct {
	name string

	reconciles callCounts[resource.ID]
	mapCalls   callCounts[resource.ID]
}

func (c *idPrimaryQController) Name() string { return c.name }

func (c *idPrimaryQController) Settings() controller.QSettings {
	primary := input(DefaultNamespace, IntResourceType, controller.InputQPrimary)
	primary.ID = someID("x")
	return controller.QSettings{
		Inputs:  []controller.Input{primary, input(DefaultNamespace, StrResourceType, controller.InputQMappedDestroyReady)},
		Outputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}},
	}
}

func (c *idPrimaryQController) Reconcile(_ context.Context, _ *zap.Logger, _ controller.QRuntime, ptr resource.Pointer) error {
	c.reconciles.add(ptr.ID())
	return nil
}

func (c *idPrimaryQController) MapInput(_ context.Context, _ *zap.Logger, _ controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	c.mapCalls.add(ptr.ID())
	return nil, nil
}

func (c *idPrimaryQController) calls() (reconciles, mapCalls map[resource.ID]int) {
	return c.reconciles.snapshot(), c.mapCalls.snapshot()
}

// TestE3_QControllerStartsAlikeBeforeAndDuringRun: a QController
// registered during Run, on input kinds that are watched already, starts
// exactly like one registered before Run (rules E3, Q1, Q4): its queue
// holds the existing resource of its primary input with an ID, and of no
// other ID; and its mapped destroy-ready input goes through MapInput for
// the same existing resources in both cases.
func (s *RuntimeSuite) TestE3_QControllerStartsAlikeBeforeAndDuringRun() {
	type observed struct{ reconciles, mapCalls map[resource.ID]int }
	var got [2]observed
	for i, during := range []bool{false, true} {
		s.inBubble(func(e *runtimeEnv) {
			const name = "q"
			e.setInt(DefaultNamespace, "x", 1)
			e.setInt(DefaultNamespace, "y", 1)
			e.create(NewStrResource(DefaultNamespace, "ready", "v"), name)
			_, err := e.state.Teardown(e.ctx, strPtr(DefaultNamespace, "ready"), state.WithTeardownOwner(name))
			e.require.NoError(err)
			e.create(NewStrResource(DefaultNamespace, "running", "v"), name)

			// Another controller has both kinds watched from the start.
			watcher := &WakeCounterController{ControllerName: "watcher", ControllerInputs: []controller.Input{
				input(DefaultNamespace, IntResourceType, controller.InputWeak),
				input(DefaultNamespace, StrResourceType, controller.InputWeak),
			}}
			e.registerController(watcher)
			q := &idPrimaryQController{name: name}
			if !during {
				e.registerQController(q)
			}
			e.start()
			e.eventually(func() bool { return watcher.Wakes() >= 1 }, "C2: no ReconcileEvent at start")
			if during {
				e.registerQController(q)
			}
			e.eventually(func() bool { r, _ := q.calls(); return r["x"] >= 1 },
				"Q1/E3: the existing primary resource is reconciled (registered during Run: %v)", during)
			e.settle()
			reconciles, mapCalls := q.calls()
			e.assert.Equal(map[resource.ID]int{"x": 1}, reconciles,
				"Q1/E3: only the primary input's ID is queued at start (registered during Run: %v)", during)
			e.assert.Zero(mapCalls["running"], "Q4: a running own output is not destroy-ready (registered during Run: %v)", during)
			got[i] = observed{reconciles, mapCalls}
		})
	}
	s.Equal(got[0], got[1], "E3: a QController registered during Run starts like one registered before Run")
}
