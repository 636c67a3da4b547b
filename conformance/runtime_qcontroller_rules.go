package conformance

import (
	"context"
	"time"

	"github.com/siderolabs/gen/optional"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// namedQController overrides a QController's name.
type namedQController struct {
	controller.QController
	name string
}

func (c namedQController) Name() string { return c.name }

// staticQController is a QController with the given settings that
// reconciles nothing; for registration tests.
type staticQController struct {
	name     string
	settings controller.QSettings
}

func (c staticQController) Name() string                   { return c.name }
func (c staticQController) Settings() controller.QSettings { return c.settings }

func (staticQController) Reconcile(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
	return nil
}

func (staticQController) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// drainGate lets every reconcile waiting on gate through, one at a time,
// until nothing waits on it any more; it fails the test after limit
// passes.
func (e *runtimeEnv) drainGate(gate chan<- struct{}, limit int) {
	e.t.Helper()
	if e.rt != nil {
		e.drainGateRealTime(gate, limit)
		return
	}
	for range limit {
		e.settle()
		select {
		case gate <- struct{}{}:
		default:
			return
		}
	}
	e.t.Fatalf("reconciles still waiting on the gate after %d passes", limit)
}

// TestQ1_InitialFillAndDedup: the queue starts with every existing primary
// resource; a pointer queued again while waiting is reconciled once, and
// one queued while being reconciled is reconciled once more afterwards.
func (s *RuntimeSuite) TestQ1_InitialFillAndDedup() {
	s.inBubble(func(e *runtimeEnv) {
		gate := make(chan struct{})
		q := &QIntToStrController{ControllerName: "q", Gate: gate} // concurrency 1
		for _, id := range []resource.ID{"a", "b", "c"} {
			e.setInt(DefaultNamespace, id, 0)
		}
		e.registerQController(q)
		e.hold("q") // its reconciles wait on the gate until drained
		e.start()

		e.eventually(func() bool { return len(q.InFlight()) == 1 }, "Q1: no reconcile at start")
		first := q.InFlight()[0]
		for i := 1; i <= 5; i++ {
			for _, id := range []resource.ID{"a", "b", "c", "d"} {
				e.setInt(DefaultNamespace, id, i)
			}
		}
		e.settle()
		e.require.Equal([]resource.ID{first}, q.InFlight(), "Q2: one reconcile at a time (concurrency 1)")

		e.drainGate(gate, 100)
		for _, id := range []resource.ID{"a", "b", "c", "d"} {
			want := 1
			if id == first {
				want = 2
			}
			e.assert.Equal(want, q.Reconciles(id), "Q1: reconciles of %s (first in flight: %s)", id, first)
			e.waitStr(DefaultNamespace, id, "5")
		}
	})
}

// TestQ2_ConcurrencyAndExclusion: different pointers are reconciled in
// parallel up to Concurrency (default 1); the same pointer never twice at
// once.
func (s *RuntimeSuite) TestQ2_ConcurrencyAndExclusion() {
	for _, tc := range []struct {
		concurrency optional.Optional[uint]
		want        int
	}{
		{optional.Some[uint](3), 3},
		{optional.None[uint](), 1},
	} {
		s.inBubble(func(e *runtimeEnv) {
			gate := make(chan struct{})
			q := &QIntToStrController{ControllerName: "q", Gate: gate, Concurrency: tc.concurrency}
			ids := []resource.ID{"i0", "i1", "i2", "i3", "i4", "i5"}
			for _, id := range ids {
				e.setInt(DefaultNamespace, id, 0)
			}
			e.registerQController(q)
			e.hold("q") // its reconciles wait on the gate until drained
			e.start()

			e.eventually(func() bool { return len(q.InFlight()) == tc.want },
				"Q2: %d reconciles in parallel with concurrency %v (in flight: %v)", tc.want, tc.concurrency, q.InFlight())
			for _, id := range ids {
				e.setInt(DefaultNamespace, id, 1)
			}
			e.settle()
			e.assert.Len(q.InFlight(), tc.want, "Q2: at most Concurrency reconciles at once")

			e.drainGate(gate, 100)
			e.assert.Equal(tc.want, q.MaxConcurrent(), "Q2: at most Concurrency reconciles at once")
			e.assert.Zero(q.Overlapping(), "Q2: the same pointer is never reconciled twice at once")
			for _, id := range ids {
				e.waitStr(DefaultNamespace, id, "1")
			}
		})
	}
}

// TestQ3_FailureRetriedWithBackoff: a failing item is retried with a
// backoff that grows per failure, without holding up other items.
func (s *RuntimeSuite) TestQ3_FailureRetriedWithBackoff() {
	s.inBubble(func(e *runtimeEnv) {
		q := &QFailingController{ControllerName: "q"}
		q.AddFailures("bad", 5)
		e.setInt(DefaultNamespace, "bad", 0)
		e.setInt(DefaultNamespace, "good", 0)
		e.registerQController(q)
		e.start()

		e.eventually(func() bool { return q.Successes("bad") == 1 && q.Successes("good") == 1 },
			"Q3: a failing item is retried until it succeeds")
		bad, good := q.Attempts("bad"), q.Attempts("good")
		e.require.Len(bad, 6, "Q3: five failures and one success")
		g := gaps(bad)
		for i, d := range g {
			e.assert.Positive(d, "Q3: retry %d must wait a backoff", i+1)
		}
		e.assert.Greater(g[4], g[0], "Q3: the item's backoff grows (gaps %v)", g)
		e.require.Len(good, 1)
		e.assert.True(good[0].Before(bad[1]), "Q3: another item is not held up by a failing item's backoff")
	})
}

// TestQ3_RequeueInterval: a RequeueError requeues the item after its
// interval.
func (s *RuntimeSuite) TestQ3_RequeueInterval() {
	s.inBubble(func(e *runtimeEnv) {
		interval := 2 * time.Second
		if e.rt != nil {
			interval = 10 * e.rt.Backoff // spent for real
		}
		q := &QFailingController{ControllerName: "q", RequeueInterval: interval}
		q.AddFailures("a", 2)
		e.setInt(DefaultNamespace, "a", 0)
		e.registerQController(q)
		e.start()

		e.eventually(func() bool { return q.Successes("a") == 1 }, "Q3: a requeued item is reconciled again")
		attempts := q.Attempts("a")
		e.require.Len(attempts, 3, "Q3: two requeues and one success")
		for i, d := range gaps(attempts) {
			e.assert.GreaterOrEqual(d, interval, "Q3: requeue %d waits its interval", i+1)
			if e.rt == nil {
				// Virtual time: nothing but the interval delays the
				// requeue. In real time a loaded machine delays it
				// more; that it comes at all is checked above.
				e.assert.Less(d, 2*interval, "Q3: requeue %d waits its interval, not much more", i+1)
			}
		}
	})
}

// TestQ3_SuccessResetsBackoff: after a success, the item's next failure
// waits the initial backoff again.
func (s *RuntimeSuite) TestQ3_SuccessResetsBackoff() {
	s.inBubble(func(e *runtimeEnv) {
		q := &QFailingController{ControllerName: "q"}
		q.AddFailures("a", 5)
		e.setInt(DefaultNamespace, "a", 0)
		e.registerQController(q)
		e.start()

		e.eventually(func() bool { return q.Successes("a") == 1 }, "Q3: a failing item is retried until it succeeds")
		e.require.Len(q.Attempts("a"), 6)
		grown := gaps(q.Attempts("a"))[4]

		q.AddFailures("a", 1)
		e.setInt(DefaultNamespace, "a", 1)
		e.eventually(func() bool { return q.Successes("a") == 2 }, "Q3: the item is reconciled after a change")
		attempts := q.Attempts("a")
		e.require.Len(attempts, 8, "Q3: one more failure and one more success")
		e.assert.Less(attempts[7].Sub(attempts[6]), grown, "Q3: success resets the item's backoff")
	})
}

// TestQ3_ChangeDuringBackoffRunsNow: a new change to an item that waits
// out a backoff makes it run at once.
func (s *RuntimeSuite) TestQ3_ChangeDuringBackoffRunsNow() {
	s.inBubble(func(e *runtimeEnv) {
		// In real time the item first fails until its backoff reaches
		// the maximum, so that the backoff it then waits out is long
		// enough to tell a prompt run from the end of the backoff.
		failures := 1
		if e.rt != nil {
			failures = e.rt.failuresToMax()
		}
		q := &QFailingController{ControllerName: "q"}
		q.AddFailures("a", failures)
		e.setInt(DefaultNamespace, "a", 0)
		e.registerQController(q)
		e.start()

		if e.rt == nil {
			// No virtual time passes: the first attempt failed and the
			// item waits out its backoff.
			e.settle()
			e.require.Len(q.Attempts("a"), 1, "Q1: the item is reconciled at start, without delay")
		} else {
			e.eventually(func() bool { return len(q.Attempts("a")) == failures }, "Q3: a failing item is retried")
			e.require.Len(q.Attempts("a"), failures, "Q3: the item waits out its backoff")
		}
		now := time.Now()
		e.setInt(DefaultNamespace, "a", 1)
		e.settle()
		attempts := q.Attempts("a")
		if e.assert.Len(attempts, failures+1, "Q3: a change to an item waiting out a backoff runs it at once") {
			if e.rt == nil {
				e.assert.Equal(now, attempts[1], "Q3: the change ran the item without waiting")
			} else {
				// The item was waiting out its backoff (the Runtime was
				// idle with it delayed), and the Runtime was idle
				// again after the change with the item run: the change
				// ran it, in an order no clock reading decides.
				e.assert.False(attempts[failures].Before(now), "Q3: the item ran after the change")
			}
		}
		e.eventually(func() bool { return q.Successes("a") == 1 }, "Q3: the item succeeds")
	})
}

// TestQ4_MappedInput: a change to an InputQMapped input goes through
// MapInput, and the pointers it returns are reconciled.
func (s *RuntimeSuite) TestQ4_MappedInput() {
	s.inBubble(func(e *runtimeEnv) {
		q := &QMappedController{ControllerName: "q"}
		e.setInt(DefaultNamespace, "a", 0)
		e.registerQController(q)
		e.start()
		e.eventually(func() bool { return q.Reconciles("a") == 1 }, "Q1: no reconcile at start")

		e.setStr(MappedNamespace, "a", "x", "")
		e.eventually(func() bool { return q.Reconciles("a") == 2 }, "Q4: a mapped change reconciles the pointer MapInput returns")
		e.assert.Equal(1, q.MapCalls(MappedNamespace, "a"), "Q4: one MapInput call per mapped change")

		e.setStr(MappedNamespace, "ghost", "x", "")
		e.eventually(func() bool { return q.Reconciles("ghost") == 1 },
			"Q4: the pointers MapInput returns are reconciled even when they do not exist")
	})
}

// TestQ4_MapInputFailureRetried: a failing MapInput is retried like a
// failing Reconcile.
func (s *RuntimeSuite) TestQ4_MapInputFailureRetried() {
	s.inBubble(func(e *runtimeEnv) {
		q := &QMappedController{ControllerName: "q", MapFailures: 2}
		e.registerQController(q)
		e.start()
		e.settle()

		e.setStr(MappedNamespace, "b", "x", "")
		e.eventually(func() bool { return q.Reconciles("b") == 1 }, "Q4: a failing MapInput is retried until it succeeds")
		e.assert.Equal(3, q.MapCalls(MappedNamespace, "b"), "Q4: two failed MapInput calls and one that succeeded")
	})
}

// TestQ4_MappedDestroyReady: an InputQMappedDestroyReady input goes
// through MapInput only for the controller's own outputs that are tearing
// down with no finalizers.
func (s *RuntimeSuite) TestQ4_MappedDestroyReady() {
	s.inBubble(func(e *runtimeEnv) {
		const name = "q"
		held, plain, users := strPtr(DefaultNamespace, "held"), strPtr(DefaultNamespace, "plain"), strPtr(DefaultNamespace, "users")
		e.create(NewStrResource(DefaultNamespace, "held", "v"), name)
		e.require.NoError(e.state.AddFinalizer(e.ctx, held, "hold"))
		e.create(NewStrResource(DefaultNamespace, "plain", "v"), name)
		e.create(NewStrResource(DefaultNamespace, "users", "v"), "")
		teardown := func(ptr resource.Pointer, owner string) func() {
			return func() {
				_, err := e.state.Teardown(e.ctx, ptr, state.WithTeardownOwner(owner))
				e.require.NoError(err)
			}
		}

		q := &QMappedController{ControllerName: name}
		e.registerQController(q)
		e.start()
		e.settle()

		calls := func() map[resource.ID]int {
			m := map[resource.ID]int{}
			for _, id := range []resource.ID{"held", "plain", "users"} {
				m[id] = q.MapCalls(DefaultNamespace, id)
			}
			return m
		}
		want := calls()
		for _, step := range []struct {
			name   string
			change func()
			fires  resource.ID
		}{
			{"own running output updated", func() { e.setStr(DefaultNamespace, "plain", "v2", name) }, ""},
			{"a user's resource torn down without finalizers", teardown(users, ""), ""},
			{"own output torn down with finalizers", teardown(held, name), ""},
			{"last finalizer of a tearing-down own output removed", func() {
				e.require.NoError(e.state.RemoveFinalizer(e.ctx, held, "hold"))
			}, "held"},
			{"own output without finalizers torn down", teardown(plain, name), "plain"},
		} {
			step.change()
			if step.fires != "" {
				want[step.fires]++
				e.eventually(func() bool { return calls()[step.fires] >= want[step.fires] },
					"Q4: no MapInput call after: %s", step.name)
				e.eventually(func() bool { return q.Reconciles(step.fires) >= 1 },
					"Q4: the pointer MapInput returned is not reconciled after: %s", step.name)
			} else {
				e.settle()
			}
			e.assert.Equal(want, calls(), "Q4: MapInput calls after: %s", step.name)
		}
	})
}

// TestQ5_RegistrationErrors: QControllers obey C1, and a QController needs
// a primary input and a non-zero concurrency.
func (s *RuntimeSuite) TestQ5_RegistrationErrors() {
	s.inBubble(func(e *runtimeEnv) {
		primary := []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputQPrimary)}
		settings := func(outputs ...controller.Output) controller.QSettings {
			return controller.QSettings{Inputs: primary, Outputs: outputs}
		}
		e.registerController(&WakeCounterController{ControllerName: "ctl",
			ControllerInputs:  []controller.Input{input(DefaultNamespace, IntResourceType, controller.InputWeak)},
			ControllerOutputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}}})
		e.registerQController(staticQController{"q1", settings(controller.Output{Type: IntResourceType, Kind: controller.OutputShared})})

		zero := settings()
		zero.Concurrency = optional.Some[uint](0)
		for _, tc := range []struct {
			rule string
			c    controller.QController
		}{
			{"empty name", staticQController{"", settings()}},
			{"a Controller's name", staticQController{"ctl", settings()}},
			{"a QController's name", staticQController{"q1", settings()}},
			{"second exclusive owner of an output type", staticQController{"q2", settings(controller.Output{Type: StrResourceType, Kind: controller.OutputExclusive})}},
			{"shared output of a type another controller owns exclusively", staticQController{"q2", settings(controller.Output{Type: StrResourceType, Kind: controller.OutputShared})}},
			{"exclusive output of a type another controller shares", staticQController{"q2", settings(controller.Output{Type: IntResourceType, Kind: controller.OutputExclusive})}},
			{"Concurrency Some(0)", staticQController{"q2", zero}},
			{"no InputQPrimary input", staticQController{"q2", controller.QSettings{
				Inputs: []controller.Input{input(MappedNamespace, StrResourceType, controller.InputQMapped)}}}},
		} {
			e.assert.Error(e.engine.RegisterQController(tc.c), "Q5/C1: RegisterQController must fail: %s", tc.rule)
		}
		e.assert.Error(e.engine.RegisterController(namedController{&WakeCounterController{}, "q1"}),
			"C1: a Controller may not take a QController's name")

		// Nothing of the refused registrations was registered.
		e.registerQController(staticQController{"q2", settings(controller.Output{Type: IntResourceType, Kind: controller.OutputShared})})
		e.start()
	})
}

