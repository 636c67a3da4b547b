package qtransform_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

var _ controller.QController = (*qtransform.QController[*A, *B])(nil)

func TestQ1_EveryInputMapsToItsOutput(t *testing.T) {
	st := newState()
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(aToB("AtoB")))
	runtimetest.Create(t, st, newA("a1", 1), newA("a2", 2))

	b1 := runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](4)))
	assert.Equal(t, "AtoB", b1.Metadata().Owner(), "outputs are owned by the controller")

	fixture.SetN[*A](t, st, ptrA("a1"), 10)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](20)))

	teardownAndDestroy(t, st, ptrA("a2"))
	runtimetest.AssertNoResource[*B](t, st, "a2")
}

func TestQ2_UnchangedOutputIsNotWritten(t *testing.T) {
	st := newState()
	type write struct{ in, out resource.Version }
	seen := make(chan write, 1024)
	s := settings("AtoB") // double ignores M
	s.TransformExtraOutputFunc = func(_ context.Context, _ controller.ReaderWriter, _ *zap.Logger, a *A, b *B) error {
		seen <- write{a.Metadata().Version(), b.Metadata().Version()}
		return nil
	}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s)))
	runtimetest.Create(t, st, newA("a1", 1))
	b := runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))

	a, err := safe.StateUpdateWithConflicts(context.Background(), st, ptrA("a1"), func(a *A) error {
		a.TypedSpec().M = 7
		return nil
	})
	require.NoError(t, err)
	for w := range seen {
		if w.in.Equal(a.Metadata().Version()) {
			assert.Equal(t, b.Metadata().Version(), w.out, "the output was written although unchanged")
			break
		}
	}
	cur, err := st.Get(context.Background(), ptrB("a1"))
	require.NoError(t, err)
	assert.Equal(t, b.Metadata().Version(), cur.Metadata().Version())
}

func TestQ2_TheControllersOwnFinalizerWriteIsNotProcessedAgain(t *testing.T) {
	// Adding the input finalizer changes the input, which queues it again;
	// that Reconcile finds nothing new and does not run TransformFunc.
	st := newState()
	calls := map[resource.ID]int{}
	var mu sync.Mutex
	s := settings("AtoB")
	s.TransformFunc = func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
		mu.Lock()
		calls[a.Metadata().ID()]++
		mu.Unlock()
		return double(ctx, r, l, a, b)
	}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s)))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *A) bool { return got.Metadata().Finalizers().Has("AtoB") }))
	// Items are queued in order and run one at a time: once the output of
	// an input created later exists, a1's second Reconcile is over.
	runtimetest.Create(t, st, newA("marker", 1))
	runtimetest.AssertResource(t, st, "marker", runtimetest.Holds(fixture.RunningN[*B](2)))
	mu.Lock()
	assert.Equal(t, 1, calls["a1"], "TransformFunc ran again for the controller's own write")
	mu.Unlock()

	// A change of the input is processed.
	fixture.SetN[*A](t, st, ptrA("a1"), 5)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](10)))
	mu.Lock()
	assert.Equal(t, 2, calls["a1"])
	mu.Unlock()
}

func TestQ3_AFailingInputDoesNotStopTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		s := settings("AtoB")
		s.TransformFunc = func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
			if a.TypedSpec().N < 0 {
				return errors.New("negative input")
			}
			return double(ctx, r, l, a, b)
		}
		ctrl := record(qtransform.NewQController(s))
		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))
		runtimetest.Create(t, st, newA("a1", 1), newA("a2", 2))
		runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](4)))

		fixture.SetN[*A](t, st, ptrA("a2"), -1)
		err := ctrl.Await(t, func(err error) bool { return strings.Contains(err.Error(), "negative input") })
		assert.Equal(t, "TransformFunc: negative input", err.Error(), "the error names what failed (the Runtime names the item)")
		runtimetest.Create(t, st, newA("a3", 3))
		runtimetest.AssertResource(t, st, "a3", runtimetest.Holds(fixture.RunningN[*B](6)))
		b2, err := safe.StateGet[*B](context.Background(), st, ptrB("a2"))
		require.NoError(t, err)
		assert.Equal(t, 4, b2.TypedSpec().N, "the failing input's output is kept as it was")

		fixture.SetN[*A](t, st, ptrA("a2"), 5)
		runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](10)))
	})
}

func TestAPanicFailsOnlyItsInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		s := settings("AtoB")
		s.TransformFunc = func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
			if a.Metadata().ID() == "boom" {
				panic("boom")
			}
			return double(ctx, r, l, a, b)
		}
		ctrl := record(qtransform.NewQController(s, qtransform.WithConcurrency(2)))
		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))
		runtimetest.Create(t, st, newA("a1", 1), newA("boom", 2), newA("z1", 3))
		runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
		runtimetest.AssertResource(t, st, "z1", runtimetest.Holds(fixture.RunningN[*B](6)))

		err := ctrl.Await(t, func(error) bool { return true })
		var pe *generic.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, ptrA("boom"), pe.Resource)
		assert.Equal(t, "TransformFunc", pe.Func)
		_, err = st.Get(context.Background(), ptrB("boom"))
		assert.True(t, state.IsNotFoundError(err), "nothing is written for the panicking input")
	})
}

func TestQ5_BadMappingFailsOnlyItsInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		s := settings("AtoB")
		s.MapMetadataFunc = func(a *A) *B {
			id := a.Metadata().ID()
			switch id {
			case "nil":
				return nil
			case "wrongns":
				return typed.New[fixture.Spec, fixture.BDef](resource.NewMetadata("other", kindB.Type(), id, resource.VersionUndefined), fixture.Spec{})
			case "wrongtype":
				return typed.New[fixture.Spec, fixture.BDef](resource.NewMetadata(kindB.Namespace(), kindC.Type(), id, resource.VersionUndefined), fixture.Spec{})
			}
			return fixture.Map[*A, fixture.BDef](a)
		}
		ctrl := record(qtransform.NewQController(s))
		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))
		// What each bad mapping's error says.
		bad := map[string]string{
			"nil":       "MapMetadataFunc returned a nil resource",
			"wrongns":   "MapMetadataFunc returned " + kindB.Type() + "(other/wrongns), outside the declared kind",
			"wrongtype": "MapMetadataFunc returned " + kindC.Type() + "(test/wrongtype), outside the declared kind",
		}
		for id := range bad {
			runtimetest.Create(t, st, newA(id, 1))
		}
		runtimetest.Create(t, st, newA("good", 5))
		runtimetest.AssertResource(t, st, "good", runtimetest.Holds(fixture.RunningN[*B](10)))

		for len(bad) > 0 {
			err := ctrl.Await(t, func(error) bool { return true })
			assert.True(t, state.IsInvalidError(err), "a bad mapping is an invalid-class error: %v", err)
			for id, want := range bad {
				if strings.HasPrefix(err.Error(), want) {
					delete(bad, id)
				}
			}
		}
		list, err := st.List(context.Background(), kindB)
		require.NoError(t, err)
		assert.Len(t, list.Items, 1, "nothing is written for bad mappings")
	})
}

func TestInputRecreatedWhileOutputTearsDownGetsAFreshOutput(t *testing.T) {
	// Only without input finalizers may an input be destroyed (and created
	// again) while its output still exists.
	st := newState()
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(aToB("AtoB", qtransform.WithoutInputFinalizers())))
	ctx := context.Background()
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1"), "hold"))

	require.NoError(t, st.Destroy(ctx, ptrA("a1")))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *B) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
	runtimetest.Create(t, st, newA("a1", 5))

	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1"), "hold"))
	b := runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](10)))
	assert.True(t, b.Metadata().Finalizers().Empty())
}

