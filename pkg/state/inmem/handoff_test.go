package inmem

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// parkedIn reports whether w is parked in the kind's current parking
// group (its goroutine waits and no write has taken the group yet).
func parkedIn(ks *kindStore, w *kindWatcher) bool {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.parking != nil && w.group.Load() == ks.parking && slices.Contains(ks.parking.members, w)
}

// TestS9_ParkedWatcherIsHandedTheChange: a write hands its change to a
// parked kind watcher's channel itself — the event is there when the
// write returns, and the watcher stays parked — while the channel has
// room; once it is full, the watcher is woken and delivers the rest
// itself. Events stay in the order of the changes, each once (S9, S12).
func TestS9_ParkedWatcherIsHandedTheChange(t *testing.T) {
	c := newCore(withoutMutationDetector())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, id := range []string{"a", "b", "c"} {
		require.NoError(t, c.Create(ctx, newPair(id, 0)))
	}
	ch := make(chan state.Event, 2)
	require.NoError(t, c.WatchKind(ctx, testKind, ch))
	w := soleKindWatcher(t, c)
	ks := c.lookup(resource.KindOf(resource.NewKind(testNS, testType)))
	require.Eventually(t, func() bool { return parkedIn(ks, w) }, testTimeout, pollInterval)

	update := func(id string, a int) {
		t.Helper()
		r, err := c.Get(ctx, ptr(id))
		require.NoError(t, err)
		r.(*pair).TypedSpec().A = a
		ks.mu.Lock()
		ks.writeGap = int64(handOffGap) * 8 // writes far apart: hand over
		ks.mu.Unlock()
		require.NoError(t, c.Update(ctx, r))
	}
	update("a", 1)
	require.Len(t, ch, 1, "handed over by the write")
	require.True(t, parkedIn(ks, w), "the watcher's goroutine was not woken")
	update("b", 1)
	require.Len(t, ch, 2)
	require.True(t, parkedIn(ks, w))

	update("c", 1) // the channel is full: the watcher is woken
	require.Len(t, ch, 2)
	for i, id := range []string{"a", "b", "c"} {
		ev := recv(t, ch)
		require.Equal(t, state.Updated, ev.Type, "event %d", i)
		require.Equal(t, id, ev.Resource.Metadata().ID())
		require.Equal(t, 1, specA(t, ev.Resource))
		require.Equal(t, 0, specA(t, ev.Old))
		seq, err := ks.decodeBookmark(nil, ev.Bookmark)
		require.NoError(t, err)
		require.Equal(t, uint64(3+i+1), seq, "the bookmark of the change")
	}
	require.Eventually(t, func() bool { return parkedIn(ks, w) }, testTimeout, pollInterval, "parks again once caught up")
	require.NoError(t, c.Destroy(ctx, ptr("a")))
	ev := recv(t, ch)
	require.Equal(t, state.Destroyed, ev.Type)
	require.Same(t, ev.Resource, ev.Old)
	require.NoError(t, c.Create(ctx, newPair("a", 7)))
	ev = recv(t, ch)
	require.Equal(t, state.Created, ev.Type)
	require.Nil(t, ev.Old)
	require.Equal(t, 7, specA(t, ev.Resource))
	select {
	case ev := <-ch:
		require.Fail(t, "an event delivered twice", "%v", ev)
	default:
	}
}

// TestS9_HandOffOnlyWhereItCannotReorder: a write hands its change over
// only to parked watchers that read it next, have no queries, are not
// aggregated and have room in their channel, and only while the kind's
// writes are far apart; the others are left to be woken, positions
// untouched.
func TestS9_HandOffOnlyWhereItCannotReorder(t *testing.T) {
	c := newCore(withoutMutationDetector())
	ks := c.store(resource.KindOf(resource.NewKind(testNS, testType)))
	chans := map[*kindWatcher]chan state.Event{}
	newW := func(capacity int) *kindWatcher {
		ch := make(chan state.Event, capacity)
		w := &kindWatcher{feed: feed{ks: ks, ctx: context.Background(), ch: ch, wake: make(chan struct{}, 1)}}
		chans[w] = ch
		return w
	}
	rec := &record{new: newPair("x", 1), seq: 5}
	plain, full, behind, filtered, aggregated := newW(1), newW(1), newW(1), newW(1), newW(1)
	chans[full] <- state.Event{}
	filtered.filtered, filtered.iq = true, resource.IDQuery{Regexp: regexp.MustCompile("^x$")}
	aggregated.ch, aggregated.aggCh = nil, make(chan []state.Event, 1)
	all := []*kindWatcher{plain, full, behind, filtered, aggregated}
	for _, w := range all {
		w.pos.Store(rec.seq)
	}
	behind.pos.Store(rec.seq - 1)

	ks.mu.Lock()
	for _, w := range all {
		ks.parkLocked(w)
	}
	woken := ks.takeParkingLocked(rec, false)
	ks.mu.Unlock()
	require.Equal(t, all, woken.members, "writes close together hand nothing over")
	for _, w := range all {
		require.Equal(t, w == behind, w.pos.Load() == rec.seq-1)
	}

	ks.mu.Lock()
	for _, w := range all {
		ks.parkLocked(w)
	}
	woken = ks.takeParkingLocked(rec, true)
	require.Equal(t, []*kindWatcher{plain}, ks.parking.members, "handed over and parked again")
	ks.mu.Unlock()
	require.Equal(t, []*kindWatcher{full, behind, filtered, aggregated}, woken.members)
	require.Equal(t, rec.seq+1, plain.pos.Load())
	require.Equal(t, rec.seq+1, plain.released.Load(), "it holds no record: a write may reuse rec")
	ev := <-chans[plain]
	require.Equal(t, state.Created, ev.Type)
	require.Same(t, rec.new, ev.Resource)
	for _, w := range woken.members {
		require.NotEqual(t, rec.seq+1, w.pos.Load(), "not moved")
	}
}
