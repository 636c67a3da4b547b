package inmem

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/internal/batchpool"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestBatchPool_ABoundWatchBuildsItsBatchesFromWhatWasHandedBack: a
// WatchKindAggregated whose context binds a pool to its channel builds
// its next batch in the memory of a batch the receiver handed back.
func TestBatchPool_ABoundWatchBuildsItsBatchesFromWhatWasHandedBack(t *testing.T) {
	st, ctx := newTestState(t)
	ch := make(chan []state.Event, 1)
	pool := batchpool.New(2)
	require.NoError(t, st.WatchKindAggregated(batchpool.Bind(ctx, ch, pool), testKind, ch))

	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	b := recvBatch(t, ch)
	require.Len(t, b, 1)
	first := &b[0]
	pool.Put(b) // given up: b is not used after this

	require.NoError(t, st.Create(ctx, newPair("b", 2)))
	b = recvBatch(t, ch)
	require.Len(t, b, 1)
	assert.Same(t, first, &b[0], "the batch handed back is reused")
	assert.Equal(t, "b", b[0].Resource.Metadata().ID())
	assert.Nil(t, b[0].Old)
}

// TestBatchPool_AWatchOfAnotherChannelOwnsItsBatches: a pool bound to
// another channel than the watch's (a state wrapping this one, passing
// the batches on through a channel of its own) is not used: the receiver
// owns every batch, as WatchKindAggregated's contract says.
func TestBatchPool_AWatchOfAnotherChannelOwnsItsBatches(t *testing.T) {
	st, ctx := newTestState(t)
	ch, other := make(chan []state.Event, 1), make(chan []state.Event, 1)
	pool := batchpool.New(2)
	kept := make([]state.Event, 1, 8)
	pool.Put(kept)
	require.NoError(t, st.WatchKindAggregated(batchpool.Bind(ctx, other, pool), testKind, ch))

	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	b := recvBatch(t, ch)
	require.Len(t, b, 1)
	assert.NotSame(t, &kept[:1][0], &b[0], "a batch of the pool")
	got := pool.Get()
	require.NotNil(t, got, "the watch took the pool's batch")
	assert.Same(t, &kept[:1][0], &got[:1][0])
}

// TestBatchPool_ABatchHasOneConsumerAtATime: two aggregated watches of a
// kind share one pool while a writer changes the kind; each consumer
// marks every event of a batch it received, checks that the marks stay
// until it hands the batch back (nobody else wrote into it) and that its
// stream's revisions only grow, and sees every resource's last value.
// Under -race, a batch seen by two consumers (or built by the state while
// a consumer reads it) is also a reported race.
func TestBatchPool_ABatchHasOneConsumerAtATime(t *testing.T) {
	const resources, updates = 8, 150
	st, ctx := newTestState(t)
	pool := batchpool.New(2)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		ch := make(chan []state.Event, 4)
		require.NoError(t, st.WatchKindAggregated(batchpool.Bind(ctx, ch, pool), testKind, ch))
		wg.Add(1)
		go func() { // owned by the test: ends when it saw every last value, or with ctx
			defer wg.Done()
			errs <- consumeMarked(ctx, ch, pool, resources, updates)
		}()
	}
	for i := range resources {
		require.NoError(t, st.Create(ctx, newPair(fmt.Sprint(i), 0)))
	}
	for u := 1; u <= updates; u++ {
		for i := range resources {
			mustUpdate(t, ctx, st, fmt.Sprint(i), u)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

// marked is the event type a consumer writes into the events it owns.
const marked state.EventType = 250

// consumeMarked reads ch until every resource reached value last, handing
// each batch back to pool once it checked it; an error for a batch
// written while it held it, or a revision going back.
func consumeMarked(ctx context.Context, ch <-chan []state.Event, pool *batchpool.Pool, resources, last int) error {
	done := map[string]bool{}
	var rev uint64
	for len(done) < resources {
		var b []state.Event
		select {
		case b = <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		for i := range b {
			if b[i].Type == marked || b[i].Revision <= rev {
				return fmt.Errorf("event %d of a batch of %d: type %d, revision %d after %d", i, len(b), b[i].Type, b[i].Revision, rev)
			}
			rev = b[i].Revision
			if p := b[i].Resource.(*pair); p.TypedSpec().A == last {
				done[p.Metadata().ID()] = true
			}
			b[i].Type = marked
		}
		for i := range b {
			if b[i].Type != marked {
				return fmt.Errorf("event %d of a held batch was overwritten", i)
			}
		}
		pool.Put(b)
	}
	return nil
}

// TestBatchPool_ABoundWatchBookmarksTheLastEventOfABatch: a watch bound
// to a pool carries a bookmark on the last event of each batch only, and
// it is the bookmark an unbound watch's event of that change carries
// (the kind's head once the batch holds the newest change).
func TestBatchPool_ABoundWatchBookmarksTheLastEventOfABatch(t *testing.T) {
	st, ctx := newTestState(t)
	ch := make(chan []state.Event) // unbuffered: changes gather while nobody receives
	require.NoError(t, st.WatchKindAggregated(batchpool.Bind(ctx, ch, batchpool.New(1)), testKind, ch))
	for i := range 5 {
		require.NoError(t, st.Create(ctx, newPair(fmt.Sprint(i), i)))
	}
	longest := 0
	var last state.Bookmark
	for seen := 0; seen < 5; {
		b := recvBatch(t, ch)
		for i, ev := range b {
			if i < len(b)-1 {
				assert.Nil(t, ev.Bookmark, "event %d of a batch of %d", i, len(b))
			}
		}
		require.NotNil(t, b[len(b)-1].Bookmark)
		last = b[len(b)-1].Bookmark
		seen += len(b)
		longest = max(longest, len(b))
	}
	require.Greater(t, longest, 1, "a batch of several changes")
	head, err := st.(state.KindHeadReporter).KindHead(ctx, testKind)
	require.NoError(t, err)
	assert.Equal(t, head, last)
}
