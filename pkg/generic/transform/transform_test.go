package transform_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

var _ controller.Controller = (*transform.Controller[*A, *B])(nil)

func TestEveryInputMapsToItsOutput(t *testing.T) {
	st := newState()
	runtimetest.Create(t, st, newA("a1", 1), newA("a2", 2))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(aToB("AtoB")))

	b1 := runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](4)))
	assert.Equal(t, "AtoB", b1.Metadata().Owner(), "outputs are owned by the controller")

	fixture.SetN[*A](t, st, ptrA("a1"), 10)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](20)))

	require.NoError(t, st.Destroy(context.Background(), ptrA("a2")))
	runtimetest.AssertNoResource[*B](t, st, "a2")
}

// update is what TransformExtraOutputFunc saw after an output write.
type update struct {
	id      resource.ID
	in, out resource.Version
}

// updates records the writes of outputs.
type updates chan update

func (u updates) extra(_ context.Context, _ controller.ReaderWriter, _ *zap.Logger, a *A, b *B) error {
	u <- update{id: a.Metadata().ID(), in: a.Metadata().Version(), out: b.Metadata().Version()}
	return nil
}

// awaitInput waits until the output of input id at version v was written
// and returns the output's version.
func (u updates) awaitInput(t *testing.T, id resource.ID, v resource.Version) resource.Version {
	t.Helper()
	for got := range u {
		if got.id == id && got.in.Equal(v) {
			return got.out
		}
	}
	return resource.VersionUndefined
}

func TestUnchangedOutputIsNotWritten(t *testing.T) {
	st := newState()
	seen := make(updates, 1024)
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *B]{
		Name:                     "AtoB",
		MapMetadataFunc:          fixture.Map[*A, fixture.BDef],
		TransformFunc:            double, // ignores M
		TransformExtraOutputFunc: seen.extra,
	})))
	runtimetest.Create(t, st, newA("a1", 1))
	b := runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))

	// A change to the input that does not change the output.
	a, err := safe.StateUpdateWithConflicts(context.Background(), st, ptrA("a1"), func(a *A) error {
		a.TypedSpec().M = 7
		return nil
	})
	require.NoError(t, err)
	outVersion := seen.awaitInput(t, "a1", a.Metadata().Version())

	assert.Equal(t, b.Metadata().Version(), outVersion, "the output was written although unchanged")
	cur, err := st.Get(context.Background(), ptrB("a1"))
	require.NoError(t, err)
	assert.Equal(t, b.Metadata().Version(), cur.Metadata().Version())
}

func TestUnchangedOutputsAreNotWrittenWhenEveryInputIsTransformed(t *testing.T) {
	// With an extra input every pass transforms every input: a change of
	// the extra input must not bump the outputs it leaves unchanged.
	st := newState()
	seen := make(updates, 1024)
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *B]{
		Name:                     "AtoB",
		MapMetadataFunc:          fixture.Map[*A, fixture.BDef],
		TransformFunc:            double,
		TransformExtraOutputFunc: seen.extra,
	}, transform.WithExtraInputs(controller.Input{Namespace: kindC.Namespace(), Type: kindC.Type(), Kind: controller.InputWeak}))))
	runtimetest.Create(t, st, newA("a1", 1), newA("a2", 2))
	versions := map[resource.ID]resource.Version{
		"a1": runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2))).Metadata().Version(),
		"a2": runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](4))).Metadata().Version(),
	}
	for len(seen) > 0 {
		<-seen
	}

	runtimetest.Create(t, st, fixture.New[fixture.CDef]("wake", 0))
	for range 2 { // both outputs are transformed again
		got := <-seen
		assert.Equal(t, versions[got.id], got.out, "output of %s written although unchanged", got.id)
	}
}

func TestAFailingInputDoesNotStopTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		ctrl := record(transform.NewController(transform.Settings[*A, *B]{
			Name:            "AtoB",
			MapMetadataFunc: fixture.Map[*A, fixture.BDef],
			TransformFunc: func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
				if a.TypedSpec().N < 0 {
					return errors.New("negative input")
				}
				return double(ctx, r, l, a, b)
			},
		}))
		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
		runtimetest.Create(t, st, newA("a1", 1), newA("a2", 2), newA("a3", 3))
		runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](4)))
		runtimetest.AssertResource(t, st, "a3", runtimetest.Holds(fixture.RunningN[*B](6)))

		fixture.SetN[*A](t, st, ptrA("a2"), -1)
		runtimetest.Create(t, st, newA("a4", 4))
		runtimetest.AssertResource(t, st, "a4", runtimetest.Holds(fixture.RunningN[*B](8)))
		fixture.SetN[*A](t, st, ptrA("a3"), 30)
		runtimetest.AssertResource(t, st, "a3", runtimetest.Holds(fixture.RunningN[*B](60)))

		// The failure is reported, and retried: it names the input and what
		// failed, once each.
		for range 2 {
			err := ctrl.Await(t, func(err error) bool { return strings.Contains(err.Error(), "negative input") })
			assert.Equal(t, "input "+resource.PointerString(ptrA("a2"))+": TransformFunc: negative input", err.Error())
		}
		b2, err := safe.StateGet[*B](context.Background(), st, ptrB("a2"))
		require.NoError(t, err, "the failing input's output is kept")
		assert.Equal(t, 4, b2.TypedSpec().N, "the failing input's output is kept as it was")

		fixture.SetN[*A](t, st, ptrA("a2"), 5)
		runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](10)))
	})
}

func TestAPanicFailsOnlyItsInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		ctrl := record(transform.NewController(transform.Settings[*A, *B]{
			Name:            "AtoB",
			MapMetadataFunc: fixture.Map[*A, fixture.BDef],
			TransformFunc: func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
				if a.Metadata().ID() == "boom" {
					panic("boom")
				}
				return double(ctx, r, l, a, b)
			},
		}))
		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
		runtimetest.Create(t, st, newA("a1", 1), newA("boom", 2), newA("z1", 3))
		runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
		runtimetest.AssertResource(t, st, "z1", runtimetest.Holds(fixture.RunningN[*B](6)))

		err := ctrl.Await(t, func(error) bool { return true })
		var pe *generic.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, ptrA("boom"), pe.Resource)
		assert.Equal(t, "TransformFunc", pe.Func)
		assert.NotEmpty(t, pe.Stack)
		assert.Equal(t, "input "+resource.PointerString(ptrA("boom"))+": TransformFunc panicked: boom", err.Error())
		_, err = st.Get(context.Background(), ptrB("boom"))
		assert.True(t, state.IsNotFoundError(err), "nothing is written for the panicking input")
	})
}

func TestBadMappingFailsOnlyItsInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		ctrl := record(transform.NewController(transform.Settings[*A, *B]{
			Name: "AtoB",
			MapMetadataFunc: func(a *A) *B {
				id := a.Metadata().ID()
				switch id {
				case "nil":
					return nil
				case "wrongns":
					return typed.New[fixture.Spec, fixture.BDef](resource.NewMetadata("other", kindB.Type(), id, resource.VersionUndefined), fixture.Spec{})
				case "wrongtype":
					return typed.New[fixture.Spec, fixture.BDef](resource.NewMetadata(kindB.Namespace(), kindC.Type(), id, resource.VersionUndefined), fixture.Spec{})
				case "noid":
					return typed.New[fixture.Spec, fixture.BDef](resource.NewMetadata(kindB.Namespace(), kindB.Type(), "", resource.VersionUndefined), fixture.Spec{})
				}
				return fixture.Map[*A, fixture.BDef](a)
			},
			TransformFunc: double,
		}))
		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
		bad := []string{"nil", "wrongns", "wrongtype", "noid"}
		for _, id := range bad {
			runtimetest.Create(t, st, newA(id, 1))
		}
		runtimetest.Create(t, st, newA("good", 5))
		runtimetest.AssertResource(t, st, "good", runtimetest.Holds(fixture.RunningN[*B](10)))

		for missing := slices.Clone(bad); len(missing) > 0; {
			err := ctrl.Await(t, func(error) bool { return true })
			assert.True(t, state.IsInvalidError(err), "a bad mapping is an invalid-class error: %v", err)
			assert.Contains(t, err.Error(), "MapMetadataFunc returned")
			missing = slices.DeleteFunc(missing, func(id string) bool {
				return strings.HasPrefix(err.Error(), "input "+resource.PointerString(ptrA(id))+": ")
			})
		}

		list, err := st.List(context.Background(), kindB)
		require.NoError(t, err)
		require.Len(t, list.Items, 1, "nothing is written for bad mappings")
		other, err := st.List(context.Background(), resource.NewKind("other", kindB.Type()))
		require.NoError(t, err)
		assert.Empty(t, other.Items)
		wrongType, err := st.List(context.Background(), kindC)
		require.NoError(t, err)
		assert.Empty(t, wrongType.Items)
	})
}

