package adapter_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// byParity indexes a Pair under "even" or "odd" by its spec A.
func byParity(r resource.Resource) []string {
	if r.(*Pair).TypedSpec().A%2 == 0 {
		return []string{"even"}
	}
	return []string{"odd"}
}

// TestListByIndex_FromTheStateUntilTheCacheIsReady: before the kind's watch
// bootstrapped the cache, a List by index is the state's List filtered by
// the index function; afterwards it is the cache's index: the same answer
// either way. Access and unknown indexes are refused like List.
func TestListByIndex_FromTheStateUntilTheCacheIsReady(t *testing.T) {
	ctx := t.Context()
	st := inmem.NewState()
	for i, id := range []string{"c", "a", "b", "d"} {
		mustCreate(t, st, newPair(typeA, id, i))
	}
	caches := cache.NewSet([]resource.Kind{kind(typeA)})
	c := caches.Get(resource.KindOf(kind(typeA)))
	c.AddIndex("parity", byParity, nil)
	a := adapter.New(st, caches, "ctl", adapter.NewAccess([]controller.Input{in(typeA, controller.InputWeak)}, nil, nil), nil, true)
	ids := func() []string {
		t.Helper()
		l, err := a.ListByIndex(ctx, kind(typeA), "parity", "even")
		require.NoError(t, err)
		var got []string
		for _, r := range l.Items {
			got = append(got, r.Metadata().ID())
		}
		return got
	}

	require.False(t, c.Ready())
	assert.Equal(t, []string{"b", "c"}, ids(), "from the state, filtered by the index function")

	l, err := st.List(ctx, kind(typeA), state.WithReadOnlyList())
	require.NoError(t, err)
	for _, r := range l.Items {
		c.Apply(&state.Event{Type: state.Created, Resource: r}, r.Metadata())
	}
	// Change the state behind the cache's back: the index answers now.
	require.NoError(t, st.Destroy(ctx, ptr(typeA, "b")))
	c.MarkReady()
	assert.Equal(t, []string{"b", "c"}, ids(), "from the cache's index")

	_, err = a.ListByIndex(ctx, kind(typeA), "nope", "even")
	assert.True(t, state.IsInvalidError(err), "%v", err)
	_, err = a.ListByIndex(ctx, kind(typeX), "parity", "even")
	assert.True(t, controller.IsAccessDeniedError(err), "%v", err)
	_, err = a.ListByIndex(ctx, nil, "parity", "even")
	assert.True(t, state.IsInvalidError(err), "%v", err)
}
