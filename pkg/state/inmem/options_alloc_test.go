package inmem

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/state"
)

// TestWriteOptionsAllocateNothing: a Create, Update or Destroy with
// options allocates what the same call without options allocates — the
// options are applied to a pooled value, not to a fresh one per call (an
// option receives a pointer, which makes the value escape).
func TestWriteOptionsAllocateNothing(t *testing.T) {
	st, ctx := newTestState(t, withoutMutationDetector(), WithHistoryCapacity(1))
	require.NoError(t, st.Create(ctx, newPair("owned", 1), state.WithCreateOwner("o")))
	require.NoError(t, st.Create(ctx, newPair("free", 1)))
	// Made once: a variadic call's slice is the caller's allocation.
	createOpts := []state.CreateOption{state.WithCreateOwner("o")}
	updateOpts := []state.UpdateOption{state.WithUpdateOwner("o")}
	destroyOpts := []state.DestroyOption{state.WithDestroyOwner("o")}
	made := ptr("made")

	update := func(p *pair, opts ...state.UpdateOption) {
		r, err := st.Get(ctx, p.Metadata())
		require.NoError(t, err)
		require.NoError(t, st.Update(ctx, r, opts...))
	}
	ownedPair, freePair := newPair("owned", 1), newPair("free", 1)
	withOpts := testing.AllocsPerRun(100, func() { update(ownedPair, updateOpts...) })
	without := testing.AllocsPerRun(100, func() { update(freePair) })
	assert.Equal(t, without, withOpts, "Update: allocations with options, without")

	madePair := newPair("made", 1)
	withOpts = testing.AllocsPerRun(100, func() {
		require.NoError(t, st.Create(ctx, madePair, createOpts...))
		require.NoError(t, st.Destroy(ctx, made, destroyOpts...))
	})
	without = testing.AllocsPerRun(100, func() {
		require.NoError(t, st.Create(ctx, madePair))
		require.NoError(t, st.Destroy(ctx, made))
	})
	assert.Equal(t, without, withOpts, "Create and Destroy: allocations with options, without")
}
