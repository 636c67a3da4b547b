package inmem

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// getRO reads the shared snapshot of id.
func getRO(t *testing.T, st state.State, id string) resource.Resource {
	t.Helper()
	r, err := st.Get(t.Context(), ptr(id), state.WithReadOnlyGet())
	require.NoError(t, err)
	return r
}

// TestS7_WatchersShareOneSnapshotPerChange: every watcher of a change
// receives the same objects (Resource and Old), which are the stored
// snapshots a read-only Get returns; a copying Get returns a private
// object every time.
func TestS7_WatchersShareOneSnapshotPerChange(t *testing.T) {
	st, ctx := newTestState(t)
	ch1, ch2, chID := make(chan state.Event, 8), make(chan state.Event, 8), make(chan state.Event, 8)
	require.NoError(t, st.WatchKind(ctx, testKind, ch1))
	require.NoError(t, st.WatchKind(ctx, testKind, ch2))
	require.NoError(t, st.Watch(ctx, ptr("a"), chID, state.WithTailEvents(1)))
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	v1 := getRO(t, st, "a")
	mustUpdate(t, ctx, st, "a", 2)
	v2 := getRO(t, st, "a")

	for _, ch := range []chan state.Event{ch1, ch2, chID} {
		c := recv(t, ch)
		require.Equal(t, state.Created, c.Type)
		assert.Same(t, v1, c.Resource)
		u := recv(t, ch)
		require.Equal(t, state.Updated, u.Type)
		assert.Same(t, v2, u.Resource)
		assert.Same(t, v1, u.Old)
	}

	got1, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	got2, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	assert.NotSame(t, v2, got1, "a copying Get is private")
	assert.NotSame(t, got1, got2)
	assert.True(t, resource.Equal(v2, got1))
	assert.Same(t, v2, getRO(t, st, "a"), "read-only Gets share the snapshot")
}

// TestS7_BootstrapTailAndCoalescedEventsShareSnapshots: bootstrap
// contents, replayed tail events and coalesced events of a watcher that
// fell behind carry the stored snapshots too.
func TestS7_BootstrapTailAndCoalescedEventsShareSnapshots(t *testing.T) {
	st, ctx := newTestState(t, WithHistoryCapacity(8))
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	require.NoError(t, st.Create(ctx, newPair("b", 1)))

	boot := make(chan state.Event, 8)
	require.NoError(t, st.WatchKind(ctx, testKind, boot, state.WithBootstrapContents(true)))
	for _, id := range []string{"a", "b"} {
		ev := recv(t, boot)
		require.Equal(t, state.Created, ev.Type)
		assert.Same(t, getRO(t, st, id), ev.Resource)
	}
	require.Equal(t, state.Bootstrapped, recv(t, boot).Type)

	tail := make(chan state.Event, 8)
	require.NoError(t, st.WatchKind(ctx, testKind, tail, state.WithKindTailEvents(2)))
	for _, id := range []string{"a", "b"} {
		ev := recv(t, tail)
		assert.Same(t, getRO(t, st, id), ev.Resource)
	}

	// A watcher with a one-event channel falls far behind and has its
	// backlog coalesced: its last events still carry the snapshots.
	slow := make(chan state.Event, 1)
	require.NoError(t, st.WatchKind(ctx, testKind, slow))
	for i := 2; i < 200; i++ {
		mustUpdate(t, ctx, st, "a", i)
		mustUpdate(t, ctx, st, "b", i)
	}
	final := map[string]resource.Resource{"a": getRO(t, st, "a"), "b": getRO(t, st, "b")}
	seen := map[string]resource.Resource{}
	for seen["a"] != final["a"] || seen["b"] != final["b"] {
		ev := recv(t, slow)
		seen[ev.Resource.Metadata().ID()] = ev.Resource
	}
}

// TestS7_ReadOnlyListSharesSnapshots: a read-only List returns the stored
// snapshots (in a slice of the caller's own); a copying List returns
// private copies.
func TestS7_ReadOnlyListSharesSnapshots(t *testing.T) {
	st, ctx := newTestState(t)
	for _, id := range []string{"b", "a", "c"} {
		require.NoError(t, st.Create(ctx, newPair(id, 1)))
	}
	ro, err := st.List(ctx, testKind, state.WithReadOnlyList())
	require.NoError(t, err)
	cp, err := st.List(ctx, testKind)
	require.NoError(t, err)
	require.Len(t, ro.Items, 3)
	require.Len(t, cp.Items, 3)
	for i, id := range []string{"a", "b", "c"} {
		assert.Same(t, getRO(t, st, id), ro.Items[i])
		assert.NotSame(t, ro.Items[i], cp.Items[i])
		assert.True(t, resource.Equal(ro.Items[i], cp.Items[i]))
	}
	ro.Items[0] = nil // the slice is the caller's
	again, err := st.List(ctx, testKind, state.WithReadOnlyList())
	require.NoError(t, err)
	assert.NotNil(t, again.Items[0])

	filtered, err := st.List(ctx, testKind, state.WithReadOnlyList(), state.WithIDQuery(resource.IDRegexpMatch(regexp.MustCompile(`^b$`))))
	require.NoError(t, err)
	require.Len(t, filtered.Items, 1)
	assert.Same(t, getRO(t, st, "b"), filtered.Items[0])
}

// TestS7_UpdateOfTheSharedSnapshotIsRefused: Update given the stored
// snapshot itself (from a read-only Get, a read-only List or an event)
// fails with an invalid-class error telling to DeepCopy it, and writes
// nothing; its DeepCopy updates fine.
func TestS7_UpdateOfTheSharedSnapshotIsRefused(t *testing.T) {
	st, ctx := newTestState(t)
	ch := make(chan state.Event, 4)
	require.NoError(t, st.WatchKind(ctx, testKind, ch))
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	ev := recv(t, ch)
	ro := getRO(t, st, "a")
	list, err := st.List(ctx, testKind, state.WithReadOnlyList())
	require.NoError(t, err)

	for _, shared := range []resource.Resource{ev.Resource, ro, list.Items[0]} {
		err := st.Update(ctx, shared)
		require.Error(t, err)
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.Contains(t, err.Error(), "DeepCopy")
	}
	assert.Equal(t, uint64(1), version(getRO(t, st, "a")), "nothing written")
	select {
	case ev := <-ch:
		t.Fatalf("unexpected event %v", ev.Type)
	default:
	}

	c := ro.DeepCopy()
	c.(*pair).TypedSpec().A = 2
	require.NoError(t, st.Update(ctx, c))
	assert.Equal(t, 2, specA(t, getRO(t, st, "a")))
	assert.Equal(t, 1, specA(t, ro), "the old snapshot is unchanged")
}
