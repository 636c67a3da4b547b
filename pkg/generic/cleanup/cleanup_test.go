package cleanup_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/generic/cleanup"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

type (
	A = fixture.A
	C = fixture.C
)

func ptrA(id string) resource.Pointer { return typed.Pointer[*A](id) }
func ptrC(id string) resource.Pointer { return typed.Pointer[*C](id) }

// dependent returns a C that depends on the A named owner by the label
// "owner".
func dependent(id, owner string) *C {
	c := fixture.New[fixture.CDef](id, 0)
	c.Metadata().Labels().Set("owner", owner)
	return c
}

func byLabel(a *A) []resource.LabelQueryOption {
	return []resource.LabelQueryOption{resource.LabelEqual("owner", a.Metadata().ID())}
}

func byPrefix(ctx context.Context, r controller.Reader, _ *zap.Logger, a *A) ([]*C, error) {
	list, err := safe.ReaderListAll[*C](ctx, r)
	if err != nil {
		return nil, err
	}
	var deps []*C
	for c := range list.All() {
		if strings.HasPrefix(c.Metadata().ID(), a.Metadata().ID()+"-") {
			deps = append(deps, c)
		}
	}
	return deps, nil
}

// hasFinalizer asserts that an A holds the finalizer fin.
func hasFinalizer(fin string) func(*A, *assert.Assertions) {
	return func(a *A, asrt *assert.Assertions) {
		asrt.True(a.Metadata().Finalizers().Has(fin), "finalizer %s", fin)
	}
}

func TestTheFinalizerIsReleasedOnceTheDependentsAreGone(t *testing.T) {
	for name, settings := range map[string]cleanup.Settings[*A, *C]{
		"query":  {Name: "cleanup", DependentsQuery: byLabel},
		"lister": {Name: "cleanup", ListDependents: byPrefix},
	} {
		t.Run(name, func(t *testing.T) {
			st := inmem.NewState()
			ctx := context.Background()
			runtimetest.Create(t, st, fixture.New[fixture.ADef]("a1", 0), fixture.New[fixture.ADef]("a2", 0),
				dependent("a1-x", "a1"), dependent("a1-y", "a1"), dependent("a2-x", "a2"))
			runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(cleanup.NewController(settings)))
			runtimetest.AssertResource(t, st, "a1", hasFinalizer("cleanup"))
			runtimetest.AssertResource(t, st, "a2", hasFinalizer("cleanup"))

			_, err := st.Teardown(ctx, ptrA("a1"))
			require.NoError(t, err)
			require.NoError(t, st.Destroy(ctx, ptrC("a1-x")))
			require.NoError(t, st.Destroy(ctx, ptrC("a2-x"))) // another input's dependent
			// a1 waits for a1-y: a2 (running) keeps its finalizer whatever.
			runtimetest.AssertResource(t, st, "a2", hasFinalizer("cleanup"))
			a1, err := st.Get(ctx, ptrA("a1"))
			require.NoError(t, err)
			assert.True(t, a1.Metadata().Finalizers().Has("cleanup"), "the finalizer stays while a dependent exists")

			require.NoError(t, st.Destroy(ctx, ptrC("a1-y")))
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *A) bool { return got.Metadata().Finalizers().Empty() }))
			require.NoError(t, st.Destroy(ctx, ptrA("a1")))
		})
	}
}