func TestInputFinalizerIsHeldUntilTheOutputIsDestroyed(t *testing.T) {
	st := newState()
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(aToB("AtoB")))
	ctx := context.Background()
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	a, err := st.Get(ctx, ptrA("a1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"AtoB"}, []string(*a.Metadata().Finalizers()), "by default the input holds the controller's finalizer")

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

func TestTheOutputIsDestroyedBeforeTheInputGoes(t *testing.T) {
	// A chain A → B → C of qtransforms with the default input finalizers:
	// tearing A down destroys C, then B, and only then lets A go. The
	// removal functions check the order as it happens; once
	// TeardownAndDestroy of A returns, nothing of the chain is left.
	st := newState()
	outputGone := func(ptr resource.Pointer) func(context.Context, controller.Reader, *zap.Logger, resource.Resource) error {
		return func(ctx context.Context, r controller.Reader, _ *zap.Logger, _ resource.Resource) error {
			if _, err := r.Get(ctx, ptr); !state.IsNotFoundError(err) {
				return fmt.Errorf("output %s still there (%v) when the input's finalizer is removed", resource.PointerString(ptr), err)
			}
			return nil
		}
	}
	misordered := make(chan error, 16)
	ab := settings("AtoB")
	ab.FinalizerRemovalFunc = func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A) error {
		if err := outputGone(ptrB(a.Metadata().ID()))(ctx, r, l, a); err != nil {
			misordered <- err
		}
		return nil
	}
	bc := qtransform.Settings[*B, *C]{
		Name:              "BtoC",
		MapMetadataFunc:   fixture.Map[*B, fixture.CDef],
		UnmapMetadataFunc: fixture.Map[*C, fixture.BDef],
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, b *B, c *C) error {
			c.TypedSpec().N = b.TypedSpec().N + 1
			return nil
		},
		FinalizerRemovalFunc: func(ctx context.Context, r controller.Reader, l *zap.Logger, b *B) error {
			if err := outputGone(typed.Pointer[*C](b.Metadata().ID()))(ctx, r, l, b); err != nil {
				misordered <- err
			}
			return nil
		},
	}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(ab), qtransform.NewQController(bc)))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*C](3)))

	teardownAndDestroy(t, st, ptrA("a1"))
	for _, ptr := range []resource.Pointer{ptrB("a1"), typed.Pointer[*C]("a1")} {
		_, err := st.Get(context.Background(), ptr)
		assert.True(t, state.IsNotFoundError(err), "%s outlived its input: %v", resource.PointerString(ptr), err)
	}
	close(misordered)
	for err := range misordered {
		t.Error(err)
	}
}

func TestFinalizerRemovalCanBeVetoed(t *testing.T) {
	// The veto fails the item, which the Runtime retries with its per-item
	// exponential backoff (100 ms, doubling, by default) until the veto
	// lifts; the finalizer stays meanwhile.
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		var allow atomic.Bool
		vetoed := make(chan time.Time, 16)
		s := settings("AtoB")
		s.FinalizerRemovalFunc = func(ctx context.Context, r controller.Reader, _ *zap.Logger, a *A) error {
			if _, err := r.Get(ctx, ptrB(a.Metadata().ID())); !state.IsNotFoundError(err) {
				return fmt.Errorf("asked while the output exists (%v)", err)
			}
			if allow.Load() {
				return nil
			}
			select {
			case vetoed <- time.Now():
			default:
			}
			return errors.New("not yet")
		}
		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s)))
		ctx := context.Background()
		runtimetest.Create(t, st, newA("a1", 1))
		runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
		_, err := st.Teardown(ctx, ptrA("a1"))
		require.NoError(t, err)
		runtimetest.AssertNoResource[*B](t, st, "a1")
		// Changes re-run the item at once (rule Q3): the output's
		// teardown maps to the input (its destruction maps to nothing).
		// Once they are all handled (every goroutine blocked, no virtual
		// time passed), only the backoff runs it again.
		synctest.Wait()
		var times []time.Time
		for drained := false; !drained; {
			select {
			case at := <-vetoed:
				times = append(times[:0], at)
			default:
				drained = true
			}
		}
		require.Len(t, times, 1, "vetoed before the output was gone")
		for range 3 { // vetoed on the retries
			times = append(times, <-vetoed)
		}
		for i := 2; i < len(times); i++ {
			prev, gap := times[i-1].Sub(times[i-2]), times[i].Sub(times[i-1])
			assert.Greater(t, gap, prev, "the retries back off: %v", times)
		}
		a, err := st.Get(ctx, ptrA("a1"))
		require.NoError(t, err)
		assert.True(t, a.Metadata().Finalizers().Has("AtoB"), "a vetoed finalizer stays")

		allow.Store(true)
		runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *A) bool { return got.Metadata().Finalizers().Empty() }))
		require.NoError(t, st.Destroy(ctx, ptrA("a1")))
	})
}

