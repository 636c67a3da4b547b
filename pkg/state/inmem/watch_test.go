package inmem

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestS8_WatchSendsCurrentStateFirst(t *testing.T) {
	t.Run("existing", func(t *testing.T) {
		st, ctx := newTestState(t)
		require.NoError(t, st.Create(ctx, newPair("a", 1)))
		ch := make(chan state.Event, 8)
		require.NoError(t, st.Watch(ctx, ptr("a"), ch))
		ev := recv(t, ch)
		assert.Equal(t, state.Created, ev.Type)
		assert.Equal(t, 1, specA(t, ev.Resource))
		assert.NotEmpty(t, ev.Bookmark, "the current-state event carries a bookmark")

		mustUpdate(t, ctx, st, "a", 2)
		require.NoError(t, st.Destroy(ctx, ptr("a")))
		up := recv(t, ch)
		assert.Equal(t, state.Updated, up.Type)
		assert.Equal(t, 2, specA(t, up.Resource))
		assert.Equal(t, 1, specA(t, up.Old))
		gone := recv(t, ch)
		assert.Equal(t, state.Destroyed, gone.Type)
		assert.Equal(t, 2, specA(t, gone.Resource), "Destroyed carries the last state")
	})
	t.Run("absent", func(t *testing.T) {
		st, ctx := newTestState(t)
		require.NoError(t, st.Create(ctx, newPair("other", 1)))
		ch := make(chan state.Event, 8)
		require.NoError(t, st.Watch(ctx, ptr("a"), ch))
		ev := recv(t, ch)
		assert.Equal(t, state.Destroyed, ev.Type)
		assert.Equal(t, "a", ev.Resource.Metadata().ID())
		assert.Nil(t, ev.Resource.Spec(), "only the pointer")
		assert.Nil(t, ev.Old)
		assert.NotEmpty(t, ev.Bookmark)

		// Changes of other resources are not delivered.
		mustUpdate(t, ctx, st, "other", 2)
		require.NoError(t, st.Create(ctx, newPair("a", 7)))
		ev = recv(t, ch)
		assert.Equal(t, state.Created, ev.Type)
		assert.Equal(t, 7, specA(t, ev.Resource))
	})
}

func TestS8_BookmarkOfCurrentStateResumesAfterIt(t *testing.T) {
	st, ctx := newTestState(t)
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	ch := make(chan state.Event, 8)
	wctx, cancel := context.WithCancel(ctx)
	require.NoError(t, st.Watch(wctx, ptr("a"), ch))
	first := recv(t, ch)
	cancel()
	mustUpdate(t, ctx, st, "a", 2)

	ch2 := make(chan state.Event, 8)
	require.NoError(t, st.Watch(ctx, ptr("a"), ch2, state.WithStartFromBookmark(first.Bookmark)))
	ev := recv(t, ch2)
	assert.Equal(t, state.Updated, ev.Type)
	assert.Equal(t, 2, specA(t, ev.Resource))
}

func TestS9_BootstrapThenChanges(t *testing.T) {
	st, ctx := newTestState(t)
	for _, id := range []string{"c", "a", "b"} {
		require.NoError(t, st.Create(ctx, newPair(id, 0)))
	}
	ch := make(chan state.Event, 16)
	require.NoError(t, st.WatchKind(ctx, testKind, ch, state.WithBootstrapContents(true)))
	var got []string
	for range 3 {
		ev := recv(t, ch)
		require.Equal(t, state.Created, ev.Type)
		got = append(got, ev.Resource.Metadata().ID())
	}
	assert.Equal(t, []string{"a", "b", "c"}, got, "bootstrap contents sorted by ID")
	boot := recv(t, ch)
	require.Equal(t, state.Bootstrapped, boot.Type)
	assert.NotEmpty(t, boot.Bookmark)

	mustUpdate(t, ctx, st, "b", 1)
	ev := recv(t, ch)
	assert.Equal(t, state.Updated, ev.Type)
	assert.Equal(t, "b", ev.Resource.Metadata().ID())

	// The Bootstrapped bookmark resumes right after the snapshot.
	ch2 := make(chan state.Event, 16)
	require.NoError(t, st.WatchKind(ctx, testKind, ch2, state.WithKindStartFromBookmark(boot.Bookmark)))
	ev2 := recv(t, ch2)
	assert.Equal(t, ev.Bookmark, ev2.Bookmark)
	assert.Equal(t, state.Updated, ev2.Type)
}