func TestInputRecreatedWhileOutputTearsDownGetsAFreshOutput(t *testing.T) {
	st := newState()
	ctx := context.Background()
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(aToB("AtoB")))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1"), "hold"))

	require.NoError(t, st.Destroy(ctx, ptrA("a1")))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *B) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
	runtimetest.Create(t, st, newA("a1", 5))

	// The old output stays until its finalizer goes...
	runtimetest.Create(t, st, newA("marker", 0))
	runtimetest.AssertResource(t, st, "marker", runtimetest.Holds(fixture.RunningN[*B](0)))
	old, err := st.Get(ctx, ptrB("a1"))
	require.NoError(t, err)
	assert.Equal(t, resource.PhaseTearingDown, old.Metadata().Phase())

	// ...then it is destroyed and created again from the new input.
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1"), "hold"))
	b := runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](10)))
	assert.True(t, b.Metadata().Finalizers().Empty())
	assert.Equal(t, "AtoB", b.Metadata().Owner())
}

func TestInputFinalizerIsHeldUntilTheOutputIsDestroyed(t *testing.T) {
	st := newState()
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(aToB("AtoB", transform.WithInputFinalizers())))
	ctx := context.Background()
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	a, err := st.Get(ctx, ptrA("a1"))
	require.NoError(t, err)
	assert.True(t, a.Metadata().Finalizers().Has("AtoB"), "the finalizer is added before the output is written")

	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1"), "hold"))
	_, err = st.Teardown(ctx, ptrA("a1"))
	require.NoError(t, err)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *B) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
	a, err = st.Get(ctx, ptrA("a1"))
	require.NoError(t, err)
	assert.True(t, a.Metadata().Finalizers().Has("AtoB"), "the finalizer stays while the output exists")

	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1"), "hold"))
	runtimetest.AssertNoResource[*B](t, st, "a1")
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *A) bool { return got.Metadata().Finalizers().Empty() }))
	require.NoError(t, st.Destroy(ctx, ptrA("a1")))
}

func TestFinalizerRemovalCanBeVetoed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		var allow atomic.Bool
		vetoed := make(chan struct{}, 16)
		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *B]{
			Name:            "AtoB",
			MapMetadataFunc: fixture.Map[*A, fixture.BDef],
			TransformFunc:   double,
			FinalizerRemovalFunc: func(context.Context, controller.Reader, *zap.Logger, *A) error {
				if allow.Load() {
					return nil
				}
				select {
				case vetoed <- struct{}{}:
				default:
				}
				return errors.New("not yet")
			},
		}, transform.WithInputFinalizers())))
		ctx := context.Background()
		runtimetest.Create(t, st, newA("a1", 1))
		runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
		_, err := st.Teardown(ctx, ptrA("a1"))
		require.NoError(t, err)
		runtimetest.AssertNoResource[*B](t, st, "a1")
		for range 3 { // vetoed at first and on the retries
			<-vetoed
		}
		a, err := st.Get(ctx, ptrA("a1"))
		require.NoError(t, err)
		assert.True(t, a.Metadata().Finalizers().Has("AtoB"), "a vetoed finalizer stays")

		allow.Store(true)
		runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *A) bool { return got.Metadata().Finalizers().Empty() }))
	})
}

