package inmem

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// newLabelledPair returns a pair with an owner-independent set of
// labels, annotations and finalizers (n of each).
func newLabelledPair(id string, n int) *pair {
	r := newPair(id, 1)
	md := r.Metadata()
	for i := range n {
		md.Labels().Set(fmt.Sprint("l", i), "v")
		md.Annotations().Set(fmt.Sprint("a", i), "v")
		md.Finalizers().Add(fmt.Sprint("f", i))
	}
	return r
}

// TestS7_ReadOnlyGetAllocatesNothing: a read-only Get, and reading every
// part of the metadata of what it returns, allocates nothing, whatever
// the resource carries.
func TestS7_ReadOnlyGetAllocatesNothing(t *testing.T) {
	st, ctx := newTestState(t, withoutMutationDetector())
	require.NoError(t, st.Create(ctx, newPair("bare", 1)))
	require.NoError(t, st.Create(ctx, newLabelledPair("full", 4), state.WithCreateOwner("ctrl")))
	ro := []state.GetOption{state.WithReadOnlyGet()} // a variadic call's slice is the caller's allocation
	for _, id := range []string{"bare", "full"} {
		p := ptr(id)
		allocs := testing.AllocsPerRun(100, func() {
			r, err := st.Get(ctx, p, ro...)
			if err != nil {
				t.Fatal(err)
			}
			md := r.Metadata()
			_, _ = md.Labels().Get("l0")
			_ = md.Annotations().Len() + len(*md.Finalizers()) + len(md.Owner())
		})
		assert.Zero(t, allocs, "%s: allocations per read-only Get", id)
	}
}

// TestS7_CopyingGetSharesTheRarelyUsedMetadata: a copying Get of a
// resource with labels, annotations and finalizers allocates what a Get
// of one without any does (the copy shares them with the snapshot until
// it changes them); a change of the copy, written back, leaves the
// snapshot read before it as it was (rule S7), and the mutation detector
// finds nothing to report.
func TestS7_CopyingGetSharesTheRarelyUsedMetadata(t *testing.T) {
	st, rep := detectorState(t)
	ctx := t.Context()
	require.NoError(t, st.Create(ctx, newPair("bare", 1)))
	require.NoError(t, st.Create(ctx, newLabelledPair("full", 8)))
	var allocs [2]float64
	for i, id := range []string{"bare", "full"} {
		allocs[i] = testing.AllocsPerRun(100, func() {
			if _, err := st.Get(ctx, ptr(id)); err != nil {
				t.Fatal(err)
			}
		})
	}
	assert.Equal(t, allocs[0], allocs[1], "a copy of 8 labels, annotations and finalizers costs what a bare copy does")

	snap := getRO(t, st, "full")
	want := snap.Metadata().Copy()
	c, err := st.Get(ctx, ptr("full"))
	require.NoError(t, err)
	c.Metadata().Labels().Set("l0", "changed")
	c.Metadata().Finalizers().Remove("f1")
	c.Metadata().Annotations().Delete("a2")
	require.NoError(t, st.Update(ctx, c))
	assert.True(t, snap.Metadata().Equal(want), "the snapshot read before is unchanged")
	v, _ := getRO(t, st, "full").Metadata().Labels().Get("l0")
	assert.Equal(t, "changed", v)
	mustUpdate(t, ctx, st, "full", 2) // the detector checks the version replaced
	assert.Empty(t, rep.take(t))
}

// TestS7_OwnedWriteCopiesNoMetadata: a Modify that changes the spec alone
// of an owned resource with labels, annotations and finalizers allocates
// what one of an owned resource without any does: writing it keeps the
// owner without copying the metadata's storage.
func TestS7_OwnedWriteCopiesNoMetadata(t *testing.T) {
	st, ctx := newTestState(t, withoutMutationDetector())
	owned := state.WithUpdateOwner("ctrl")
	var allocs [2]float64
	for i, r := range []*pair{newPair("bare", 1), newLabelledPair("full", 8)} {
		require.NoError(t, st.Create(ctx, r, state.WithCreateOwner("ctrl")))
		n := 0
		allocs[i] = testing.AllocsPerRun(50, func() {
			n++
			if err := st.Modify(ctx, r, func(c resource.Resource) error {
				c.(*pair).TypedSpec().A = n
				return nil
			}, owned); err != nil {
				t.Fatal(err)
			}
		})
	}
	assert.Equal(t, allocs[0], allocs[1], "allocations per Modify: bare, labelled")
}