// TestS9_NoLossOrDuplicateAroundSnapshot starts bootstrap watches while a
// writer runs: each watcher must see every version after its snapshot
// exactly once.
func TestS9_NoLossOrDuplicateAroundSnapshot(t *testing.T) {
	st, ctx := newTestState(t)
	const n, updates = 20, 60
	for i := range n {
		require.NoError(t, st.Create(ctx, newPair(fmt.Sprintf("r%02d", i), 0)))
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for u := 1; u <= updates; u++ {
			for i := range n {
				r, err := st.Get(ctx, ptr(fmt.Sprintf("r%02d", i)))
				if !assert.NoError(t, err) {
					return
				}
				r.(*pair).TypedSpec().A = u
				if !assert.NoError(t, st.Update(ctx, r)) {
					return
				}
			}
		}
	})
	for range 5 {
		ch := make(chan state.Event, n*updates+n+1)
		wctx, cancel := context.WithCancel(ctx)
		require.NoError(t, st.WatchKind(wctx, testKind, ch, state.WithBootstrapContents(true)))
		seen := map[string]uint64{}
		booted := false
		for !booted || !allAt(seen, n, updates+1) {
			ev := recv(t, ch)
			switch ev.Type {
			case state.Created:
				require.False(t, booted)
				seen[ev.Resource.Metadata().ID()] = version(ev.Resource)
			case state.Bootstrapped:
				booted = true
			case state.Updated:
				require.True(t, booted)
				id := ev.Resource.Metadata().ID()
				// A watcher that falls behind (on a loaded machine its
				// goroutine may not run for a while) may receive a
				// coalesced update (S12): Old is still what it saw last,
				// and versions only grow.
				require.Equal(t, seen[id], version(ev.Old), "no loss, no duplicate for %s", id)
				require.Greater(t, version(ev.Resource), seen[id])
				seen[id] = version(ev.Resource)
			default:
				require.FailNow(t, "unexpected event", ev.Type)
			}
		}
		cancel()
	}
	wg.Wait()
}

func allAt(seen map[string]uint64, n int, v uint64) bool {
	if len(seen) < n {
		return false
	}
	for _, got := range seen {
		if got != v {
			return false
		}
	}
	return true
}

func TestS10_LabelQueryTransitions(t *testing.T) {
	st, ctx := newTestState(t)
	ch := make(chan state.Event, 16)
	require.NoError(t, st.WatchKind(ctx, testKind, ch, state.WatchWithLabelQuery(resource.LabelEqual("app", "x"))))

	r := newPair("a", 0)
	require.NoError(t, st.Create(ctx, r)) // not matching: nothing
	r.Metadata().Labels().Set("app", "x")
	require.NoError(t, st.Update(ctx, r)) // starts matching: Created
	ev := recv(t, ch)
	assert.Equal(t, state.Created, ev.Type)
	assert.Equal(t, uint64(2), version(ev.Resource))

	r.TypedSpec().A = 1
	require.NoError(t, st.Update(ctx, r)) // still matching: Updated
	ev = recv(t, ch)
	assert.Equal(t, state.Updated, ev.Type)
	assert.Equal(t, uint64(2), version(ev.Old))

	r.Metadata().Labels().Set("app", "y")
	require.NoError(t, st.Update(ctx, r)) // stops matching: Destroyed with the state it saw
	ev = recv(t, ch)
	assert.Equal(t, state.Destroyed, ev.Type)
	assert.Equal(t, uint64(3), version(ev.Resource))

	require.NoError(t, st.Destroy(ctx, ptr("a"))) // gone while not matching: nothing
	require.NoError(t, st.Create(ctx, labeled("b", "app", "x")))
	ev = recv(t, ch)
	assert.Equal(t, state.Created, ev.Type)
	assert.Equal(t, "b", ev.Resource.Metadata().ID(), "nothing about a in between")
}

