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
	"github.com/resgraph/resgraph/pkg/generic/internal/gentest"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

var _ controller.QController = (*qtransform.QController[*A, *B])(nil)

func TestQ1_EveryInputMapsToItsOutput(t *testing.T) {
	st := newState()
	gentest.Start(t, st, nil, aToB("AtoB"))
	gentest.Create(t, st, newA("a1", 1), newA("a2", 2))

	b1 := gentest.AwaitN[*B](t, st, ptrB("a1"), 2)
	gentest.AwaitN[*B](t, st, ptrB("a2"), 4)
	assert.Equal(t, "AtoB", b1.Metadata().Owner(), "outputs are owned by the controller")

	gentest.SetN[*A](t, st, ptrA("a1"), 10)
	gentest.AwaitN[*B](t, st, ptrB("a1"), 20)

	teardownAndDestroy(t, st, ptrA("a2"))
	gentest.AwaitGone(t, st, ptrB("a2"))
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
	gentest.Start(t, st, nil, qtransform.NewQController(s))
	gentest.Create(t, st, newA("a1", 1))
	b := gentest.AwaitN[*B](t, st, ptrB("a1"), 2)

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
	gentest.Start(t, st, nil, qtransform.NewQController(s))
	gentest.Create(t, st, newA("a1", 1))
	gentest.AwaitN[*B](t, st, ptrB("a1"), 2)
	gentest.AwaitMD(t, st, ptrA("a1"), func(md *resource.Metadata) bool { return md.Finalizers().Has("AtoB") })
	// Items are queued in order and run one at a time: once the output of
	// an input created later exists, a1's second Reconcile is over.
	gentest.Create(t, st, newA("marker", 1))
	gentest.AwaitN[*B](t, st, ptrB("marker"), 2)
	mu.Lock()
	assert.Equal(t, 1, calls["a1"], "TransformFunc ran again for the controller's own write")
	mu.Unlock()

	// A change of the input is processed.
	gentest.SetN[*A](t, st, ptrA("a1"), 5)
	gentest.AwaitN[*B](t, st, ptrB("a1"), 10)
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
		gentest.Start(t, st, nil, ctrl)
		gentest.Create(t, st, newA("a1", 1), newA("a2", 2))
		gentest.AwaitN[*B](t, st, ptrB("a2"), 4)

		gentest.SetN[*A](t, st, ptrA("a2"), -1)
		err := ctrl.Await(t, func(err error) bool { return strings.Contains(err.Error(), "negative input") })
		assert.Equal(t, "TransformFunc: negative input", err.Error(), "the error names what failed (the engine names the item)")
		gentest.Create(t, st, newA("a3", 3))
		gentest.AwaitN[*B](t, st, ptrB("a3"), 6)
		b2, err := safe.StateGet[*B](context.Background(), st, ptrB("a2"))
		require.NoError(t, err)
		assert.Equal(t, 4, b2.TypedSpec().N, "the failing input's output is kept as it was")

		gentest.SetN[*A](t, st, ptrA("a2"), 5)
		gentest.AwaitN[*B](t, st, ptrB("a2"), 10)
	})
}