func TestExtraOutputsAreWrittenByTheExtraFunction(t *testing.T) {
	st := newState()
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *B]{
		Name:            "AtoB",
		MapMetadataFunc: fixture.Map[*A, fixture.BDef],
		TransformFunc:   double,
		TransformExtraOutputFunc: func(ctx context.Context, w controller.ReaderWriter, _ *zap.Logger, a *A, b *B) error {
			return safe.WriterModify(ctx, w, fixture.New[fixture.CDef](a.Metadata().ID(), 0), func(c *C) error {
				c.TypedSpec().N = b.TypedSpec().N + 1
				return nil
			})
		},
	}, transform.WithExtraOutputs(controller.Output{Type: kindC.Type(), Kind: controller.OutputExclusive}))))
	runtimetest.Create(t, st, newA("a1", 1))
	c := runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*C](3)))
	assert.Equal(t, "AtoB", c.Metadata().Owner())
	fixture.SetN[*A](t, st, ptrA("a1"), 5)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*C](11)))
}

func TestOptionalMappingNoneMeansNoOutput(t *testing.T) {
	st := newState()
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *B]{
		Name: "AtoB",
		MapMetadataOptionalFunc: func(a *A) optional.Optional[*B] {
			if a.TypedSpec().N == 0 {
				return optional.None[*B]()
			}
			return optional.Some(fixture.Map[*A, fixture.BDef](a))
		},
		TransformFunc: double,
	})))
	runtimetest.Create(t, st, newA("a1", 0), newA("a2", 1))
	runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](2)))
	_, err := st.Get(context.Background(), ptrB("a1"))
	assert.True(t, state.IsNotFoundError(err), "None maps to no output")

	fixture.SetN[*A](t, st, ptrA("a2"), 0)
	runtimetest.AssertNoResource[*B](t, st, "a2")
	fixture.SetN[*A](t, st, ptrA("a1"), 3)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](6)))
}

func TestTearingDownInputsCanKeepTheirOutputs(t *testing.T) {
	for _, withFinalizers := range []bool{false, true} {
		t.Run(fmt.Sprintf("finalizers=%v", withFinalizers), func(t *testing.T) {
			st := newState()
			opts := []transform.ControllerOption{transform.WithIgnoreTearingDownInputs()}
			if withFinalizers {
				opts = append(opts, transform.WithInputFinalizers())
			}
			ctx := context.Background()
			a := newA("a1", 1)
			a.Metadata().Finalizers().Add("hold")
			runtimetest.Create(t, st, a)
			runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(aToB("AtoB", opts...)))
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))

			_, err := st.Teardown(ctx, ptrA("a1"))
			require.NoError(t, err)
			fixture.SetN[*A](t, st, ptrA("a1"), 7, state.WithExpectedPhaseAny())
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](14)))
			if withFinalizers {
				runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *A) bool { return !got.Metadata().Finalizers().Has("AtoB") }))
			}

			require.NoError(t, st.RemoveFinalizer(ctx, ptrA("a1"), "hold"))
			require.NoError(t, st.Destroy(ctx, ptrA("a1")))
			runtimetest.AssertNoResource[*B](t, st, "a1")
		})
	}
}

