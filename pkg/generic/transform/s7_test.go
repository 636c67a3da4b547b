package transform_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestS7_TransformInputsAreReadOnlySnapshots: TransformFunc receives the
// state's shared snapshot of its input; a TransformFunc that changes it is
// caught by the mutation detector, which names the input and the field,
// at the latest when the input is next written.
func TestS7_TransformInputsAreReadOnlySnapshots(t *testing.T) {
	reports := make(chan error, 16)
	st := inmem.NewState(inmem.WithMutationDetector(func(err error) { reports <- err }))
	seen := make(chan *A, 16)
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(transform.Settings[*A, *B]{
		Name:            "Mutating",
		MapMetadataFunc: fixture.Map[*A, fixture.BDef],
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, a *A, b *B) error {
			seen <- a
			b.TypedSpec().N = a.TypedSpec().N
			a.TypedSpec().N = -1 // the bug the detector catches
			return nil
		},
	})))
	require.NoError(t, st.Create(t.Context(), newA("a", 1)))
	in := <-seen
	runtimetest.Await(t, st, "a", fixture.RunningN[*B](1))
	snap, err := st.Get(t.Context(), ptrA("a"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.Same(t, snap, in, "the input is the state's snapshot, not a copy")

	require.NoError(t, st.Modify(t.Context(), newA("a", 0), func(r resource.Resource) error {
		r.(*A).TypedSpec().N = 2
		return nil
	}))
	var me *inmem.MutationError
	select {
	case err := <-reports:
		require.True(t, errors.As(err, &me), "%v", err)
	case <-t.Context().Done():
		t.Fatal("no report")
	}
	assert.Equal(t, "a", me.Resource.ID())
	assert.Equal(t, resource.KindString(kindA), resource.KindString(me.Resource))
	assert.Equal(t, "spec.N", me.Path)
}