func TestQ4_APanicFailsOnlyItsInput(t *testing.T) {
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
		gentest.Start(t, st, nil, ctrl)
		gentest.Create(t, st, newA("a1", 1), newA("boom", 2), newA("z1", 3))
		gentest.AwaitN[*B](t, st, ptrB("a1"), 2)
		gentest.AwaitN[*B](t, st, ptrB("z1"), 6)

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
				return typed.New[gentest.Spec, gentest.BDef](resource.NewMetadata("other", kindB.Type(), id, resource.VersionUndefined), gentest.Spec{})
			case "wrongtype":
				return typed.New[gentest.Spec, gentest.BDef](resource.NewMetadata(kindB.Namespace(), kindC.Type(), id, resource.VersionUndefined), gentest.Spec{})
			}
			return gentest.Map[*A, gentest.BDef](a)
		}
		ctrl := record(qtransform.NewQController(s))
		gentest.Start(t, st, nil, ctrl)
		// What each bad mapping's error says.
		bad := map[string]string{
			"nil":       "MapMetadataFunc returned a nil resource",
			"wrongns":   "MapMetadataFunc returned " + kindB.Type() + "(other/wrongns), outside the declared kind",
			"wrongtype": "MapMetadataFunc returned " + kindC.Type() + "(test/wrongtype), outside the declared kind",
		}
		for id := range bad {
			gentest.Create(t, st, newA(id, 1))
		}
		gentest.Create(t, st, newA("good", 5))
		gentest.AwaitN[*B](t, st, ptrB("good"), 10)

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

func TestQ6_InputRecreatedWhileOutputTearsDownGetsAFreshOutput(t *testing.T) {
	// Only without input finalizers may an input be destroyed (and created
	// again) while its output still exists.
	st := newState()
	gentest.Start(t, st, nil, aToB("AtoB", qtransform.WithoutInputFinalizers()))
	ctx := context.Background()
	gentest.Create(t, st, newA("a1", 1))
	gentest.AwaitN[*B](t, st, ptrB("a1"), 2)
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1"), "hold"))

	require.NoError(t, st.Destroy(ctx, ptrA("a1")))
	gentest.AwaitMD(t, st, ptrB("a1"), func(md *resource.Metadata) bool { return md.Phase() == resource.PhaseTearingDown })
	gentest.Create(t, st, newA("a1", 5))

	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1"), "hold"))
	b := gentest.AwaitN[*B](t, st, ptrB("a1"), 10)
	assert.True(t, b.Metadata().Finalizers().Empty())
}

func TestQ7_InputFinalizerIsHeldUntilTheOutputIsDestroyed(t *testing.T) {
	st := newState()
	gentest.Start(t, st, nil, aToB("AtoB"))
	ctx := context.Background()
	gentest.Create(t, st, newA("a1", 1))
	gentest.AwaitN[*B](t, st, ptrB("a1"), 2)
	a, err := st.Get(ctx, ptrA("a1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"AtoB"}, []string(*a.Metadata().Finalizers()), "by default the input holds the controller's finalizer")

	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1"), "hold"))
	_, err = st.Teardown(ctx, ptrA("a1"))
	require.NoError(t, err)
	gentest.AwaitMD(t, st, ptrB("a1"), func(md *resource.Metadata) bool { return md.Phase() == resource.PhaseTearingDown })
	a, err = st.Get(ctx, ptrA("a1"))
	require.NoError(t, err)
	assert.True(t, a.Metadata().Finalizers().Has("AtoB"), "the finalizer stays while the output exists")

	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1"), "hold"))
	gentest.AwaitGone(t, st, ptrB("a1"))
	gentest.AwaitMD(t, st, ptrA("a1"), func(md *resource.Metadata) bool { return md.Finalizers().Empty() })
	require.NoError(t, st.Destroy(ctx, ptrA("a1")))
}

func TestQ7_TheOutputIsDestroyedBeforeTheInputGoes(t *testing.T) {
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
		MapMetadataFunc:   gentest.Map[*B, gentest.CDef],
		UnmapMetadataFunc: gentest.Map[*C, gentest.BDef],
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, b *B, c *C) error {
			c.TypedSpec().N = b.TypedSpec().N + 1
			return nil
		},
		FinalizerRemovalFunc: func(ctx context.Context, r controller.Reader, l *zap.Logger, b *B) error {
			if err := outputGone(gentest.Ptr[gentest.CDef](b.Metadata().ID()))(ctx, r, l, b); err != nil {
				misordered <- err
			}
			return nil
		},
	}
	gentest.Start(t, st, nil, qtransform.NewQController(ab), qtransform.NewQController(bc))
	gentest.Create(t, st, newA("a1", 1))
	gentest.AwaitN[*C](t, st, gentest.Ptr[gentest.CDef]("a1"), 3)

	teardownAndDestroy(t, st, ptrA("a1"))
	for _, ptr := range []resource.Pointer{ptrB("a1"), gentest.Ptr[gentest.CDef]("a1")} {
		_, err := st.Get(context.Background(), ptr)
		assert.True(t, state.IsNotFoundError(err), "%s outlived its input: %v", resource.PointerString(ptr), err)
	}
	close(misordered)
	for err := range misordered {
		t.Error(err)
	}
}

