package state_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestCommitReporter_TellsTheVersionEachWriteCommitted: a State returned
// by WrapCore tells the version a teardown or a finalizer edit wrote
// (undefined when it had nothing to write) and the version a destroy
// destroyed (undefined over a core that cannot tell, as a fake core or a
// wrapped State), whatever version the pointer it is given carries.
func TestCommitReporter_TellsTheVersionEachWriteCommitted(t *testing.T) {
	for name, tc := range map[string]struct {
		st        state.State
		destroyed bool // the core tells the version a destroy destroyed
	}{
		"inmem":               {inmem.NewState(), true},
		"WrapCore over inmem": {state.WrapCore(inmem.NewState()), false},
		"WrapCore over fake":  {state.WrapCore(newFakeCore()), false},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			cr, ok := tc.st.(state.CommitReporter)
			require.True(t, ok)
			a := newNum("a", 1)
			require.NoError(t, tc.st.Create(ctx, a))
			stale := a.Metadata() // version 1, as the caller read it

			v, err := cr.AddFinalizerCommitted(ctx, stale, "f")
			require.NoError(t, err)
			assert.EqualValues(t, 2, v.Value())
			v, err = cr.AddFinalizerCommitted(ctx, stale, "f")
			require.NoError(t, err)
			assert.Zero(t, v.Value(), "the finalizer was there: nothing written")

			ready, v, err := cr.TeardownCommitted(ctx, stale)
			require.NoError(t, err)
			assert.False(t, ready)
			assert.EqualValues(t, 3, v.Value())
			_, v, err = cr.TeardownCommitted(ctx, stale)
			require.NoError(t, err)
			assert.Zero(t, v.Value(), "tearing down already: nothing written")

			v, err = cr.RemoveFinalizerCommitted(ctx, stale, "f")
			require.NoError(t, err)
			assert.EqualValues(t, 4, v.Value())
			v, err = cr.RemoveFinalizerCommitted(ctx, stale, "f")
			require.NoError(t, err)
			assert.Zero(t, v.Value(), "the finalizer was gone: nothing written")

			v, err = cr.DestroyCommitted(ctx, ptrOf("a"))
			require.NoError(t, err)
			if tc.destroyed {
				assert.EqualValues(t, 4, v.Value(), "the version destroyed")
			} else {
				assert.Zero(t, v.Value())
			}
			_, err = cr.DestroyCommitted(ctx, ptrOf("a"))
			assert.True(t, state.IsNotFoundError(err), "the same errors as Destroy: %v", err)
			_, err = cr.AddFinalizerCommitted(ctx, ptrOf("a"), "")
			assert.True(t, state.IsInvalidError(err), "the same checks as AddFinalizer: %v", err)
			_, _, err = cr.TeardownCommitted(ctx, nil)
			assert.True(t, state.IsInvalidError(err), "the same checks as Teardown: %v", err)
		})
	}
}