func TestSharedOutputsAreOwnedPerController(t *testing.T) {
	st := newState()
	toC := func(name, prefix string) func(resource.Resource) *C {
		return func(in resource.Resource) *C { return fixture.New[fixture.CDef](prefix+in.Metadata().ID(), 0) }
	}
	runtimetest.Create(t, st, newA("x", 1), fixture.New[fixture.BDef]("x", 2))
	aToC := toC("AtoC", "a-")
	bToC := toC("BtoC", "b-")
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *C]{
		Name:            "AtoC",
		MapMetadataFunc: func(a *A) *C { return aToC(a) },
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, a *A, c *C) error {
			c.TypedSpec().N = a.TypedSpec().N
			return nil
		},
	}, transform.WithOutputKind(controller.OutputShared)),
		transform.NewController(transform.Settings[*B, *C]{
			Name:            "BtoC",
			MapMetadataFunc: func(b *B) *C { return bToC(b) },
			TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, b *B, c *C) error {
				c.TypedSpec().N = b.TypedSpec().N
				return nil
			},
		}, transform.WithOutputKind(controller.OutputShared))))
	ca := runtimetest.AssertResource(t, st, "a-x", runtimetest.Holds(fixture.RunningN[*C](1)))
	cb := runtimetest.AssertResource(t, st, "b-x", runtimetest.Holds(fixture.RunningN[*C](2)))
	assert.Equal(t, "AtoC", ca.Metadata().Owner())
	assert.Equal(t, "BtoC", cb.Metadata().Owner())

	require.NoError(t, st.Destroy(context.Background(), ptrA("x")))
	runtimetest.AssertNoResource[*C](t, st, "a-x")
	fixture.SetN[*B](t, st, ptrB("x"), 3)
	runtimetest.AssertResource(t, st, "b-x", runtimetest.Holds(fixture.RunningN[*C](3)))
}

func TestInputListOptionsSelectTheInputs(t *testing.T) {
	for _, withFinalizers := range []bool{false, true} {
		t.Run(fmt.Sprintf("finalizers=%v", withFinalizers), func(t *testing.T) {
			st := newState()
			opts := []transform.ControllerOption{transform.WithInputListOptions(state.WithLabelQuery(resource.LabelExists("sel")))}
			if withFinalizers {
				opts = append(opts, transform.WithInputFinalizers())
			}
			runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(aToB("AtoB", opts...)))
			a1 := newA("a1", 1)
			a1.Metadata().Labels().Set("sel", "")
			runtimetest.Create(t, st, newA("a0", 5), a1)
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
			_, err := st.Get(context.Background(), ptrB("a0"))
			assert.True(t, state.IsNotFoundError(err), "an input the options do not select has no output")

			_, err = st.UpdateWithConflicts(context.Background(), ptrA("a1"), func(r resource.Resource) error {
				r.Metadata().Labels().Delete("sel")
				return nil
			})
			require.NoError(t, err)
			runtimetest.AssertNoResource[*B](t, st, "a1")
			if withFinalizers {
				runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *A) bool { return got.Metadata().Finalizers().Empty() }))
			}
		})
	}
}

func TestOrphanOutputsAreDestroyedOnStart(t *testing.T) {
	st := newState()
	ctx := context.Background()
	require.NoError(t, st.Create(ctx, fixture.New[fixture.BDef]("orphan", 1), state.WithCreateOwner("AtoB")))
	held := fixture.New[fixture.BDef]("held", 1)
	held.Metadata().Finalizers().Add("hold")
	require.NoError(t, st.Create(ctx, held, state.WithCreateOwner("AtoB")))
	require.NoError(t, st.Create(ctx, fixture.New[fixture.BDef]("foreign", 1), state.WithCreateOwner("someone-else")))
	runtimetest.Create(t, st, newA("a1", 1))

	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(aToB("AtoB")))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	runtimetest.AssertNoResource[*B](t, st, "orphan")
	runtimetest.AssertResource(t, st, "held", runtimetest.Holds(func(got *B) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
	_, err := st.Get(ctx, ptrB("foreign"))
	require.NoError(t, err, "outputs of other owners are left alone")

	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("held"), "hold"))
	runtimetest.AssertNoResource[*B](t, st, "held")
}