func TestQ8_FinalizerRemovalCanBeVetoed(t *testing.T) {
	// The veto fails the item, which the engine retries with its per-item
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
		gentest.Start(t, st, nil, qtransform.NewQController(s))
		ctx := context.Background()
		gentest.Create(t, st, newA("a1", 1))
		gentest.AwaitN[*B](t, st, ptrB("a1"), 2)
		_, err := st.Teardown(ctx, ptrA("a1"))
		require.NoError(t, err)
		gentest.AwaitGone(t, st, ptrB("a1"))
		var times []time.Time
		for range 4 { // vetoed at first and on the retries
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
		gentest.AwaitMD(t, st, ptrA("a1"), func(md *resource.Metadata) bool { return md.Finalizers().Empty() })
		require.NoError(t, st.Destroy(ctx, ptrA("a1")))
	})
}

func TestQ8_WithoutInputFinalizersTheInputGoesFirst(t *testing.T) {
	st := newState()
	s := settings("AtoB")
	vetoes := make(chan struct{}, 1)
	s.FinalizerRemovalFunc = func(context.Context, controller.Reader, *zap.Logger, *A) error {
		vetoes <- struct{}{}
		return errors.New("ignored")
	}
	gentest.Start(t, st, nil, qtransform.NewQController(s, qtransform.WithoutInputFinalizers()))
	ctx := context.Background()
	gentest.Create(t, st, newA("a1", 1))
	gentest.AwaitN[*B](t, st, ptrB("a1"), 2)
	a, err := st.Get(ctx, ptrA("a1"))
	require.NoError(t, err)
	assert.True(t, a.Metadata().Finalizers().Empty(), "no input finalizer")

	// Nothing holds the input: it is destroyed at once, with its output
	// still there, and the output follows.
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1"), "hold"))
	require.NoError(t, st.Destroy(ctx, ptrA("a1")))
	gentest.AwaitMD(t, st, ptrB("a1"), func(md *resource.Metadata) bool { return md.Phase() == resource.PhaseTearingDown })
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1"), "hold"))
	gentest.AwaitGone(t, st, ptrB("a1"))
	assert.Empty(t, vetoes, "FinalizerRemovalFunc is not used without input finalizers")
}

func TestQ9_ExtraOutputsAreWrittenByTheExtraFunction(t *testing.T) {
	st := newState()
	s := settings("AtoB")
	s.TransformExtraOutputFunc = func(ctx context.Context, w controller.ReaderWriter, _ *zap.Logger, a *A, b *B) error {
		return safe.WriterModify(ctx, w, gentest.New[gentest.CDef](a.Metadata().ID(), 0), func(c *C) error {
			c.TypedSpec().N = b.TypedSpec().N + 1
			return nil
		})
	}
	gentest.Start(t, st, nil, qtransform.NewQController(s,
		qtransform.WithExtraOutputs(controller.Output{Type: kindC.Type(), Kind: controller.OutputExclusive})))
	gentest.Create(t, st, newA("a1", 1))
	c := gentest.AwaitN[*C](t, st, gentest.Ptr[gentest.CDef]("a1"), 3)
	assert.Equal(t, "AtoB", c.Metadata().Owner())
	gentest.SetN[*A](t, st, ptrA("a1"), 5)
	gentest.AwaitN[*C](t, st, gentest.Ptr[gentest.CDef]("a1"), 11)
}