func TestDependentsCanBeTornDownOrDestroyed(t *testing.T) {
	for _, action := range []cleanup.Action{cleanup.ActionTeardown, cleanup.ActionDestroy} {
		t.Run(map[cleanup.Action]string{cleanup.ActionTeardown: "teardown", cleanup.ActionDestroy: "destroy"}[action], func(t *testing.T) {
			st := inmem.NewState()
			ctx := context.Background()
			held := dependent("held", "a1")
			held.Metadata().Finalizers().Add("hold")
			runtimetest.Create(t, st, fixture.New[fixture.ADef]("a1", 0), dependent("free", "a1"), held, dependent("other", "a2"))
			require.NoError(t, st.Create(ctx, dependent("owned", "a1"), state.WithCreateOwner("someone")))
			runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(cleanup.NewController(cleanup.Settings[*A, *C]{Name: "cleanup", DependentsQuery: byLabel},
				cleanup.WithDependentAction(action))))
			runtimetest.AssertResource(t, st, "a1", hasFinalizer("cleanup"))

			_, err := st.Teardown(ctx, ptrA("a1"))
			require.NoError(t, err)
			// With ActionDestroy, dependents without finalizers may be gone
			// already; the held one is tearing down in both cases.
			runtimetest.AssertResource(t, st, "held", runtimetest.Holds(func(got *C) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
			if action == cleanup.ActionTeardown {
				for _, id := range []string{"free", "owned"} {
					runtimetest.AssertResource(t, st, id, runtimetest.Holds(func(got *C) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
				}
			}
			other, err := st.Get(ctx, ptrC("other"))
			require.NoError(t, err)
			assert.Equal(t, resource.PhaseRunning, other.Metadata().Phase(), "dependents of other inputs are left alone")

			if action == cleanup.ActionDestroy {
				runtimetest.AssertNoResource[*C](t, st, "free")
				runtimetest.AssertNoResource[*C](t, st, "owned")
				require.NoError(t, st.RemoveFinalizer(ctx, ptrC("held"), "hold"))
				runtimetest.AssertNoResource[*C](t, st, "held")
			} else {
				require.NoError(t, st.RemoveFinalizer(ctx, ptrC("held"), "hold"))
				for _, id := range []string{"free", "held"} {
					require.NoError(t, st.Destroy(ctx, ptrC(id)))
				}
				require.NoError(t, st.Destroy(ctx, ptrC("owned"), state.WithDestroyOwner("someone")))
			}
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *A) bool { return got.Metadata().Finalizers().Empty() }))
		})
	}
}

// recorder records the errors Run returns and the failures it reports
// (controller.ErrorReporter).
type recorder struct {
	controller.Controller
	fixture.Errors
}

func (r *recorder) Run(ctx context.Context, rt controller.Runtime, logger *zap.Logger) error {
	return r.Push(r.Controller.Run(ctx, &reporting{Runtime: rt, errs: r.Errors}, logger))
}

// reporting is a Runtime that records the reported failures.
type reporting struct {
	controller.Runtime
	errs fixture.Errors
}

func (r *reporting) ReportError(err error) { r.errs.Push(err) }

// TakeChanges passes the Runtime's change log on (changelog.Source), so
// that the recorded controller's passes are incremental as they are
// without the recorder.
func (r *reporting) TakeChanges(reuse *changelog.Batch) *changelog.Batch {
	return fixture.TakeChanges(r.Runtime, reuse)
}

func TestAFailingListerFailsOnlyItsInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		ctx := context.Background()
		ctrl := &recorder{Errors: fixture.NewErrors(), Controller: cleanup.NewController(cleanup.Settings[*A, *C]{
			Name: "cleanup",
			ListDependents: func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A) ([]*C, error) {
				switch a.Metadata().ID() {
				case "fails":
					return nil, errors.New("lister failed")
				case "panics":
					panic("lister panicked")
				}
				return byPrefix(ctx, r, l, a)
			},
		})}
		runtimetest.Create(t, st, fixture.New[fixture.ADef]("fails", 0), fixture.New[fixture.ADef]("panics", 0), fixture.New[fixture.ADef]("ok", 0))
		engine := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
		for _, id := range []string{"fails", "panics", "ok"} {
			runtimetest.AssertResource(t, st, id, hasFinalizer("cleanup"))
			_, err := st.Teardown(ctx, ptrA(id))
			require.NoError(t, err)
		}
		runtimetest.AssertResource(t, st, "ok", runtimetest.Holds(func(got *A) bool { return got.Metadata().Finalizers().Empty() }))
		// Each failing input fails alone, named once, and is retried.
		for range 2 {
			err := ctrl.Await(t, func(err error) bool { return strings.Contains(err.Error(), "lister failed") })
			assert.Equal(t, "input "+resource.PointerString(ptrA("fails"))+": ListDependents: lister failed", err.Error())
		}
		var pe *generic.PanicError
		err := ctrl.Await(t, func(err error) bool { return errors.As(err, &pe) })
		assert.Equal(t, "input "+resource.PointerString(ptrA("panics"))+": ListDependents panicked: lister panicked", err.Error())
		assert.Equal(t, ptrA("panics"), pe.Resource)
		assert.Zero(t, engine.Runtime.Observe().Controllers()[0].Metrics.Crashes, "Run never failed")
	})
}

