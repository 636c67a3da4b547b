package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// unrelatedRevisions is how many revisions the history tests write to
// other keys of the cluster between a kind's first write and the changes
// its watches ask for.
const unrelatedRevisions = 300

// historyKind is the kind of the history tests.
func historyKind() resource.Kind { return resource.NewKind("hist", conformance.IntResourceType) }

func histPtr(id string) resource.Pointer {
	return resource.NewPointer("hist", conformance.IntResourceType, id)
}

// clusterRevision returns the etcd cluster's current revision.
func clusterRevision(ctx context.Context, t *testing.T) int64 {
	t.Helper()
	resp, err := client.Get(ctx, "\x00")
	require.NoError(t, err)
	return resp.Header.Revision
}

// writeUnrelated writes n revisions to keys outside every state's prefix.
func writeUnrelated(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	key := fmt.Sprintf("/unrelated-%s", t.Name())
	for i := range n {
		_, err := client.Put(ctx, key, fmt.Sprint(i))
		require.NoError(t, err)
	}
}

// setInt writes value to the IntResource id of st (created at first).
func setInt(ctx context.Context, t *testing.T, st state.State, id string, value int) {
	t.Helper()
	r, err := st.Get(ctx, histPtr(id))
	if state.IsNotFoundError(err) {
		require.NoError(t, st.Create(ctx, conformance.NewIntResource("hist", id, value)))
		return
	}
	require.NoError(t, err)
	r = r.DeepCopy()
	r.(*conformance.IntResource).TypedSpec().Value = value
	require.NoError(t, st.Update(ctx, r))
}

// nextEvent returns the next event of ch, failing the test at ctx's end.
func nextEvent(ctx context.Context, t *testing.T, ch <-chan state.Event) state.Event {
	t.Helper()
	select {
	case ev := <-ch:
		require.NotEqual(t, state.Errored, ev.Type, "%v", ev.Error)
		return ev
	case <-ctx.Done():
		t.Fatal("no event")
		return state.Event{}
	}
}

// expectInts receives one event per want: type, ID and spec value.
func expectInts(ctx context.Context, t *testing.T, ch <-chan state.Event, want ...string) []state.Event {
	t.Helper()
	var evs []state.Event
	for _, w := range want {
		ev := nextEvent(ctx, t, ch)
		got := fmt.Sprintf("%s %s=%d", ev.Type, ev.Resource.Metadata().ID(), ev.Resource.(*conformance.IntResource).TypedSpec().Value)
		require.Equal(t, w, got)
		evs = append(evs, ev)
	}
	return evs
}

// writeWatched writes a = 1..n with st, each write followed by
// between(v) when not nil, and returns the events a watch of the kind
// received of them (with their bookmarks); the watch has ended, and with
// it st's feed of the kind.
func writeWatched(ctx context.Context, t *testing.T, st state.State, n int, between func(v int)) []state.Event {
	t.Helper()
	ch := make(chan state.Event, n)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	require.NoError(t, st.WatchKind(wctx, historyKind(), ch))
	want := make([]string, 0, n)
	for v := 1; v <= n; v++ {
		setInt(ctx, t, st, "a", v)
		if between != nil {
			between(v)
		}
		want = append(want, fmt.Sprintf("Updated a=%d", v))
	}
	want[0] = "Created a=1"
	return expectInts(ctx, t, ch, want...)
}

