package transform_test

import (
	"context"
	"errors"
	goruntime "runtime"
	"strings"
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
// caught by the mutation detector, which names the input, the field and
// the controller it was handed to, when the controller's pass ends, in the
// controller's goroutine (not in the test's, which writes the input
// next).
func TestS7_TransformInputsAreReadOnlySnapshots(t *testing.T) {
	reports := make(chan error, 16)
	goroutines := make(chan string, 16)
	st := inmem.NewState(inmem.WithMutationDetector(func(err error) {
		goroutines <- goroutine()
		reports <- err
	}))
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
	runtimetest.AssertResource(t, st, "a", runtimetest.Holds(fixture.RunningN[*B](1)))
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
	assert.Equal(t, []string{"Mutating"}, me.Holders)
	assert.NotEqual(t, goroutine(), <-goroutines, "raised in the controller's goroutine")
}

// goroutine returns the "goroutine N" header of the calling goroutine's
// stack.
func goroutine() string {
	buf := make([]byte, 64)
	head, _, _ := strings.Cut(string(buf[:goruntime.Stack(buf, false)]), " [")
	return head
}