func TestWithoutInputFinalizersTheInputGoesFirst(t *testing.T) {
	st := newState()
	s := settings("AtoB")
	vetoes := make(chan struct{}, 1)
	s.FinalizerRemovalFunc = func(context.Context, controller.Reader, *zap.Logger, *A) error {
		vetoes <- struct{}{}
		return errors.New("ignored")
	}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s, qtransform.WithoutInputFinalizers())))
	ctx := context.Background()
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	a, err := st.Get(ctx, ptrA("a1"))
	require.NoError(t, err)
	assert.True(t, a.Metadata().Finalizers().Empty(), "no input finalizer")

	// Nothing holds the input: it is destroyed at once, with its output
	// still there, and the output follows.
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1"), "hold"))
	require.NoError(t, st.Destroy(ctx, ptrA("a1")))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *B) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1"), "hold"))
	runtimetest.AssertNoResource[*B](t, st, "a1")
	assert.Empty(t, vetoes, "FinalizerRemovalFunc is not used without input finalizers")
}

func TestExtraOutputsAreWrittenByTheExtraFunction(t *testing.T) {
	st := newState()
	s := settings("AtoB")
	s.TransformExtraOutputFunc = func(ctx context.Context, w controller.ReaderWriter, _ *zap.Logger, a *A, b *B) error {
		return safe.WriterModify(ctx, w, fixture.New[fixture.CDef](a.Metadata().ID(), 0), func(c *C) error {
			c.TypedSpec().N = b.TypedSpec().N + 1
			return nil
		})
	}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s,
		qtransform.WithExtraOutputs(controller.Output{Type: kindC.Type(), Kind: controller.OutputExclusive}))))
	runtimetest.Create(t, st, newA("a1", 1))
	c := runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*C](3)))
	assert.Equal(t, "AtoB", c.Metadata().Owner())
	fixture.SetN[*A](t, st, ptrA("a1"), 5)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*C](11)))
}

func TestExtraMappedInputsRequeueTheirInputs(t *testing.T) {
	st := newState()
	gone := make(chan *C, 16)
	s := settings("AtoB")
	s.TransformFunc = func(ctx context.Context, r controller.Reader, _ *zap.Logger, a *A, b *B) error {
		extra := 0
		c, err := safe.ReaderGet[*C](ctx, r, typed.Pointer[*C](a.Metadata().ID()))
		switch {
		case err == nil:
			extra = c.TypedSpec().N
		case !state.IsNotFoundError(err):
			return err
		}
		b.TypedSpec().N = a.TypedSpec().N + extra
		return nil
	}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s,
		qtransform.WithExtraMappedInput(func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, c *C) ([]resource.Pointer, error) {
			if qtransform.InputDestroyed(ctx) {
				gone <- c
			}
			return []resource.Pointer{ptrA(c.Metadata().ID())}, nil
		}))))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](1)))
	runtimetest.Create(t, st, fixture.New[fixture.CDef]("a1", 100))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](101)))
	require.NoError(t, st.Destroy(context.Background(), typed.Pointer[*C]("a1")))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](1)))
	c := <-gone
	assert.Equal(t, typed.Pointer[*C]("a1"), resource.PointerOf(c.Metadata()), "a gone resource is passed with its metadata")
	assert.Equal(t, uint64(1), c.Metadata().Version().Value(), "its last stored version's")
	assert.Equal(t, 100, c.TypedSpec().N, "and its last spec")
	assert.Empty(t, gone, "only its destruction is mapped as destroyed")
}

