package inmem

import (
	"context"
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

// TestS11_AWatchFromABookmarkGetsTheChangesNoWatcherSaw: a kind whose
// writes no kind watcher watched (its head is then not published to
// watchers, see kindStore.head) still reports its newest change as its
// head, and a kind watch started from an older bookmark gets every change
// since, without waiting for another write; so does the next one, started
// after the first stopped and more unwatched writes.
func TestS11_AWatchFromABookmarkGetsTheChangesNoWatcherSaw(t *testing.T) {
	st, ctx := newTestState(t)
	h := st.(state.KindHeadReporter)
	require.NoError(t, st.Create(ctx, newPair("a", 0)))
	from, err := h.KindHead(ctx, testKind)
	require.NoError(t, err)

	for round := range 2 {
		for i := 1; i <= 3; i++ {
			mustUpdate(t, ctx, st, "a", 10*round+i)
		}
		head, err := h.KindHead(ctx, testKind)
		require.NoError(t, err)
		require.NotEqual(t, from, head, "round %d: unwatched writes move the head", round)

		wctx, stop := context.WithCancel(ctx)
		ch := make(chan state.Event, 8)
		require.NoError(t, st.WatchKind(wctx, testKind, ch, state.WithKindStartFromBookmark(from)))
		var ev state.Event
		for i := 1; i <= 3; i++ {
			ev = recv(t, ch)
			require.Equal(t, state.Updated, ev.Type, "round %d", round)
			assert.Equal(t, 10*round+i, specA(t, ev.Resource), "round %d: change %d", round, i)
		}
		assert.Equal(t, head, ev.Bookmark, "round %d: the last change is the head", round)
		stop()
		from = head
	}
}