// TestQ5_AccessScope: QControllers obey C3, C4 and C5: reads and writes
// outside their scope are refused, writes carry their name as owner,
// finalizers may be put on primary inputs but not on mapped ones.
func (s *RuntimeSuite) TestQ5_AccessScope() {
	s.inBubble(func(e *runtimeEnv) {
		const name = "qprobe"
		primary, mapped := intPtr(DefaultNamespace, "p"), strPtr(MappedNamespace, "m")
		e.setInt(DefaultNamespace, "p", 1)
		e.setInt("elsewhere", "x", 1)
		e.setStr(MappedNamespace, "m", "v", "")
		e.create(NewUndeclaredResource(DefaultNamespace, "u", 1), "")
		e.create(NewStrResource(DefaultNamespace, "theirs", "v"), "someone")

		setInt := func(r resource.Resource) error {
			in, err := as[*IntResource](r)
			if err != nil {
				return err
			}
			in.TypedSpec().Value = 42
			return nil
		}
		setStr := func(r resource.Resource) error {
			str, err := as[*StrResource](r)
			if err != nil {
				return err
			}
			str.TypedSpec().Value = "changed"
			return nil
		}
		probe := &AccessProbeQController{
			ControllerName: name,
			ControllerInputs: []controller.Input{
				input(DefaultNamespace, IntResourceType, controller.InputQPrimary),
				input(MappedNamespace, StrResourceType, controller.InputQMapped),
			},
			ControllerOutputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}},
			Accesses: []Access{
				{"Get primary input", func(ctx context.Context, rw controller.ReaderWriter) error {
					_, err := rw.Get(ctx, primary)
					return err
				}},
				{"Get mapped input", func(ctx context.Context, rw controller.ReaderWriter) error {
					_, err := rw.Get(ctx, mapped)
					return err
				}},
				{"AddFinalizer primary input", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.AddFinalizer(ctx, primary, "fin")
				}},
				{"Create output", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, NewStrResource(DefaultNamespace, "out", "v"))
				}},
				{"Create output WithCreateNoOwner", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, NewStrResource(DefaultNamespace, "out-no-owner", "v"), controller.WithCreateNoOwner())
				}},
				{"Get undeclared namespace", func(ctx context.Context, rw controller.ReaderWriter) error {
					_, err := rw.Get(ctx, intPtr("elsewhere", "x"))
					return err
				}},
				{"Get undeclared type", func(ctx context.Context, rw controller.ReaderWriter) error {
					_, err := rw.Get(ctx, resource.NewPointer(DefaultNamespace, UndeclaredResourceType, "u"))
					return err
				}},
				{"Create undeclared type", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, NewUndeclaredResource(DefaultNamespace, "new", 1))
				}},
				{"Modify primary input", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Modify(ctx, NewIntResource(DefaultNamespace, "p", 0), setInt, controller.WithModifyNoOwner())
				}},
				{"Destroy primary input", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Destroy(ctx, primary, controller.WithOwner(""))
				}},
				{"AddFinalizer mapped input", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.AddFinalizer(ctx, mapped, "fin")
				}},
				{"Modify output owned by another", func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Modify(ctx, NewStrResource(DefaultNamespace, "theirs", ""), setStr)
				}},
			},
		}
		e.registerQController(probe)
		e.start()
		res := e.probeResults(probe.Results)

		for _, allowed := range []string{"Get primary input", "Get mapped input", "AddFinalizer primary input",
			"Create output", "Create output WithCreateNoOwner"} {
			e.assert.NoError(res[allowed], "Q5/C3-C5: %s is allowed", allowed)
		}
		e.assertRefused("Get undeclared namespace", res["Get undeclared namespace"], name, IntResourceType, "x")
		e.assertRefused("Get undeclared type", res["Get undeclared type"], name, UndeclaredResourceType, "u")
		e.assertRefused("Create undeclared type", res["Create undeclared type"], name, UndeclaredResourceType, "new")
		e.assertRefused("Modify primary input", res["Modify primary input"], name, IntResourceType, "p")
		e.assertRefused("Destroy primary input", res["Destroy primary input"], name, IntResourceType, "p")
		e.assertRefused("AddFinalizer mapped input", res["AddFinalizer mapped input"], name, StrResourceType, "m")
		e.assert.True(state.IsOwnerConflictError(res["Modify output owned by another"]),
			"Q5/C4: writing an output owned by another is an owner conflict, got %v", res["Modify output owned by another"])

		e.settle()
		if p := e.get(primary); e.assert.NotNil(p, "Q5/C5: the primary input was destroyed") {
			e.assert.Equal([]string{"fin"}, []string(*p.Metadata().Finalizers()), "Q5/C5: finalizer on the primary input")
			v, _ := e.intValue(DefaultNamespace, "p")
			e.assert.Equal(1, v, "Q5/C5: the primary input's spec is untouched")
		}
		if m := e.get(mapped); e.assert.NotNil(m) {
			e.assert.True(m.Metadata().Finalizers().Empty(), "Q5/C5: no finalizer on the mapped input")
		}
		for id, owner := range map[resource.ID]string{"out": name, "out-no-owner": "", "theirs": "someone"} {
			if r := e.get(strPtr(DefaultNamespace, id)); e.assert.NotNil(r, "Q5/C4: %s missing", id) {
				e.assert.Equal(owner, r.Metadata().Owner(), "Q5/C4: owner of %s", id)
			}
		}
		if v, ok := e.strValue(DefaultNamespace, "theirs"); e.assert.True(ok) {
			e.assert.Equal("v", v, "Q5/C4: nothing written to another's output")
		}
		e.assert.False(e.exists(resource.NewPointer(DefaultNamespace, UndeclaredResourceType, "new")), "Q5/C3: nothing written")
	})
}