// TestS11_ATailReadsTheHistoryItNeedsNotTheClusters: a watch whose tail
// reaches before its feed started reads etcd's history in windows just
// below the feed's start, as far as it needs: a tail of a kind's last
// changes reads fewer revisions than the cluster wrote since the kind's
// first write; a tail that reaches the kind's first write reads no
// revision before it (not the cluster's history from revision 1).
func TestS11_ATailReadsTheHistoryItNeedsNotTheClusters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := newPrefix()
	writer := newState(t, etcd.WithPrefix(prefix))
	writeUnrelated(ctx, t, unrelatedRevisions)
	setInt(ctx, t, writer, "old", 1)
	floor := clusterRevision(ctx, t) // the kind's first write
	writeUnrelated(ctx, t, unrelatedRevisions)
	for v := 1; v <= 4; v++ {
		setInt(ctx, t, writer, "a", v)
	}
	newest := clusterRevision(ctx, t)

	var cnt etcd.Counters
	reader := newState(t, etcd.WithPrefix(prefix), etcd.WithCounters(&cnt))
	ch := make(chan state.Event, 16)
	require.NoError(t, reader.WatchKind(ctx, historyKind(), ch, state.WithKindTailEvents(3)))
	expectInts(ctx, t, ch, "Updated a=2", "Updated a=3", "Updated a=4")
	assert.Less(t, cnt.HistoryRevisions.Load(), int64(unrelatedRevisions),
		"the last 3 changes of the kind read fewer revisions than the cluster wrote before them")
	t.Logf("tail of 3: %d reads of %d revisions", cnt.HistoryReads.Load(), cnt.HistoryRevisions.Load())

	one := make(chan state.Event, 16)
	require.NoError(t, reader.Watch(ctx, histPtr("old"), one, state.WithTailEvents(5)))
	expectInts(ctx, t, one, "Created old=1")
	assert.LessOrEqual(t, cnt.HistoryRevisions.Load(), newest-floor+1,
		"no revision before the kind's first write is read")
	reads := cnt.HistoryReads.Load()
	assert.Greater(t, reads, int64(1), "the tail of old reached further back, in more reads")
	t.Logf("history: %d reads of %d revisions; the kind's first write at revision %d, its newest %d",
		reads, cnt.HistoryRevisions.Load(), floor, newest)

	again := make(chan state.Event, 16)
	require.NoError(t, reader.WatchKind(ctx, historyKind(), again, state.WithKindTailEvents(100)))
	expectInts(ctx, t, again, "Created old=1", "Created a=1", "Updated a=2", "Updated a=3", "Updated a=4")
	assert.Equal(t, reads, cnt.HistoryReads.Load(), "the kind's whole history was read already: nothing more")
}

// TestS11_ABookmarkReadsTheHistoryFromItsRevision: a watch resumed from a
// bookmark by a state whose feed started later (another process) reads
// etcd's history from the bookmark's revision on, not from before it.
func TestS11_ABookmarkReadsTheHistoryFromItsRevision(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := newPrefix()
	writer := newState(t, etcd.WithPrefix(prefix))
	setInt(ctx, t, writer, "old", 1)
	writeUnrelated(ctx, t, unrelatedRevisions)
	evs := writeWatched(ctx, t, writer, 3, nil)
	newest := clusterRevision(ctx, t)

	var cnt etcd.Counters
	reader := newState(t, etcd.WithPrefix(prefix), etcd.WithCounters(&cnt))
	resumed := make(chan state.Event, 16)
	require.NoError(t, reader.WatchKind(ctx, historyKind(), resumed, state.WithKindStartFromBookmark(evs[0].Bookmark)))
	expectInts(ctx, t, resumed, "Updated a=2", "Updated a=3")
	assert.Equal(t, int64(1), cnt.HistoryReads.Load())
	assert.LessOrEqual(t, cnt.HistoryRevisions.Load(), newest-int64(evs[0].Revision)+1,
		"the read starts at the bookmark's revision")
	t.Logf("bookmark at revision %d, newest %d: %d revisions read", evs[0].Revision, newest, cnt.HistoryRevisions.Load())
}

// TestS11_ABookmarkOlderThanTheCompactedHistoryIsABufferOverrun: a state
// whose feed started after etcd compacted its history refuses a bookmark
// from before the compaction with a buffer-overrun error from the Watch
// call (the changes after it are gone), resumes one from after it, and
// replays the tail that is left.
func TestS11_ABookmarkOlderThanTheCompactedHistoryIsABufferOverrun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := newPrefix()
	evs := compactedAtTheSecond(ctx, t, prefix)

	reader := newState(t, etcd.WithPrefix(prefix))
	err := reader.WatchKind(ctx, historyKind(), make(chan state.Event, 1), state.WithKindStartFromBookmark(evs[0].Bookmark))
	assert.True(t, state.IsBufferOverrunError(err), "a bookmark before the compaction: %v", err)
	err = reader.Watch(ctx, histPtr("a"), make(chan state.Event, 1), state.WithStartFromBookmark(evs[0].Bookmark))
	assert.True(t, state.IsBufferOverrunError(err), "a bookmark before the compaction: %v", err)

	resumed := make(chan state.Event, 16)
	require.NoError(t, reader.WatchKind(ctx, historyKind(), resumed, state.WithKindStartFromBookmark(evs[2].Bookmark)))
	expectInts(ctx, t, resumed, "Updated a=4")
	tail := make(chan state.Event, 16)
	require.NoError(t, reader.WatchKind(ctx, historyKind(), tail, state.WithKindTailEvents(10)))
	expectInts(ctx, t, tail, "Updated a=3", "Updated a=4")
}