func TestG2_MisconfigurationIsRefusedAtRegistration(t *testing.T) {
	for _, tc := range []struct {
		ctrl    controller.Controller
		name    string
		setting []string
	}{
		{name: "no dependents", setting: []string{"DependentsQuery", "ListDependents", "both nil"},
			ctrl: cleanup.NewController(cleanup.Settings[*A, *C]{Name: "x"})},
		{name: "both ways", setting: []string{"DependentsQuery", "ListDependents", "both set"},
			ctrl: cleanup.NewController(cleanup.Settings[*A, *C]{Name: "x", DependentsQuery: byLabel, ListDependents: byPrefix})},
		{name: "no name", setting: []string{"Name is empty"}, ctrl: cleanup.NewController(cleanup.Settings[*A, *C]{DependentsQuery: byLabel})},
		{name: "same type", setting: []string{"same type"}, ctrl: cleanup.NewController(cleanup.Settings[*A, *A]{Name: "x", DependentsQuery: byLabel})},
		{name: "extra dependents of the dependent type", setting: []string{"WithExtraDependents", "given twice"},
			ctrl: cleanup.NewController(cleanup.Settings[*A, *C]{Name: "x", DependentsQuery: byLabel}, cleanup.WithExtraDependents[*C](byLabel))},
		{name: "extra dependents of another input type", setting: []string{"WithExtraDependents", "query takes"},
			ctrl: cleanup.NewController(cleanup.Settings[*A, *C]{Name: "x", DependentsQuery: byLabel},
				cleanup.WithExtraDependents[*fixture.D](func(*fixture.B) []resource.LabelQueryOption { return nil }))},
		{name: "extra dependents without query", setting: []string{"WithExtraDependents", "nil query"},
			ctrl: cleanup.NewController(cleanup.Settings[*A, *C]{Name: "x", DependentsQuery: byLabel},
				cleanup.WithExtraDependents[*fixture.D, *A](nil))},
		{name: "bad action", setting: []string{"WithDependentAction(7)"},
			ctrl: cleanup.NewController(cleanup.Settings[*A, *C]{Name: "x", DependentsQuery: byLabel}, cleanup.WithDependentAction(7))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fixture.AssertRefused(t, tc.ctrl, tc.ctrl.Name(), tc.setting...)
			// A Runtime that does not call Validate: Run fails at once.
			err := tc.ctrl.Run(context.Background(), nil, zap.NewNop())
			assert.True(t, state.IsInvalidError(err), "got %v", err)
			assert.ErrorIs(t, err, tc.ctrl.(controller.Validator).Validate())
		})
	}
}

func TestG2_NilOptionsAreSkipped(t *testing.T) {
	st := inmem.NewState()
	ctrl := cleanup.NewController(cleanup.Settings[*A, *C]{Name: "keeper", DependentsQuery: byLabel}, nil)
	require.NoError(t, ctrl.Validate())
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	runtimetest.Create(t, st, fixture.New[fixture.ADef]("a1", 1))
	runtimetest.AssertResource(t, st, "a1", hasFinalizer("keeper"))
}

func TestDeclarationsFollowTheAction(t *testing.T) {
	wait := cleanup.NewController(cleanup.Settings[*A, *C]{Name: "x", DependentsQuery: byLabel})
	assert.Empty(t, wait.Outputs(), "waiting writes nothing")
	kindC := typed.Kind[*C]()
	assert.Contains(t, wait.Inputs(), controller.Input{Namespace: kindC.Namespace(), Type: kindC.Type(), Kind: controller.InputWeak})
	act := cleanup.NewController(cleanup.Settings[*A, *C]{Name: "x", DependentsQuery: byLabel}, cleanup.WithDependentAction(cleanup.ActionDestroy))
	assert.Equal(t, []controller.Output{{Type: kindC.Type(), Kind: controller.OutputShared, Namespace: kindC.Namespace()}}, act.Outputs())
}