func TestS10_IDQuery(t *testing.T) {
	st, ctx := newTestState(t)
	ch := make(chan state.Event, 16)
	require.NoError(t, st.WatchKind(ctx, testKind, ch, state.WithBootstrapContents(true),
		state.WatchWithIDQuery(resource.IDRegexpMatch(regexp.MustCompile(`^keep`)))))
	require.Equal(t, state.Bootstrapped, recv(t, ch).Type)
	require.NoError(t, st.Create(ctx, newPair("drop-1", 0)))
	require.NoError(t, st.Create(ctx, newPair("keep-1", 0)))
	ev := recv(t, ch)
	assert.Equal(t, "keep-1", ev.Resource.Metadata().ID())
}

func labeled(id, k, v string) *pair {
	r := newPair(id, 0)
	r.Metadata().Labels().Set(k, v)
	return r
}

func TestS11_TailEvents(t *testing.T) {
	st, ctx := newTestState(t)
	require.NoError(t, st.Create(ctx, newPair("a", 0)))
	require.NoError(t, st.Create(ctx, newPair("b", 0)))
	for i := 1; i <= 5; i++ {
		mustUpdate(t, ctx, st, "a", i)
		mustUpdate(t, ctx, st, "b", i)
	}

	t.Run("single resource", func(t *testing.T) {
		ch := make(chan state.Event, 16)
		require.NoError(t, st.Watch(ctx, ptr("a"), ch, state.WithTailEvents(3)))
		for _, want := range []int{3, 4, 5} {
			ev := recv(t, ch)
			assert.Equal(t, state.Updated, ev.Type)
			assert.Equal(t, "a", ev.Resource.Metadata().ID())
			assert.Equal(t, want, specA(t, ev.Resource))
		}
		assert.Empty(t, ch, "no current-state event with tail events")
	})
	t.Run("kind", func(t *testing.T) {
		ch := make(chan state.Event, 16)
		require.NoError(t, st.WatchKind(ctx, testKind, ch, state.WithKindTailEvents(3)))
		var got []string
		for range 3 {
			ev := recv(t, ch)
			got = append(got, fmt.Sprintf("%s%d", ev.Resource.Metadata().ID(), specA(t, ev.Resource)))
		}
		assert.Equal(t, []string{"b4", "a5", "b5"}, got)
	})
	t.Run("more than kept", func(t *testing.T) {
		ch := make(chan state.Event, 64)
		require.NoError(t, st.WatchKind(ctx, testKind, ch, state.WithKindTailEvents(1000)))
		first := recv(t, ch)
		assert.Equal(t, state.Created, first.Type, "the whole history from the first create")
		assert.Equal(t, "a", first.Resource.Metadata().ID())
	})
}

func TestS11_BookmarksResumeExactly(t *testing.T) {
	st, ctx := newTestState(t)
	ch := make(chan state.Event, 64)
	require.NoError(t, st.WatchKind(ctx, testKind, ch))
	for i := range 10 {
		require.NoError(t, st.Create(ctx, newPair(fmt.Sprintf("r%d", i), i)))
	}
	var all []state.Event
	for range 10 {
		all = append(all, recv(t, ch))
	}
	for i, ev := range all {
		for j := range i {
			require.NotEqual(t, all[j].Bookmark, ev.Bookmark)
		}
		resumed := make(chan state.Event, 64)
		wctx, cancel := context.WithCancel(ctx)
		require.NoError(t, st.WatchKind(wctx, testKind, resumed, state.WithKindStartFromBookmark(ev.Bookmark)))
		for _, want := range all[i+1:] {
			got := recv(t, resumed)
			assert.Equal(t, want.Bookmark, got.Bookmark)
			assert.Equal(t, want.Resource.Metadata().ID(), got.Resource.Metadata().ID())
		}
		cancel()
	}
}

func TestS11_BookmarkOlderThanHistoryIsOverrun(t *testing.T) {
	st, ctx := newTestState(t, WithHistoryCapacity(4))
	ch := make(chan state.Event, 64)
	require.NoError(t, st.Watch(ctx, ptr("a"), ch))
	start := recv(t, ch).Bookmark // seq 0
	require.NoError(t, st.Create(ctx, newPair("a", 0)))
	for i := 1; i <= 3; i++ {
		mustUpdate(t, ctx, st, "a", i)
	}
	// Four changes: the history still holds all of them.
	ok := make(chan state.Event, 64)
	require.NoError(t, st.Watch(ctx, ptr("a"), ok, state.WithStartFromBookmark(start)))
	assert.Equal(t, state.Created, recv(t, ok).Type)

	mustUpdate(t, ctx, st, "a", 4)
	err := st.Watch(ctx, ptr("a"), make(chan state.Event), state.WithStartFromBookmark(start))
	assert.True(t, state.IsBufferOverrunError(err), "watch: %v", err)
	err = st.WatchKind(ctx, testKind, make(chan state.Event), state.WithKindStartFromBookmark(start))
	assert.True(t, state.IsBufferOverrunError(err), "watch kind: %v", err)
}

