package inmem

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestKindHeadIsTheLastBookmarkOfACaughtUpWatch checks the contract of
// state.KindHeadReporter on inmem: a whole-kind watch that received every
// change holds, on its last event, the bookmark KindHead returns.
func TestKindHeadIsTheLastBookmarkOfACaughtUpWatch(t *testing.T) {
	st, ctx := newTestState(t)
	h, ok := st.(state.KindHeadReporter)
	require.True(t, ok, "the wrapped inmem state reports kind heads")

	ch := make(chan []state.Event, 16)
	require.NoError(t, st.WatchKindAggregated(ctx, testKind, ch, state.WithBootstrapContents(true)))
	last := func() state.Bookmark {
		batch := <-ch
		return batch[len(batch)-1].Bookmark
	}
	head, err := h.KindHead(ctx, testKind)
	require.NoError(t, err)
	assert.Equal(t, head, last(), "before any change: the Bootstrapped event's bookmark")

	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	next, err := h.KindHead(ctx, testKind)
	require.NoError(t, err)
	assert.NotEqual(t, head, next, "a change moves the head")
	assert.Equal(t, next, last())

	require.NoError(t, st.Destroy(ctx, ptr("a")))
	head, err = h.KindHead(ctx, testKind)
	require.NoError(t, err)
	assert.Equal(t, head, last())

	other, err := h.KindHead(ctx, resource.NewKind(testNS, "Others.test.resgraph.dev"))
	require.NoError(t, err)
	assert.NotEqual(t, head, other, "kinds have heads of their own")

	_, err = h.KindHead(ctx, resource.NewKind("", testType))
	assert.True(t, state.IsInvalidError(err))
}

// TestKindHeadUnsupportedByAForeignCore checks that WrapCore over a core
// without kind heads says so with errors.ErrUnsupported.
func TestKindHeadUnsupportedByAForeignCore(t *testing.T) {
	type plainCore struct{ state.CoreState }
	st := state.WrapCore(plainCore{newCore()})
	_, err := st.(state.KindHeadReporter).KindHead(t.Context(), testKind)
	assert.True(t, errors.Is(err, errors.ErrUnsupported), "%v", err)
}