func TestQ10_ExtraMappedInputsRequeueTheirInputs(t *testing.T) {
	st := newState()
	gone := make(chan *C, 16)
	s := settings("AtoB")
	s.TransformFunc = func(ctx context.Context, r controller.Reader, _ *zap.Logger, a *A, b *B) error {
		extra := 0
		c, err := safe.ReaderGet[*C](ctx, r, gentest.Ptr[gentest.CDef](a.Metadata().ID()))
		switch {
		case err == nil:
			extra = c.TypedSpec().N
		case !state.IsNotFoundError(err):
			return err
		}
		b.TypedSpec().N = a.TypedSpec().N + extra
		return nil
	}
	gentest.Start(t, st, nil, qtransform.NewQController(s,
		qtransform.WithExtraMappedInput(func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, c *C) ([]resource.Pointer, error) {
			if c.Metadata().Version().Equal(resource.VersionUndefined) {
				gone <- c
			}
			return []resource.Pointer{ptrA(c.Metadata().ID())}, nil
		})))
	gentest.Create(t, st, newA("a1", 1))
	gentest.AwaitN[*B](t, st, ptrB("a1"), 1)
	gentest.Create(t, st, gentest.New[gentest.CDef]("a1", 100))
	gentest.AwaitN[*B](t, st, ptrB("a1"), 101)
	require.NoError(t, st.Destroy(context.Background(), gentest.Ptr[gentest.CDef]("a1")))
	gentest.AwaitN[*B](t, st, ptrB("a1"), 1)
	c := <-gone
	assert.Equal(t, gentest.Ptr[gentest.CDef]("a1"), resource.PointerOf(c.Metadata()), "a gone resource is passed with its metadata")
	assert.Equal(t, gentest.Spec{}, *c.TypedSpec(), "and an empty spec")
}

func TestQ11_TearingDownInputsCanKeepTheirOutputs(t *testing.T) {
	for _, withFinalizers := range []bool{false, true} {
		t.Run(fmt.Sprintf("finalizers=%v", withFinalizers), func(t *testing.T) {
			st := newState()
			opts := []qtransform.ControllerOption{qtransform.WithIgnoreTearingDownInputs()}
			if !withFinalizers {
				opts = append(opts, qtransform.WithoutInputFinalizers())
			}
			gentest.Start(t, st, nil, aToB("AtoB", opts...))
			ctx := context.Background()
			a := newA("a1", 1)
			a.Metadata().Finalizers().Add("hold")
			gentest.Create(t, st, a)
			gentest.AwaitN[*B](t, st, ptrB("a1"), 2)

			_, err := st.Teardown(ctx, ptrA("a1"))
			require.NoError(t, err)
			gentest.SetN[*A](t, st, ptrA("a1"), 7, state.WithExpectedPhaseAny())
			gentest.AwaitN[*B](t, st, ptrB("a1"), 14)
			if withFinalizers {
				gentest.AwaitMD(t, st, ptrA("a1"), func(md *resource.Metadata) bool { return !md.Finalizers().Has("AtoB") })
			}

			require.NoError(t, st.RemoveFinalizer(ctx, ptrA("a1"), "hold"))
			require.NoError(t, st.Destroy(ctx, ptrA("a1")))
			gentest.AwaitGone(t, st, ptrB("a1"))
		})
	}
}