// compactedAtTheSecond writes a = 1..4 with a new state of prefix, etcd
// compacting its history at the revision of a=2, and returns the events a
// watch received of them.
func compactedAtTheSecond(ctx context.Context, t *testing.T, prefix string) []state.Event {
	t.Helper()
	var compacted int64
	evs := writeWatched(ctx, t, newState(t, etcd.WithPrefix(prefix)), 4, func(v int) {
		if v == 2 {
			compacted = clusterRevision(ctx, t)
			_, err := client.Compact(ctx, compacted, clientv3.WithCompactPhysical())
			require.NoError(t, err)
		}
	})
	require.Equal(t, uint64(compacted), evs[1].Revision, "the compaction is at the revision of a=2")
	return evs
}

// TestS11_ABookmarkAtTheCompactionRevisionResumes: after etcd compacted
// its history at revision C, the changes from C+1 on are still there, so a
// bookmark at C itself resumes without loss, also from a feed that read
// the history from before C already; one below C stays a buffer overrun.
func TestS11_ABookmarkAtTheCompactionRevisionResumes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := newPrefix()
	evs := compactedAtTheSecond(ctx, t, prefix)

	reader := newState(t, etcd.WithPrefix(prefix))
	// A watch that keeps the reader's feed of the kind (and what it read
	// of the past) from one watch to the next.
	require.NoError(t, reader.WatchKind(ctx, historyKind(), make(chan state.Event, 16)))
	err := reader.WatchKind(ctx, historyKind(), make(chan state.Event, 1), state.WithKindStartFromBookmark(evs[0].Bookmark))
	assert.True(t, state.IsBufferOverrunError(err), "a bookmark below the compaction: %v", err)

	resumed := make(chan state.Event, 16)
	require.NoError(t, reader.WatchKind(ctx, historyKind(), resumed, state.WithKindStartFromBookmark(evs[1].Bookmark)),
		"a bookmark at the compaction revision")
	expectInts(ctx, t, resumed, "Updated a=3", "Updated a=4")
	one := make(chan state.Event, 16)
	require.NoError(t, reader.Watch(ctx, histPtr("a"), one, state.WithStartFromBookmark(evs[1].Bookmark)),
		"a bookmark at the compaction revision")
	expectInts(ctx, t, one, "Updated a=3", "Updated a=4")
}

// TestS11_AChangeWhosePreviousStateWasCompactedIsNotInATail: a state
// whose feed reads the history from the compaction revision C (a bookmark
// at C) receives a=2's change at C without its previous state: it is not
// kept, so a tail does not reach it (it would come as a creation), and a
// bookmark before it is a buffer overrun.
func TestS11_AChangeWhosePreviousStateWasCompactedIsNotInATail(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := newPrefix()
	evs := compactedAtTheSecond(ctx, t, prefix)

	reader := newState(t, etcd.WithPrefix(prefix))
	resumed := make(chan state.Event, 16)
	require.NoError(t, reader.WatchKind(ctx, historyKind(), resumed, state.WithKindStartFromBookmark(evs[1].Bookmark)))
	expectInts(ctx, t, resumed, "Updated a=3", "Updated a=4")
	tail := make(chan state.Event, 16)
	require.NoError(t, reader.WatchKind(ctx, historyKind(), tail, state.WithKindTailEvents(10)))
	expectInts(ctx, t, tail, "Updated a=3", "Updated a=4")
	err := reader.WatchKind(ctx, historyKind(), make(chan state.Event, 1), state.WithKindStartFromBookmark(evs[0].Bookmark))
	assert.True(t, state.IsBufferOverrunError(err), "a bookmark below the compaction: %v", err)
}