func TestAMappingChangeMovesTheOutput(t *testing.T) {
	st := newState()
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *B]{
		Name: "AtoB",
		MapMetadataFunc: func(a *A) *B {
			return fixture.New[fixture.BDef](fmt.Sprintf("%s-%d", a.Metadata().ID(), a.TypedSpec().N%2), 0)
		},
		TransformFunc: double,
	})))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1-1", runtimetest.Holds(fixture.RunningN[*B](2)))
	fixture.SetN[*A](t, st, ptrA("a1"), 2)
	runtimetest.AssertResource(t, st, "a1-0", runtimetest.Holds(fixture.RunningN[*B](4)))
	runtimetest.AssertNoResource[*B](t, st, "a1-1")
}

func TestAMappingThatMovesBackKeepsItsOutputTracked(t *testing.T) {
	// a1 maps to a1-1, then to a1-0 while a1-1 is held by a finalizer, then
	// back to a1-1: the held output is replaced by a fresh one once the
	// finalizer goes, and that fresh output still belongs to a1, so it
	// goes when a1 does.
	st := newState()
	ctx := context.Background()
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *B]{
		Name: "AtoB",
		MapMetadataFunc: func(a *A) *B {
			return fixture.New[fixture.BDef](fmt.Sprintf("%s-%d", a.Metadata().ID(), a.TypedSpec().N%2), 0)
		},
		TransformFunc: double,
	})))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1-1", runtimetest.Holds(fixture.RunningN[*B](2)))
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1-1"), "hold"))
	fixture.SetN[*A](t, st, ptrA("a1"), 2)
	runtimetest.AssertResource(t, st, "a1-0", runtimetest.Holds(fixture.RunningN[*B](4)))
	runtimetest.AssertResource(t, st, "a1-1", runtimetest.Holds(func(got *B) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))

	fixture.SetN[*A](t, st, ptrA("a1"), 3)
	runtimetest.AssertNoResource[*B](t, st, "a1-0")
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1-1"), "hold"))
	runtimetest.AssertResource(t, st, "a1-1", runtimetest.Holds(fixture.RunningN[*B](6)))

	require.NoError(t, st.Destroy(ctx, ptrA("a1")))
	runtimetest.AssertNoResource[*B](t, st, "a1-1")
}

// TestG3_AnIncrementalPassKeepsTheOutputItsInputClaimsBack is
// TestAMappingThatMovesBackKeepsItsOutputTracked among other inputs, so
// that the passes after a1's changes are incremental ones (rule G3): an
// input whose mapping moves back to an output pending destruction claims
// it, and the output is kept (then replaced once its finalizer goes).
func TestG3_AnIncrementalPassKeepsTheOutputItsInputClaimsBack(t *testing.T) {
	st := newState()
	ctx := context.Background()
	others := []string{"a2", "a3", "a4", "a5", "a6", "a7"}
	for _, id := range others {
		runtimetest.Create(t, st, newA(id, 0))
	}
	ctrl := fixture.CountReads(transform.NewController(transform.Settings[*A, *B]{
		Name: "AtoB",
		MapMetadataFunc: func(a *A) *B {
			return fixture.New[fixture.BDef](fmt.Sprintf("%s-%d", a.Metadata().ID(), a.TypedSpec().N%2), 0)
		},
		TransformFunc: double,
	}), kindA)
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	for _, id := range others {
		runtimetest.AssertResource(t, st, id+"-0", runtimetest.Holds(fixture.RunningN[*B](0)))
	}
	lists, _ := ctrl.Counts()

	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1-1", runtimetest.Holds(fixture.RunningN[*B](2)))
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1-1"), "hold"))
	fixture.SetN[*A](t, st, ptrA("a1"), 2)
	runtimetest.AssertResource(t, st, "a1-0", runtimetest.Holds(fixture.RunningN[*B](4)))
	runtimetest.AssertResource(t, st, "a1-1", runtimetest.Holds(func(got *B) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))

	fixture.SetN[*A](t, st, ptrA("a1"), 3)
	runtimetest.AssertNoResource[*B](t, st, "a1-0")
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1-1"), "hold"))
	runtimetest.AssertResource(t, st, "a1-1", runtimetest.Holds(fixture.RunningN[*B](6)))

	require.NoError(t, st.Destroy(ctx, ptrA("a1")))
	runtimetest.AssertNoResource[*B](t, st, "a1-1")
	after, _ := ctrl.Counts()
	assert.Equal(t, lists, after, "the passes after the first were incremental")
}

