package safe_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestGetByID: ReaderGetByID and StateGetByID read T's type in T's
// default namespace by ID alone, with Get's errors and options.
func TestGetByID(t *testing.T) {
	ctx, st := setup(t)

	n, err := safe.StateGetByID[*num](ctx, st, "a")
	require.NoError(t, err)
	assert.Equal(t, 1, n.TypedSpec().N)
	n, err = safe.ReaderGetByID[*num](ctx, st, "b", state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.Equal(t, 2, n.TypedSpec().N)
	snap, err := st.Get(ctx, numPtr("b"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.Same(t, snap, n, "options reach Get")

	_, err = safe.StateGetByID[*num](ctx, st, "missing")
	assert.True(t, state.IsNotFoundError(err), "%v", err)
	_, err = safe.ReaderGetByID[*num](ctx, st, "")
	assert.True(t, state.IsInvalidError(err), "an empty ID: %v", err)
	_, err = safe.ReaderGetByID[*num](ctx, nil, "a")
	assert.True(t, state.IsInvalidError(err), "a nil reader: %v", err)
	assert.ErrorContains(t, err, "safe.ReaderGetByID")
	_, err = safe.StateGetByID[*num](ctx, nil, "a")
	assert.ErrorContains(t, err, "safe.StateGetByID")
}

// TestListPortHelpers: ForEach, ForEachErr (stops at the first error),
// Pointers, IDs and FilterLabelQuery (every term of the query holds; a
// query that cannot be evaluated selects nothing).
func TestListPortHelpers(t *testing.T) {
	ctx, st := setup(t)
	require.NoError(t, st.Create(ctx, labelled(newNum("c", 3), "tier", "web", "n", "3")))
	require.NoError(t, st.Create(ctx, labelled(newNum("d", 4), "tier", "web", "n", "10")))
	l, err := safe.StateListAll[*num](ctx, st)
	require.NoError(t, err)

	var sum int
	l.ForEach(func(r *num) { sum += r.TypedSpec().N })
	assert.Equal(t, 10, sum)

	stop := errors.New("stop")
	var seen []string
	err = l.ForEachErr(func(r *num) error {
		seen = append(seen, r.Metadata().ID())
		if r.Metadata().ID() == "b" {
			return stop
		}
		return nil
	})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, []string{"a", "b"}, seen)
	assert.NoError(t, l.ForEachErr(func(*num) error { return nil }))

	assert.Equal(t, []resource.Pointer{numPtr("a"), numPtr("b"), numPtr("c"), numPtr("d")}, l.Pointers())
	assert.Equal(t, []resource.ID{"a", "b", "c", "d"}, l.IDs())

	web := l.FilterLabelQuery(resource.LabelEqual("tier", "web"))
	assert.Equal(t, []resource.ID{"c", "d"}, web.IDs())
	assert.Equal(t, []resource.ID{"d"}, l.FilterLabelQuery(resource.LabelEqual("tier", "web"), resource.LabelLTNumeric("n", "5", resource.NotMatches)).IDs())
	assert.Equal(t, 0, l.FilterLabelQuery(resource.LabelLTNumeric("n", "five")).Len())
	assert.Equal(t, 4, l.FilterLabelQuery().Len(), "the empty query selects everything")
	assert.Equal(t, 4, l.Len(), "the list itself is left as it is")

	var empty safe.List[*num]
	assert.Empty(t, empty.Pointers())
	assert.NoError(t, empty.ForEachErr(func(*num) error { return stop }))
}

func labelled(r *num, kv ...string) *num {
	for i := 0; i+1 < len(kv); i += 2 {
		r.Metadata().Labels().Set(kv[i], kv[i+1])
	}
	return r
}
