package xform_test

import (
	"context"
	goruntime "runtime"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/internal/xform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// modifier is the part of a controller's ReaderWriter a Write of an
// existing output without finalizers uses: Modify, on a state.
type modifier struct {
	controller.ReaderWriter // nil: any other call panics
	st                      state.State
}

func (m modifier) Modify(ctx context.Context, r resource.Resource, fn func(resource.Resource) error, _ ...controller.ModifyOption) error {
	return m.st.Modify(ctx, r, fn)
}

// finalizing is modifier with AddFinalizer too, on the same state.
type finalizing struct{ modifier }

func (f finalizing) AddFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	return f.st.AddFinalizer(ctx, ptr, fins...)
}

// TestFinalizersMakeNoSlicePerWrite: a Write that adds its input
// finalizer passes Finalizers, the slice its caller made once, to
// AddFinalizer: it allocates what the state's AddFinalizer and Modify do
// with a slice and a function made once; without Finalizers, a slice more
// per write.
func TestFinalizersMakeNoSlicePerWrite(t *testing.T) {
	ctx := context.Background()
	st := inmem.NewState()
	in, out := fixture.New[fixture.ADef]("x", 1), fixture.New[fixture.BDef]("x", 0)
	require.NoError(t, st.Create(ctx, in.DeepCopy()))
	require.NoError(t, st.Create(ctx, out.DeepCopy()))
	var rw controller.ReaderWriter = finalizing{modifier{st: st}}
	logger := zap.NewNop()
	n := 0
	transform := func(_ context.Context, _ controller.Reader, _ *zap.Logger, _ *fixture.A, out *fixture.B) error {
		n++
		out.TypedSpec().N = n
		return nil
	}
	bump := func(r resource.Resource) error {
		n++
		r.(*fixture.B).TypedSpec().N = n
		return nil
	}
	fins := []resource.Finalizer{"ctrl"}
	var applier xform.Applier[*fixture.A, *fixture.B]
	write := func(fins []resource.Finalizer) func() {
		return func() {
			w := xform.Write[*fixture.A, *fixture.B]{In: in, Out: out, Transform: transform, Applier: &applier, Finalizer: "ctrl", Finalizers: fins}
			done, err := w.Run(ctx, rw, logger)
			require.NoError(t, err)
			require.True(t, done.FinalizerAdded)
		}
	}
	byState := testing.AllocsPerRun(200, func() {
		require.NoError(t, st.AddFinalizer(ctx, in.Metadata(), fins...))
		require.NoError(t, st.Modify(ctx, out, bump))
	})
	assert.Equal(t, byState, testing.AllocsPerRun(200, write(fins)), "with Finalizers")
	assert.Equal(t, byState+1, testing.AllocsPerRun(200, write(nil)), "without")
}

// TestApplierMakesNoFunctionPerWrite: a Write with an Applier allocates
// what the state's Modify does with a function made once; without one, a
// function more per write. An Applier keeps nothing of the write it ran,
// and applies the transform of the write at hand.
func TestApplierMakesNoFunctionPerWrite(t *testing.T) {
	ctx := context.Background()
	st := inmem.NewState()
	in, out := fixture.New[fixture.ADef]("x", 1), fixture.New[fixture.BDef]("x", 0)
	require.NoError(t, st.Create(ctx, out.DeepCopy()))
	var rw controller.ReaderWriter = modifier{st: st}
	logger := zap.NewNop()
	n := 0
	transform := func(_ context.Context, _ controller.Reader, _ *zap.Logger, in *fixture.A, out *fixture.B) error {
		n++
		out.TypedSpec().N = in.TypedSpec().N + n
		return nil
	}
	bump := func(r resource.Resource) error {
		n++
		r.(*fixture.B).TypedSpec().N = n
		return nil
	}
	var applier xform.Applier[*fixture.A, *fixture.B]
	write := func(a *xform.Applier[*fixture.A, *fixture.B]) func() {
		return func() {
			w := xform.Write[*fixture.A, *fixture.B]{In: in, Out: out, Transform: transform, Applier: a}
			_, err := w.Run(ctx, rw, logger)
			require.NoError(t, err)
		}
	}
	byState := testing.AllocsPerRun(200, func() { require.NoError(t, st.Modify(ctx, out, bump)) })
	assert.Equal(t, byState, testing.AllocsPerRun(200, write(&applier)), "with an Applier")
	assert.Equal(t, byState+1, testing.AllocsPerRun(200, write(nil)), "without")

	// The input of a write that returned is not kept.
	var gone weak.Pointer[fixture.A]
	func() {
		tmp := fixture.New[fixture.ADef]("x", 7)
		gone = weak.Make(tmp)
		write := xform.Write[*fixture.A, *fixture.B]{In: tmp, Out: out, Transform: transform, Applier: &applier}
		_, err := write.Run(ctx, rw, logger)
		require.NoError(t, err)
	}()
	goruntime.GC()
	assert.Nil(t, gone.Value(), "the input of the last write is still reachable")

	other := fixture.New[fixture.ADef]("x", 100)
	w := xform.Write[*fixture.A, *fixture.B]{In: other, Out: out, Applier: &applier,
		Transform: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in *fixture.A, out *fixture.B) error {
			out.TypedSpec().N = -in.TypedSpec().N
			return nil
		}}
	_, err := w.Run(ctx, rw, logger)
	require.NoError(t, err)
	got, err := st.Get(ctx, out.Metadata())
	require.NoError(t, err)
	assert.Equal(t, -100, got.(*fixture.B).TypedSpec().N)
}