func TestExtraInputsAreReadByTheTransform(t *testing.T) {
	st := newState()
	cfg := typed.Pointer[*C]("config")
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *B]{
		Name:            "AtoB",
		MapMetadataFunc: fixture.Map[*A, fixture.BDef],
		TransformFunc: func(ctx context.Context, r controller.Reader, _ *zap.Logger, a *A, b *B) error {
			c, err := safe.ReaderGet[*C](ctx, r, cfg)
			if err != nil {
				return err
			}
			b.TypedSpec().N = a.TypedSpec().N + c.TypedSpec().N
			return nil
		},
	}, transform.WithExtraInputs(controller.Input{Namespace: kindC.Namespace(), Type: kindC.Type(), ID: optional.Some("config"), Kind: controller.InputWeak}))))
	runtimetest.Create(t, st, fixture.New[fixture.CDef]("config", 100), newA("a1", 1), newA("a2", 2))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](101)))
	fixture.SetN[*C](t, st, cfg, 200)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](201)))
	runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](202)))
}

func TestAWriteBasedOnAnEarlierIncarnationIsRetried(t *testing.T) {
	// The output is destroyed and created again between the controller's
	// read and its write: the state refuses the write as a conflict, and
	// the controller reads the output again and writes it, without failing.
	core := fixture.NewRecreating(inmem.NewState(), ptrB("a1"))
	st := state.WrapCore(core)
	ctrl := record(aToB("AtoB"))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))

	core.Arm()
	fixture.SetN[*A](t, st, ptrA("a1"), 2)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](4)))
	assert.Equal(t, 1, core.Conflicts(), "the write met the earlier-incarnation conflict")

	runtimetest.Create(t, st, newA("marker", 1)) // a later input: its output shows the write's pass is over
	runtimetest.AssertResource(t, st, "marker", runtimetest.Holds(fixture.RunningN[*B](2)))
	assert.Empty(t, ctrl.Errors, "the conflict did not fail the controller")
}

// reversedLists is a state whose List returns the resources in reverse ID
// order, as a foreign state that ignores S12a could.
type reversedLists struct{ state.CoreState }

func (s reversedLists) List(ctx context.Context, k resource.Kind, opts ...state.ListOption) (resource.List, error) {
	l, err := s.CoreState.List(ctx, k, opts...)
	slices.Reverse(l.Items)
	return l, err
}

// TestInputsListedOutOfOrderAreStillEachOneInput: the controller
// merges the listed inputs with those it knows in ID order; inputs listed
// in another order are each still known as themselves — an unchanged
// input is not transformed again, a destroyed one loses its output, a new
// one gets one.
func TestInputsListedOutOfOrderAreStillEachOneInput(t *testing.T) {
	st := state.WrapCore(reversedLists{inmem.NewState()})
	ctx := context.Background()
	for i := range 6 {
		runtimetest.Create(t, st, newA(fmt.Sprintf("a%d", i), i))
	}
	var mu sync.Mutex
	calls := map[resource.ID]int{}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *B]{
		Name:            "AtoB",
		MapMetadataFunc: fixture.Map[*A, fixture.BDef],
		TransformFunc: func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
			mu.Lock()
			calls[a.Metadata().ID()]++
			mu.Unlock()
			return double(ctx, r, l, a, b)
		},
	})))
	for i := range 6 {
		runtimetest.AssertResource(t, st, fmt.Sprintf("a%d", i), runtimetest.Holds(fixture.RunningN[*B](2*i)))
	}

	require.NoError(t, st.Destroy(ctx, ptrA("a2")))
	runtimetest.AssertNoResource[*B](t, st, "a2")
	runtimetest.Create(t, st, newA("a7", 7))
	runtimetest.AssertResource(t, st, "a7", runtimetest.Holds(fixture.RunningN[*B](14)))
	runtimetest.Create(t, st, newA("a15", 15)) // among the known ones
	runtimetest.AssertResource(t, st, "a15", runtimetest.Holds(fixture.RunningN[*B](30)))
	fixture.SetN[*A](t, st, ptrA("a4"), 40)
	runtimetest.AssertResource(t, st, "a4", runtimetest.Holds(fixture.RunningN[*B](80)))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[resource.ID]int{"a0": 1, "a1": 1, "a15": 1, "a2": 1, "a3": 1, "a4": 2, "a5": 1, "a7": 1}, calls,
		"each input transformed once per version")
}