func TestQ12_SharedOutputsAreOwnedPerController(t *testing.T) {
	st := newState()
	gentest.Start(t, st, nil,
		qtransform.NewQController(qtransform.Settings[*A, *C]{
			Name:              "AtoC",
			MapMetadataFunc:   func(a *A) *C { return gentest.New[gentest.CDef]("a-"+a.Metadata().ID(), 0) },
			UnmapMetadataFunc: func(c *C) *A { return newA(strings.TrimPrefix(c.Metadata().ID(), "a-"), 0) },
			TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, a *A, c *C) error {
				c.TypedSpec().N = a.TypedSpec().N
				return nil
			},
		}, qtransform.WithOutputKind(controller.OutputShared)),
		qtransform.NewQController(qtransform.Settings[*B, *C]{
			Name:              "BtoC",
			MapMetadataFunc:   func(b *B) *C { return gentest.New[gentest.CDef]("b-"+b.Metadata().ID(), 0) },
			UnmapMetadataFunc: func(c *C) *B { return gentest.New[gentest.BDef](strings.TrimPrefix(c.Metadata().ID(), "b-"), 0) },
			TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, b *B, c *C) error {
				c.TypedSpec().N = b.TypedSpec().N
				return nil
			},
		}, qtransform.WithOutputKind(controller.OutputShared)),
	)
	gentest.Create(t, st, newA("x", 1), gentest.New[gentest.BDef]("x", 2))
	ca := gentest.AwaitN[*C](t, st, gentest.Ptr[gentest.CDef]("a-x"), 1)
	cb := gentest.AwaitN[*C](t, st, gentest.Ptr[gentest.CDef]("b-x"), 2)
	assert.Equal(t, "AtoC", ca.Metadata().Owner())
	assert.Equal(t, "BtoC", cb.Metadata().Owner())

	teardownAndDestroy(t, st, ptrA("x"))
	gentest.AwaitGone(t, st, gentest.Ptr[gentest.CDef]("a-x"))
	gentest.SetN[*B](t, st, ptrB("x"), 3)
	gentest.AwaitN[*C](t, st, gentest.Ptr[gentest.CDef]("b-x"), 3)
}

func TestQ13_ConcurrentItemsAllConverge(t *testing.T) {
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
	gentest.Start(t, st, nil, qtransform.NewQController(s, qtransform.WithConcurrency(4)))
	const n = 200
	for i := range n {
		gentest.Create(t, st, newA(fmt.Sprintf("a%03d", i), i))
	}
	for i := range n {
		gentest.AwaitN[*B](t, st, ptrB(fmt.Sprintf("a%03d", i)), 2*i)
	}
	assert.LessOrEqual(t, maxInFlight.Load(), int32(4), "no more than Concurrency items at once")
}

func TestQ14_OrphanOutputsAreDestroyedOnStart(t *testing.T) {
	st := newState()
	ctx := context.Background()
	require.NoError(t, st.Create(ctx, gentest.New[gentest.BDef]("orphan", 1), state.WithCreateOwner("AtoB")))
	held := gentest.New[gentest.BDef]("held", 1)
	held.Metadata().Finalizers().Add("hold")
	require.NoError(t, st.Create(ctx, held, state.WithCreateOwner("AtoB")))
	require.NoError(t, st.Create(ctx, gentest.New[gentest.BDef]("kept", 1), state.WithCreateOwner("AtoB")))
	gentest.Create(t, st, newA("kept", 3))

	gentest.Start(t, st, nil, aToB("AtoB"))
	gentest.AwaitN[*B](t, st, ptrB("kept"), 6)
	gentest.AwaitGone(t, st, ptrB("orphan"))
	gentest.AwaitMD(t, st, ptrB("held"), func(md *resource.Metadata) bool { return md.Phase() == resource.PhaseTearingDown })
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("held"), "hold"))
	gentest.AwaitGone(t, st, ptrB("held"))
}

