package qtransform_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestQ1Extended_TheControllersOwnFinalizerWriteIsReconciledAlready: once
// an input is processed, the input as stored — with the finalizer the
// controller added to it, one version on from what its Reconcile read —
// is one the controller reports as reconciled (processed.Source), so that
// the Runtime does not queue that change again (rule Q1, extended); so is
// the input changed by someone else, once processed again.
func TestQ1Extended_TheControllersOwnFinalizerWriteIsReconciledAlready(t *testing.T) {
	st := newState()
	c := aToB("AtoB")
	processed := c.ProcessedInputs()
	env := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(c))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	runtimetest.Settle(t, env.Runtime)

	stored := func() *A {
		res, err := st.Get(context.Background(), ptrA("a1"), state.WithReadOnlyGet())
		require.NoError(t, err)
		return res.(*A)
	}
	a := stored()
	require.True(t, a.Metadata().Finalizers().Has("AtoB"))
	assert.True(t, processed(a.Metadata()), "the input with the controller's finalizer is reconciled already")

	fixture.SetN[*A](t, st, ptrA("a1"), 5)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](10)))
	runtimetest.Settle(t, env.Runtime)
	assert.True(t, processed(stored().Metadata()), "reconciled again")
}