// TestQ5_PanicFailsItemOnly: a panic in Reconcile or MapInput fails that
// item only: it is retried, other items go on, the Runtime keeps running.
func (s *RuntimeSuite) TestQ5_PanicFailsItemOnly() {
	s.inBubble(func(e *runtimeEnv) {
		q := &QPanickingController{ControllerName: "q", PanicIDs: []resource.ID{"boom"}}
		e.setInt(DefaultNamespace, "boom", 0)
		e.setInt(DefaultNamespace, "fine", 0)
		e.registerQController(q)
		e.start()

		e.eventually(func() bool { return q.Successes("boom") == 1 && q.Successes("fine") == 1 },
			"Q5: an item whose Reconcile panicked is retried; others are reconciled")
		e.assert.Equal(2, q.Reconciles("boom"), "Q5: one panic, one retry")
		e.assert.Equal(1, q.Reconciles("fine"), "Q5: other items are reconciled once")

		e.setStr(MappedNamespace, "boom", "x", "")
		e.eventually(func() bool { return q.Successes("boom") == 2 }, "Q5: a MapInput that panicked is retried")
		e.assert.Equal(2, q.MapCalls("boom"), "Q5: one panic, one retry of MapInput")

		e.setInt(DefaultNamespace, "fine", 1)
		e.eventually(func() bool { return q.Successes("fine") == 2 }, "Q5: the Runtime keeps running after panics")
	})
}