// TestInputFinalizerOptions: transform spells the input-finalizer
// options as qtransform does; its default is off, WithoutInputFinalizers
// says so explicitly, and an option repeated is no contradiction.
func TestInputFinalizerOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		opts []transform.ControllerOption
		held bool
	}{
		"default":           {held: false},
		"with":              {opts: []transform.ControllerOption{transform.WithInputFinalizers()}, held: true},
		"without":           {opts: []transform.ControllerOption{transform.WithoutInputFinalizers()}, held: false},
		"without, repeated": {opts: []transform.ControllerOption{transform.WithoutInputFinalizers(), transform.WithoutInputFinalizers()}, held: false},
	} {
		t.Run(name, func(t *testing.T) {
			st := newState()
			runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(aToB("AtoB", tc.opts...)))
			runtimetest.Create(t, st, newA("a1", 1))
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
			a, err := st.Get(context.Background(), ptrA("a1"))
			require.NoError(t, err)
			assert.Equal(t, tc.held, a.Metadata().Finalizers().Has("AtoB"))
		})
	}
}

// TestEachInputIsTransformedOncePerVersion: over bursts of creates
// in and out of order (new inputs past the known ones, among them, more
// than the controller's memory of inputs held), updates and destroys, each
// input version is transformed once, and the controller never fails.
func TestEachInputIsTransformedOncePerVersion(t *testing.T) {
	const n = 3000
	st := newState()
	ctx := context.Background()
	var calls atomic.Int64
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *B]{
		Name:            "AtoB",
		MapMetadataFunc: fixture.Map[*A, fixture.BDef],
		TransformFunc: func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
			calls.Add(1)
			return double(ctx, r, l, a, b)
		},
	})))
	id := func(i int) string { return fmt.Sprintf("a%05d", i) }
	versions := 0
	for i := 0; i < n; i += 2 { // past the known ones
		runtimetest.Create(t, st, newA(id(i), i))
		versions++
	}
	for i := n - 1; i > 0; i -= 2 { // among them, last first
		runtimetest.Create(t, st, newA(id(i), i))
		versions++
	}
	runtimetest.Settle(t, e.Runtime)
	for i := n; i < n+10; i++ { // past the known ones, into the room left
		runtimetest.Create(t, st, newA(id(i), i))
		versions++
		runtimetest.Settle(t, e.Runtime)
	}
	for i := 0; i < n; i += 3 {
		fixture.SetN[*A](t, st, ptrA(id(i)), -i-1)
		versions++
	}
	for i := 1; i < n; i += 3 {
		require.NoError(t, st.Destroy(ctx, ptrA(id(i))))
	}
	runtimetest.Settle(t, e.Runtime)
	for i := range n {
		if i%3 == 1 {
			runtimetest.AssertNoResource[*B](t, st, id(i))
		} else if i%3 == 0 {
			runtimetest.AssertResource(t, st, id(i), runtimetest.Holds(fixture.RunningN[*B](-2*(i+1))))
		}
	}
	assert.Equal(t, int64(versions), calls.Load(), "one transform per input version")
	for _, c := range e.Runtime.Observe().Controllers() {
		assert.Zero(t, c.Metrics.Crashes+c.Metrics.Restarts, "%s never failed", c.Name)
	}
}