func TestTearingDownInputsCanKeepTheirOutputs(t *testing.T) {
	for _, withFinalizers := range []bool{false, true} {
		t.Run(fmt.Sprintf("finalizers=%v", withFinalizers), func(t *testing.T) {
			st := newState()
			opts := []qtransform.ControllerOption{qtransform.WithIgnoreTearingDownInputs()}
			if !withFinalizers {
				opts = append(opts, qtransform.WithoutInputFinalizers())
			}
			runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(aToB("AtoB", opts...)))
			ctx := context.Background()
			a := newA("a1", 1)
			a.Metadata().Finalizers().Add("hold")
			runtimetest.Create(t, st, a)
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
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(qtransform.Settings[*A, *C]{
		Name:              "AtoC",
		MapMetadataFunc:   func(a *A) *C { return fixture.New[fixture.CDef]("a-"+a.Metadata().ID(), 0) },
		UnmapMetadataFunc: func(c *C) *A { return newA(strings.TrimPrefix(c.Metadata().ID(), "a-"), 0) },
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, a *A, c *C) error {
			c.TypedSpec().N = a.TypedSpec().N
			return nil
		},
	}, qtransform.WithOutputKind(controller.OutputShared)),
		qtransform.NewQController(qtransform.Settings[*B, *C]{
			Name:              "BtoC",
			MapMetadataFunc:   func(b *B) *C { return fixture.New[fixture.CDef]("b-"+b.Metadata().ID(), 0) },
			UnmapMetadataFunc: func(c *C) *B { return fixture.New[fixture.BDef](strings.TrimPrefix(c.Metadata().ID(), "b-"), 0) },
			TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, b *B, c *C) error {
				c.TypedSpec().N = b.TypedSpec().N
				return nil
			},
		}, qtransform.WithOutputKind(controller.OutputShared))))
	runtimetest.Create(t, st, newA("x", 1), fixture.New[fixture.BDef]("x", 2))
	ca := runtimetest.AssertResource(t, st, "a-x", runtimetest.Holds(fixture.RunningN[*C](1)))
	cb := runtimetest.AssertResource(t, st, "b-x", runtimetest.Holds(fixture.RunningN[*C](2)))
	assert.Equal(t, "AtoC", ca.Metadata().Owner())
	assert.Equal(t, "BtoC", cb.Metadata().Owner())

	teardownAndDestroy(t, st, ptrA("x"))
	runtimetest.AssertNoResource[*C](t, st, "a-x")
	fixture.SetN[*B](t, st, ptrB("x"), 3)
	runtimetest.AssertResource(t, st, "b-x", runtimetest.Holds(fixture.RunningN[*C](3)))
}

func TestConcurrentItemsAllConverge(t *testing.T) {
	st := newState()
	var inFlight, maxInFlight atomic.Int32
	s := settings("AtoB")
	s.TransformFunc = func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		return double(ctx, r, l, a, b)
	}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s, qtransform.WithConcurrency(4))))
	const n = 200
	for i := range n {
		runtimetest.Create(t, st, newA(fmt.Sprintf("a%03d", i), i))
	}
	for i := range n {
		runtimetest.AssertResource(t, st, fmt.Sprintf("a%03d", i), runtimetest.Holds(fixture.RunningN[*B](2*i)))
	}
	assert.LessOrEqual(t, maxInFlight.Load(), int32(4), "no more than Concurrency items at once")
}