func TestWatchKindAggregated(t *testing.T) {
	st, ctx := newTestState(t)
	require.NoError(t, st.Create(ctx, newPair("a", 0)))
	require.NoError(t, st.Create(ctx, newPair("b", 0)))
	ch := make(chan []state.Event, 8)
	require.NoError(t, st.WatchKindAggregated(ctx, testKind, ch, state.WithBootstrapContents(true)))
	batch := recvBatch(t, ch)
	require.Len(t, batch, 3, "bootstrap contents and Bootstrapped in one batch")
	assert.Equal(t, state.Created, batch[0].Type)
	assert.Equal(t, state.Created, batch[1].Type)
	assert.Equal(t, state.Bootstrapped, batch[2].Type)

	mustUpdate(t, ctx, st, "a", 1)
	var got []state.Event
	for len(got) == 0 || got[len(got)-1].Type != state.Updated {
		got = append(got, recvBatch(t, ch)...)
	}
	assert.Equal(t, "a", got[0].Resource.Metadata().ID())
}

func recvBatch(t *testing.T, ch <-chan []state.Event) []state.Event {
	t.Helper()
	select {
	case b := <-ch:
		return b
	case <-t.Context().Done():
		require.FailNow(t, "test over")
	case <-timeAfter():
		require.FailNow(t, "no batch")
	}
	return nil
}

func TestS13_WatchesEndOnCancel(t *testing.T) {
	st, ctx := newTestState(t)
	require.NoError(t, st.Create(ctx, newPair("a", 0)))
	wctx, cancel := context.WithCancel(ctx)
	// Unread, unbuffered channels: the goroutines are blocked sending
	// when the context is canceled.
	require.NoError(t, st.Watch(wctx, ptr("a"), make(chan state.Event)))
	require.NoError(t, st.WatchKind(wctx, testKind, make(chan state.Event), state.WithBootstrapContents(true)))
	require.NoError(t, st.WatchKindAggregated(wctx, testKind, make(chan []state.Event)))
	// Parked ones too.
	parked := make(chan state.Event, 1)
	require.NoError(t, st.WatchKind(wctx, testKind, parked))
	mustUpdate(t, ctx, st, "a", 1)
	cancel()
	// TestMain's goleak check fails the package if any goroutine is left;
	// a canceled context also refuses new watches.
	err := st.WatchKind(wctx, testKind, parked)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestWatchersUnregisterOnCancel(t *testing.T) {
	c := newCore()
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, c.Create(context.Background(), newPair("a", 0)))
	require.NoError(t, c.Watch(ctx, ptr("a"), make(chan state.Event)))
	require.NoError(t, c.WatchKind(ctx, testKind, make(chan state.Event, 1)))
	cancel()
	ks := c.lookup(resource.KindOf(resource.NewKind(testNS, testType)))
	require.Eventually(t, func() bool {
		ks.mu.Lock()
		defer ks.mu.Unlock()
		return len(ks.kindWatchers) == 0 && len(ks.idWatchers) == 0
	}, testTimeout, pollInterval)
}

func TestWithHistoryCapacityIsClamped(t *testing.T) {
	for _, tc := range []struct{ in, want int }{
		{-5, 1}, {0, 1}, {1, 1}, {100, 100}, {MaxHistoryCapacity + 1, MaxHistoryCapacity}, {math.MaxInt, MaxHistoryCapacity},
	} {
		c := newCore(WithHistoryCapacity(tc.in))
		assert.Equal(t, tc.want, c.historyCap, "WithHistoryCapacity(%d)", tc.in)
		require.NoError(t, c.Create(context.Background(), newPair("a", 0)), "a kind is usable")
	}
	assert.Equal(t, DefaultHistoryCapacity, newCore().historyCap)
}