func TestQ14_AnUnmappableExistingOutputDoesNotStopTheInputs(t *testing.T) {
	st := newState()
	ctx := context.Background()
	require.NoError(t, st.Create(ctx, gentest.New[gentest.BDef]("bad", 1), state.WithCreateOwner("AtoB")))
	require.NoError(t, st.Create(ctx, gentest.New[gentest.BDef]("orphan", 1), state.WithCreateOwner("AtoB")))
	gentest.Create(t, st, newA("a1", 1))
	s := settings("AtoB")
	s.UnmapMetadataFunc = func(b *B) *A {
		if b.Metadata().ID() == "bad" {
			panic("cannot unmap")
		}
		return gentest.Map[*B, gentest.ADef](b)
	}

	gentest.Start(t, st, nil, qtransform.NewQController(s))
	gentest.AwaitN[*B](t, st, ptrB("a1"), 2)
	gentest.AwaitGone(t, st, ptrB("orphan"))
	_, err := st.Get(ctx, ptrB("bad"))
	assert.NoError(t, err, "an output that cannot be mapped back is left alone")
}

func TestQ15_AMappingChangeMovesTheOutput(t *testing.T) {
	st := newState()
	s := settings("AtoB")
	s.MapMetadataFunc = func(a *A) *B {
		return gentest.New[gentest.BDef](fmt.Sprintf("%s-%d", a.Metadata().ID(), a.TypedSpec().N%2), 0)
	}
	s.UnmapMetadataFunc = func(b *B) *A {
		id := b.Metadata().ID()
		return newA(id[:strings.LastIndex(id, "-")], 0)
	}
	gentest.Start(t, st, nil, qtransform.NewQController(s))
	gentest.Create(t, st, newA("a1", 1))
	gentest.AwaitN[*B](t, st, ptrB("a1-1"), 2)
	require.NoError(t, st.AddFinalizer(context.Background(), ptrB("a1-1"), "hold"))
	gentest.SetN[*A](t, st, ptrA("a1"), 2)
	gentest.AwaitN[*B](t, st, ptrB("a1-0"), 4)
	gentest.AwaitMD(t, st, ptrB("a1-1"), func(md *resource.Metadata) bool { return md.Phase() == resource.PhaseTearingDown })
	require.NoError(t, st.RemoveFinalizer(context.Background(), ptrB("a1-1"), "hold"))
	gentest.AwaitGone(t, st, ptrB("a1-1"))
}

func TestQ15_AMappingThatMovesBackKeepsItsOutputTracked(t *testing.T) {
	// a1 maps to a1-1, then to a1-0 while a1-1 is held by a finalizer, then
	// back to a1-1: the held output is replaced by a fresh one once the
	// finalizer goes, and that fresh output still belongs to a1, so it
	// goes when a1 does.
	st := newState()
	ctx := context.Background()
	s := settings("AtoB")
	s.MapMetadataFunc = func(a *A) *B {
		return gentest.New[gentest.BDef](fmt.Sprintf("%s-%d", a.Metadata().ID(), a.TypedSpec().N%2), 0)
	}
	s.UnmapMetadataFunc = func(b *B) *A {
		id := b.Metadata().ID()
		return newA(id[:strings.LastIndex(id, "-")], 0)
	}
	gentest.Start(t, st, nil, qtransform.NewQController(s))
	gentest.Create(t, st, newA("a1", 1))
	gentest.AwaitN[*B](t, st, ptrB("a1-1"), 2)
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1-1"), "hold"))
	gentest.SetN[*A](t, st, ptrA("a1"), 2)
	gentest.AwaitN[*B](t, st, ptrB("a1-0"), 4)
	gentest.AwaitMD(t, st, ptrB("a1-1"), func(md *resource.Metadata) bool { return md.Phase() == resource.PhaseTearingDown })

	gentest.SetN[*A](t, st, ptrA("a1"), 3)
	gentest.AwaitGone(t, st, ptrB("a1-0"))
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1-1"), "hold"))
	gentest.AwaitN[*B](t, st, ptrB("a1-1"), 6)

	teardownAndDestroy(t, st, ptrA("a1"))
	gentest.AwaitGone(t, st, ptrB("a1-1"))
}

