package safe_test

import (
	"cmp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

// byNDesc orders nums by N, largest first.
func byNDesc(a, b *num) int { return cmp.Compare(b.TypedSpec().N, a.TypedSpec().N) }

// TestListSorted: the sorted lists of a state and of a controller.Reader
// are in cmp's order, stable (ties keep the ID order), and the list they
// were sorted from is unchanged; a nil cmp keeps the order; errors are
// those of the list.
func TestListSorted(t *testing.T) {
	ctx, st := setup(t)
	require.NoError(t, st.Create(ctx, newNum("c", 2)))

	l, err := safe.StateListSorted(ctx, st, numKind, byNDesc)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 1}, values(l))
	assert.Equal(t, "b", l.Get(0).Metadata().ID(), "stable: ties keep the ID order")
	assert.Equal(t, "c", l.Get(1).Metadata().ID())

	var rdr controller.Reader = st
	l, err = safe.ReaderListSorted(ctx, rdr, numKind, byNDesc, state.WithReadOnlyList())
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 1}, values(l))

	byID, err := safe.StateListAll[*num](ctx, st)
	require.NoError(t, err)
	sorted := byID.SortFunc(byNDesc)
	assert.Equal(t, []int{1, 2, 2}, values(byID), "the list sorted from is unchanged")
	assert.Equal(t, []int{2, 2, 1}, values(sorted))
	assert.Equal(t, []int{1, 2, 2}, values(byID.SortFunc(nil)))

	_, err = safe.StateListSorted(ctx, st, strKind, byNDesc)
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
	_, err = safe.ReaderListSorted(ctx, nil, numKind, byNDesc)
	assert.True(t, state.IsInvalidError(err), "%v", err)
}

// TestListHelpers: Filter, Find, Index and Slice.
func TestListHelpers(t *testing.T) {
	ctx, st := setup(t)
	l, err := safe.StateListAll[*num](ctx, st)
	require.NoError(t, err)
	big := func(r *num) bool { return r.TypedSpec().N > 1 }

	assert.Equal(t, []int{2}, values(l.Filter(big)))
	assert.Equal(t, 0, l.Filter(func(*num) bool { return false }).Len())
	r, ok := l.Find(big)
	require.True(t, ok)
	assert.Equal(t, "b", r.Metadata().ID())
	_, ok = l.Find(func(*num) bool { return false })
	assert.False(t, ok)
	assert.Equal(t, 1, l.Index(big))
	assert.Equal(t, -1, l.Index(func(*num) bool { return false }))

	s := l.Slice()
	s[0] = nil
	assert.NotNil(t, l.Get(0), "Slice is a copy")
	var zero safe.List[*num]
	assert.Empty(t, zero.Slice())
}
