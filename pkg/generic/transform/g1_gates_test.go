package transform_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// signalling is the A → B transform with B.N = 2 * A.N that skips an
// input with N < 0 and has the output of an input with N == 0 destroyed.
func signalling(name string, opts ...transform.ControllerOption) *transform.Controller[*A, *B] {
	return transform.NewController(transform.Settings[*A, *B]{
		Name:            name,
		MapMetadataFunc: fixture.Map[*A, fixture.BDef],
		TransformFunc: func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
			switch n := a.TypedSpec().N; {
			case n < 0:
				return fmt.Errorf("negative: %w", generic.ErrSkip)
			case n == 0:
				return generic.ErrDestroyOutput
			}
			return double(ctx, r, l, a, b)
		},
	}, opts...)
}

// gatedTransform starts a Runtime with the A → B transform "AtoB" with
// input finalizers and opts, creates a1 (N=1) holding fins besides the
// controller's finalizer, tears it down, changes its N to 7, and waits
// for the output computed from it: the gate holds.
func gatedTransform(t *testing.T, fins []resource.Finalizer, opts ...transform.ControllerOption) state.State {
	t.Helper()
	st := newState()
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(
		aToB("AtoB", append([]transform.ControllerOption{transform.WithInputFinalizers()}, opts...)...)))
	ctx := context.Background()
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	require.NoError(t, st.AddFinalizer(ctx, ptrA("a1"), fins...))
	_, err := st.Teardown(ctx, ptrA("a1"))
	require.NoError(t, err)
	fixture.SetN[*A](t, st, ptrA("a1"), 7, state.WithExpectedPhaseAny())
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](14)))
	return st
}

// TestG1a_TransformTeardownIgnoredUntilOnlyGivenFinalizersRemain: the
// gate of a transform Controller with input finalizers keeps the output
// of a tearing-down input computed until only the named finalizers
// remain.
func TestG1a_TransformTeardownIgnoredUntilOnlyGivenFinalizersRemain(t *testing.T) {
	st := gatedTransform(t, []resource.Finalizer{"keep", "other"}, transform.WithIgnoreTeardownUntil("keep"))
	require.NoError(t, st.RemoveFinalizer(context.Background(), ptrA("a1"), "other"))
	runtimetest.AssertNoResource[*B](t, st, "a1")
	runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(md *resource.Metadata) bool {
		return !md.Finalizers().Has("AtoB") && md.Finalizers().Has("keep")
	}))
}

// TestG1b_TransformTeardownIgnoredWhileAGivenFinalizerIsPresent: the
// same with WithIgnoreTeardownWhile.
func TestG1b_TransformTeardownIgnoredWhileAGivenFinalizerIsPresent(t *testing.T) {
	st := gatedTransform(t, []resource.Finalizer{"hold"}, transform.WithIgnoreTeardownWhile("hold"))
	require.NoError(t, st.RemoveFinalizer(context.Background(), ptrA("a1"), "hold"))
	runtimetest.AssertNoResource[*B](t, st, "a1")
	runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(md *resource.Metadata) bool { return md.Finalizers().Empty() }))
}

// TestG1c_TransformSkipKeepsTheOutputAndIsNoFailure: a skipped input's
// output is neither written nor destroyed by the pass's output tracking,
// and no failure is reported.
func TestG1c_TransformSkipKeepsTheOutputAndIsNoFailure(t *testing.T) {
	st := newState()
	ctrl := record(signalling("AtoB"))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	runtimetest.Create(t, st, newA("a1", 1), newA("neg", -1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	fixture.SetN[*A](t, st, ptrA("a1"), -3)
	runtimetest.Create(t, st, newA("marker", 4))
	runtimetest.AssertResource(t, st, "marker", runtimetest.Holds(fixture.RunningN[*B](8)))
	runtimetest.AssertResource(t, st, "a1", func(b *B, asrt *assert.Assertions) { asrt.Equal(2, b.TypedSpec().N) })
	runtimetest.AssertNoResource[*B](t, st, "neg")
	assert.Empty(t, ctrl.Errors, "a skip is no failure")
}

// TestG1d_TransformDestroyOutputDestroysIt: a destroy signal has the
// output destroyed as if its input were gone; a later change writes it
// again.
func TestG1d_TransformDestroyOutputDestroysIt(t *testing.T) {
	st := newState()
	ctrl := record(signalling("AtoB", transform.WithInputFinalizers()))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	fixture.SetN[*A](t, st, ptrA("a1"), 0)
	runtimetest.AssertNoResource[*B](t, st, "a1")
	md := runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(*resource.Metadata) bool { return true })).Metadata()
	assert.True(t, md.Finalizers().Has("AtoB"), "the running input keeps the finalizer")
	fixture.SetN[*A](t, st, ptrA("a1"), 5)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](10)))
	assert.Empty(t, ctrl.Errors, "a destroy signal is no failure")
}