func TestOrphanOutputsAreDestroyedOnStart(t *testing.T) {
	st := newState()
	ctx := context.Background()
	require.NoError(t, st.Create(ctx, fixture.New[fixture.BDef]("orphan", 1), state.WithCreateOwner("AtoB")))
	held := fixture.New[fixture.BDef]("held", 1)
	held.Metadata().Finalizers().Add("hold")
	require.NoError(t, st.Create(ctx, held, state.WithCreateOwner("AtoB")))
	require.NoError(t, st.Create(ctx, fixture.New[fixture.BDef]("kept", 1), state.WithCreateOwner("AtoB")))
	runtimetest.Create(t, st, newA("kept", 3))

	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(aToB("AtoB")))
	runtimetest.AssertResource(t, st, "kept", runtimetest.Holds(fixture.RunningN[*B](6)))
	runtimetest.AssertNoResource[*B](t, st, "orphan")
	runtimetest.AssertResource(t, st, "held", runtimetest.Holds(func(got *B) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("held"), "hold"))
	runtimetest.AssertNoResource[*B](t, st, "held")
}

func TestAnUnmappableExistingOutputDoesNotStopTheInputs(t *testing.T) {
	st := newState()
	ctx := context.Background()
	require.NoError(t, st.Create(ctx, fixture.New[fixture.BDef]("bad", 1), state.WithCreateOwner("AtoB")))
	require.NoError(t, st.Create(ctx, fixture.New[fixture.BDef]("orphan", 1), state.WithCreateOwner("AtoB")))
	runtimetest.Create(t, st, newA("a1", 1))
	s := settings("AtoB")
	s.UnmapMetadataFunc = func(b *B) *A {
		if b.Metadata().ID() == "bad" {
			panic("cannot unmap")
		}
		return fixture.Map[*B, fixture.ADef](b)
	}

	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s)))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	runtimetest.AssertNoResource[*B](t, st, "orphan")
	_, err := st.Get(ctx, ptrB("bad"))
	assert.NoError(t, err, "an output that cannot be mapped back is left alone")
}

func TestAMappingChangeMovesTheOutput(t *testing.T) {
	st := newState()
	s := settings("AtoB")
	s.MapMetadataFunc = func(a *A) *B {
		return fixture.New[fixture.BDef](fmt.Sprintf("%s-%d", a.Metadata().ID(), a.TypedSpec().N%2), 0)
	}
	s.UnmapMetadataFunc = func(b *B) *A {
		id := b.Metadata().ID()
		return newA(id[:strings.LastIndex(id, "-")], 0)
	}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s)))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1-1", runtimetest.Holds(fixture.RunningN[*B](2)))
	require.NoError(t, st.AddFinalizer(context.Background(), ptrB("a1-1"), "hold"))
	fixture.SetN[*A](t, st, ptrA("a1"), 2)
	runtimetest.AssertResource(t, st, "a1-0", runtimetest.Holds(fixture.RunningN[*B](4)))
	runtimetest.AssertResource(t, st, "a1-1", runtimetest.Holds(func(got *B) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
	require.NoError(t, st.RemoveFinalizer(context.Background(), ptrB("a1-1"), "hold"))
	runtimetest.AssertNoResource[*B](t, st, "a1-1")
}

func TestAMappingThatMovesBackKeepsItsOutputTracked(t *testing.T) {
	// a1 maps to a1-1, then to a1-0 while a1-1 is held by a finalizer, then
	// back to a1-1: the held output is replaced by a fresh one once the
	// finalizer goes, and that fresh output still belongs to a1, so it
	// goes when a1 does.
	st := newState()
	ctx := context.Background()
	s := settings("AtoB")
	s.MapMetadataFunc = func(a *A) *B {
		return fixture.New[fixture.BDef](fmt.Sprintf("%s-%d", a.Metadata().ID(), a.TypedSpec().N%2), 0)
	}
	s.UnmapMetadataFunc = func(b *B) *A {
		id := b.Metadata().ID()
		return newA(id[:strings.LastIndex(id, "-")], 0)
	}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s)))
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

	teardownAndDestroy(t, st, ptrA("a1"))
	runtimetest.AssertNoResource[*B](t, st, "a1-1")
}

func TestRequeueErrorRequeuesTheItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		var calls atomic.Int32
		s := settings("AtoB")
		s.TransformFunc = func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
			if calls.Add(1) < 3 {
				return controller.NewRequeueInterval(time.Second)
			}
			return double(ctx, r, l, a, b)
		}
		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s)))
		start := time.Now()
		// The input comes with the controller's finalizer: adding it would
		// be a change, which would make the waiting item run at once (Q3).
		a := newA("a1", 4)
		a.Metadata().Finalizers().Add("AtoB")
		runtimetest.Create(t, st, a)
		runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](8)))
		assert.Equal(t, int32(3), calls.Load(), "requeued twice, then written")
		assert.GreaterOrEqual(t, time.Since(start), 2*time.Second, "each requeue waits its interval")
	})
}

func TestAWriteBasedOnAnEarlierIncarnationIsRetried(t *testing.T) {
	// The output is destroyed and created again between the controller's
	// read and its write: the state refuses the write as a conflict, and
	// the controller reads the output again and writes it, without failing.
	core := fixture.NewRecreating(inmem.NewState(), ptrB("a1"))
	st := state.WrapCore(core)
	ctrl := record(aToB("AtoB"))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))
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

func TestWithInputFinalizersUnmapMetadataFuncIsOptional(t *testing.T) {
	// Without UnmapMetadataFunc, the controller finds the input of a
	// destroy-ready output in its index, the output of a tearing-down input
	// it has not seen written by mapping the input, and destroys a
	// destroy-ready output of its own that no input claims.
	st := newState()
	ctx := context.Background()
	s := settings("AtoB")
	s.UnmapMetadataFunc = nil
	first := qtransform.NewQController(s)
	require.NoError(t, first.Validate())
	engine := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(first))
	runtimetest.Create(t, st, newA("a1", 1), newA("a2", 2))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](4)))

	// A held output: destroyed once destroy-ready, then the input goes.
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1"), "hold"))
	_, err := st.Teardown(ctx, ptrA("a1"))
	require.NoError(t, err)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *B) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1"), "hold"))
	runtimetest.AssertNoResource[*B](t, st, "a1")
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *A) bool { return got.Metadata().Finalizers().Empty() }))

	// A new Runtime and controller (an empty index) over the same state.
	require.NoError(t, engine.Stop())
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a2"), "hold"))
	stray := fixture.New[fixture.BDef]("stray", 0)
	stray.Metadata().Finalizers().Add("hold")
	require.NoError(t, st.Create(ctx, stray, state.WithCreateOwner("AtoB")))
	_, err = st.Teardown(ctx, ptrB("stray"), state.WithTeardownOwner("AtoB"))
	require.NoError(t, err)
	_, err = st.Teardown(ctx, ptrA("a2")) // before the new Runtime starts
	require.NoError(t, err)
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s)))
	runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(func(got *B) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a2"), "hold"))
	runtimetest.AssertNoResource[*B](t, st, "a2")
	runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(func(got *A) bool { return got.Metadata().Finalizers().Empty() }))

	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("stray"), "hold"))
	runtimetest.AssertNoResource[*B](t, st, "stray")
}

// TestInputFinalizerOptions: qtransform spells the input-finalizer
// options as transform does; its default is on, WithInputFinalizers says
// so explicitly, and an option repeated is no contradiction.
func TestInputFinalizerOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		opts []qtransform.ControllerOption
		held bool
	}{
		"default":        {held: true},
		"with":           {opts: []qtransform.ControllerOption{qtransform.WithInputFinalizers()}, held: true},
		"with, repeated": {opts: []qtransform.ControllerOption{qtransform.WithInputFinalizers(), qtransform.WithInputFinalizers()}, held: true},
		"without":        {opts: []qtransform.ControllerOption{qtransform.WithoutInputFinalizers()}, held: false},
	} {
		t.Run(name, func(t *testing.T) {
			st := newState()
			runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(aToB("AtoB", tc.opts...)))
			runtimetest.Create(t, st, newA("a1", 1))
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
			a, err := st.Get(context.Background(), ptrA("a1"))
			require.NoError(t, err)
			assert.Equal(t, tc.held, a.Metadata().Finalizers().Has("AtoB"))
		})
	}
}