func TestQ16_RequeueErrorRequeuesTheItem(t *testing.T) {
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
		gentest.Start(t, st, nil, qtransform.NewQController(s))
		start := time.Now()
		// The input comes with the controller's finalizer: adding it would
		// be a change, which would make the waiting item run at once (Q3).
		a := newA("a1", 4)
		a.Metadata().Finalizers().Add("AtoB")
		gentest.Create(t, st, a)
		gentest.AwaitN[*B](t, st, ptrB("a1"), 8)
		assert.Equal(t, int32(3), calls.Load(), "requeued twice, then written")
		assert.GreaterOrEqual(t, time.Since(start), 2*time.Second, "each requeue waits its interval")
	})
}

func TestQ18_AWriteBasedOnAnEarlierIncarnationIsRetried(t *testing.T) {
	// The output is destroyed and created again between the controller's
	// read and its write: the state refuses the write as a conflict, and
	// the controller reads the output again and writes it, without failing.
	core := gentest.NewRecreating(inmem.NewState(), ptrB("a1"))
	st := state.WrapCore(core)
	ctrl := record(aToB("AtoB"))
	gentest.Start(t, st, nil, ctrl)
	gentest.Create(t, st, newA("a1", 1))
	gentest.AwaitN[*B](t, st, ptrB("a1"), 2)

	core.Arm()
	gentest.SetN[*A](t, st, ptrA("a1"), 2)
	gentest.AwaitN[*B](t, st, ptrB("a1"), 4)
	assert.Equal(t, 1, core.Conflicts(), "the write met the earlier-incarnation conflict")

	gentest.Create(t, st, newA("marker", 1)) // a later input: its output shows the write's pass is over
	gentest.AwaitN[*B](t, st, ptrB("marker"), 2)
	assert.Empty(t, ctrl.Errors, "the conflict did not fail the controller")
}

func TestQ19_WithInputFinalizersUnmapMetadataFuncIsOptional(t *testing.T) {
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
	engine := gentest.Start(t, st, nil, first)
	gentest.Create(t, st, newA("a1", 1), newA("a2", 2))
	gentest.AwaitN[*B](t, st, ptrB("a1"), 2)
	gentest.AwaitN[*B](t, st, ptrB("a2"), 4)

	// A held output: destroyed once destroy-ready, then the input goes.
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1"), "hold"))
	_, err := st.Teardown(ctx, ptrA("a1"))
	require.NoError(t, err)
	gentest.AwaitMD(t, st, ptrB("a1"), func(md *resource.Metadata) bool { return md.Phase() == resource.PhaseTearingDown })
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1"), "hold"))
	gentest.AwaitGone(t, st, ptrB("a1"))
	gentest.AwaitMD(t, st, ptrA("a1"), func(md *resource.Metadata) bool { return md.Finalizers().Empty() })

	// A new engine and controller (an empty index) over the same state.
	require.NoError(t, engine.Stop())
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a2"), "hold"))
	stray := gentest.New[gentest.BDef]("stray", 0)
	stray.Metadata().Finalizers().Add("hold")
	require.NoError(t, st.Create(ctx, stray, state.WithCreateOwner("AtoB")))
	_, err = st.Teardown(ctx, ptrB("stray"), state.WithTeardownOwner("AtoB"))
	require.NoError(t, err)
	_, err = st.Teardown(ctx, ptrA("a2")) // before the new engine starts
	require.NoError(t, err)
	gentest.Start(t, st, nil, qtransform.NewQController(s))
	gentest.AwaitMD(t, st, ptrB("a2"), func(md *resource.Metadata) bool { return md.Phase() == resource.PhaseTearingDown })
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a2"), "hold"))
	gentest.AwaitGone(t, st, ptrB("a2"))
	gentest.AwaitMD(t, st, ptrA("a2"), func(md *resource.Metadata) bool { return md.Finalizers().Empty() })

	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("stray"), "hold"))
	gentest.AwaitGone(t, st, ptrB("stray"))
}