// listerCalls records when the lister was called for the input "fails",
// which always fails.
type listerCalls struct {
	mu sync.Mutex
	at []time.Time
}

func (l *listerCalls) list(ctx context.Context, r controller.Reader, lg *zap.Logger, a *A) ([]*C, error) {
	if a.Metadata().ID() != "fails" {
		return byPrefix(ctx, r, lg, a)
	}
	l.mu.Lock()
	l.at = append(l.at, time.Now())
	l.mu.Unlock()
	return nil, errors.New("lister failed")
}

// gaps waits (virtual time, up to an hour) for n calls and returns the
// gaps between the calls made by then, up to n.
func (l *listerCalls) gaps(n int) []time.Duration {
	deadline := time.Now().Add(time.Hour)
	for {
		l.mu.Lock()
		at := slices.Clone(l.at)
		l.mu.Unlock()
		if len(at) >= n || time.Now().After(deadline) {
			var g []time.Duration
			for i := 1; i < min(n, len(at)); i++ {
				g = append(g, at[i].Sub(at[i-1]))
			}
			return g
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (l *listerCalls) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.at)
}

// startTornDown starts ctrl over a state holding the input "fails" and
// tears the input down once the controller holds its finalizer.
func startTornDown(t *testing.T, ctrl controller.Controller, opts ...runtime.Option) state.State {
	st := inmem.NewState()
	runtimetest.Create(t, st, fixture.New[fixture.ADef]("fails", 0))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl), runtimetest.WithRuntimeOptions(opts...))
	runtimetest.AssertResource(t, st, "fails", hasFinalizer("cleanup"))
	_, err := st.Teardown(t.Context(), ptrA("fails"))
	require.NoError(t, err)
	return st
}

// The Runtime's per-item backoff (runtime.WithQueueBackoff) reaches the
// cleanup controller's failing inputs; WithRetryPolicy overrides it, and
// its MaxAttempts parks an input until it changes.
func TestTheRetryPolicyOfTheRuntimeAndOfTheController(t *testing.T) {
	t.Run("Runtime backoff", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			calls := &listerCalls{}
			startTornDown(t, cleanup.NewController(cleanup.Settings[*A, *C]{Name: "cleanup", ListDependents: calls.list}),
				runtime.WithQueueBackoff(time.Second, 4*time.Second))
			assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}, calls.gaps(5))
		})
	})
	t.Run("own policy", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			calls := &listerCalls{}
			st := startTornDown(t, cleanup.NewController(cleanup.Settings[*A, *C]{Name: "cleanup", ListDependents: calls.list},
				cleanup.WithRetryPolicy(controller.RetryPolicy{BackoffInitial: 300 * time.Millisecond, MaxAttempts: 3})),
				runtime.WithQueueBackoff(time.Second, 4*time.Second))
			assert.Equal(t, []time.Duration{300 * time.Millisecond, 600 * time.Millisecond}, calls.gaps(3))
			time.Sleep(time.Hour)
			assert.Equal(t, 3, calls.count(), "parked after 3 failed runs")

			require.NoError(t, st.Modify(t.Context(), fixture.New[fixture.ADef]("fails", 0), func(r resource.Resource) error {
				r.Metadata().Labels().Set("changed", "yes")
				return nil
			}, state.WithExpectedPhaseAny()))
			// Back as a fresh input: at once, then after 300 and 600 ms.
			assert.Equal(t, []time.Duration{300 * time.Millisecond, 600 * time.Millisecond}, calls.gaps(6)[min(3, calls.count()-1):])
			time.Sleep(time.Hour)
			assert.Equal(t, 6, calls.count(), "parked again")
		})
	})
}

// TestExtraDependents_SeveralTypesAndOwners: one cleanup controller waits for
// (and, with ActionDestroy, destroys) the dependents of several types
// (WithExtraDependents), whoever owns them — dependents written by two
// other writers go alike — and releases the finalizer once all are gone.
func TestExtraDependents_SeveralTypesAndOwners(t *testing.T) {
	st := inmem.NewState()
	ctx := context.Background()
	d := fixture.New[fixture.DDef]("a1-d", 0)
	d.Metadata().Labels().Set("owner", "a1")
	runtimetest.Create(t, st, fixture.New[fixture.ADef]("a1", 0), dependent("a1-x", "a1"), d)
	other := dependent("a1-y", "a1")
	require.NoError(t, other.Metadata().SetOwner("someone-else"))
	require.NoError(t, st.Create(ctx, other, state.WithCreateOwner("someone-else")))
	ctrl := cleanup.NewController(cleanup.Settings[*A, *C]{Name: "cleanup", DependentsQuery: byLabel},
		cleanup.WithExtraDependents[*fixture.D](byLabel), cleanup.WithDependentAction(cleanup.ActionDestroy))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	runtimetest.AssertResource(t, st, "a1", hasFinalizer("cleanup"))

	_, err := st.Teardown(ctx, ptrA("a1"))
	require.NoError(t, err)
	runtimetest.AssertNoResource[*C](t, st, "a1-x")
	runtimetest.AssertNoResource[*C](t, st, "a1-y")
	runtimetest.AssertNoResource[*fixture.D](t, st, "a1-d")
	runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(md *resource.Metadata) bool { return md.Finalizers().Empty() }))
}

// TestG3_ACleanupPassReadsOnlyTheInputsThatChanged: once the controller
// holds its finalizer on every input, a change of one input (and of the
// dependents of a tearing-down one) is processed by reading that input
// (and the inputs waiting for their dependents) alone: no List of the
// inputs.
func TestG3_ACleanupPassReadsOnlyTheInputsThatChanged(t *testing.T) {
	st := inmem.NewState()
	ctx := context.Background()
	ids := []string{"a1", "a2", "a3", "a4", "a5", "a6"}
	for _, id := range ids {
		runtimetest.Create(t, st, fixture.New[fixture.ADef](id, 0))
	}
	runtimetest.Create(t, st, dependent("a2-x", "a2"))
	ctrl := fixture.CountReads(cleanup.NewController(cleanup.Settings[*A, *C]{Name: "cleanup", DependentsQuery: byLabel}), typed.Kind[*A]())
	env := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	for _, id := range ids {
		runtimetest.AssertResource(t, st, id, hasFinalizer("cleanup"))
	}
	// The finalizers the first pass put on are changes of the inputs
	// too: the pass that follows their routing reads them (they changed).
	// Count from when the Runtime is idle.
	runtimetest.Settle(t, env.Runtime)
	lists, before := ctrl.Counts()
	require.Positive(t, lists, "the first pass lists the inputs")

	_, err := st.Teardown(ctx, ptrA("a2"))
	require.NoError(t, err)
	fixture.SetN[*A](t, st, ptrA("a4"), 1)
	require.NoError(t, st.Destroy(ctx, ptrC("a2-x")))
	runtimetest.AssertResource(t, st, "a2", func(a *A, asrt *assert.Assertions) {
		asrt.True(a.Metadata().Finalizers().Empty(), "released")
	})
	runtimetest.Create(t, st, fixture.New[fixture.ADef]("a7", 0))
	runtimetest.AssertResource(t, st, "a7", hasFinalizer("cleanup"))
	runtimetest.Settle(t, env.Runtime)

	after, gets := ctrl.Counts()
	assert.Equal(t, lists, after, "no pass listed the inputs again")
	for id, n := range gets {
		if id != "a2" && id != "a4" && id != "a7" {
			assert.Equal(t, before[id], n, "input %s did not change and was read", id)
		}
	}
	for _, id := range []resource.ID{"a2", "a4", "a7"} {
		assert.Greater(t, gets[id], before[id], "the changed input %s was read", id)
	}
}
