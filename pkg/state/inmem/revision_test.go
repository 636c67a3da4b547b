package inmem

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// otherKind is a second kind of test resources, so that revisions and
// per-kind sequence numbers differ.
var otherKind = resource.NewKind("other", testType)

func newOther(id string, a int) *pair {
	p := newPair(id, a)
	*p.Metadata() = resource.NewMetadata("other", testType, id, resource.VersionUndefined)
	return p
}

// revOf returns the state's newest revision.
func revOf(t *testing.T, st state.State) uint64 {
	t.Helper()
	rev, err := st.(state.RevisionReporter).Revision(context.Background())
	require.NoError(t, err)
	return rev
}

// TestRevision_OneSequenceAcrossKinds: every committed change of any kind
// gets the next revision of one sequence; writes that commit nothing take
// none; the events of each kind carry their changes' revisions in order.
func TestRevision_OneSequenceAcrossKinds(t *testing.T) {
	st, ctx := newTestState(t)
	chA := make(chan state.Event, 64)
	chB := make(chan state.Event, 64)
	require.NoError(t, st.WatchKind(ctx, testKind, chA))
	require.NoError(t, st.WatchKind(ctx, otherKind, chB))
	require.Zero(t, revOf(t, st))

	require.NoError(t, st.Create(ctx, newPair("a", 1)))                                               // 1
	require.NoError(t, st.Create(ctx, newOther("b", 1)))                                              // 2
	mustUpdate(t, ctx, st, "a", 2)                                                                    // 3
	require.Error(t, st.Create(ctx, newPair("a", 1)))                                                 // conflict: no revision
	require.NoError(t, st.Modify(ctx, newPair("a", 0), func(resource.Resource) error { return nil })) // no change: none
	require.NoError(t, st.Destroy(ctx, resource.NewPointer("other", testType, "b")))                  // 4
	require.Equal(t, uint64(4), revOf(t, st))

	for _, want := range []uint64{1, 3} {
		assert.Equal(t, want, recv(t, chA).Revision)
	}
	for _, want := range []uint64{2, 4} {
		assert.Equal(t, want, recv(t, chB).Revision)
	}
}

// TestRevision_ConcurrentWritersKindOrder: under concurrent writers of
// several kinds, the revisions are exactly 1..N with no gap or repeat, and
// each kind's watch sees its changes' revisions strictly increasing (the
// order a kind applies its changes is their revision order).
func TestRevision_ConcurrentWritersKindOrder(t *testing.T) {
	st, ctx := newTestState(t)
	const writers, perWriter = 4, 200
	kinds := []resource.Kind{testKind, otherKind}
	chans := make([]chan []state.Event, len(kinds))
	for i, k := range kinds {
		chans[i] = make(chan []state.Event, 16)
		require.NoError(t, st.WatchKindAggregated(ctx, k, chans[i]))
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				id := fmt.Sprintf("w%d-%d", w, i)
				var r *pair
				if (w+i)%2 == 0 {
					r = newPair(id, i)
				} else {
					r = newOther(id, i)
				}
				if err := st.Create(ctx, r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	total := writers * perWriter
	require.Equal(t, uint64(total), revOf(t, st))

	seen := map[uint64]bool{}
	for i := range kinds {
		var last uint64
		for n := 0; n < total/2; {
			var batch []state.Event
			select {
			case batch = <-chans[i]:
			case <-timeAfter():
				require.FailNow(t, "no batch")
			}
			for _, ev := range batch {
				require.Greater(t, ev.Revision, last, "kind %d: revisions follow the kind's order", i)
				last = ev.Revision
				require.False(t, seen[ev.Revision], "revision %d given twice", ev.Revision)
				seen[ev.Revision] = true
				n++
			}
		}
	}
	require.Len(t, seen, total, "every revision 1..N used once")
}

// TestRevision_ReadsReportTheirRevision: Get and List store the revision
// of the state they read — at least that of every write that returned
// before, found or not — and a kind's KindRevision names its newest
// change.
func TestRevision_ReadsReportTheirRevision(t *testing.T) {
	st, ctx := newTestState(t)
	rr := st.(state.RevisionReporter)
	var rev uint64
	_, err := st.Get(ctx, ptr("a"), state.WithGetRevision(&rev))
	require.True(t, state.IsNotFoundError(err))
	require.Zero(t, rev)

	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	require.NoError(t, st.Create(ctx, newOther("b", 1)))
	last, at, err := rr.KindRevision(ctx, testKind)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), last)
	assert.Equal(t, uint64(2), at)

	r, err := st.Get(ctx, ptr("a"), state.WithGetRevision(&rev), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.Equal(t, 1, specA(t, r))
	assert.Equal(t, uint64(2), rev)

	rev = 0
	_, err = st.Get(ctx, resource.NewPointer("nowhere", testType, "x"), state.WithGetRevision(&rev))
	require.True(t, state.IsNotFoundError(err))
	assert.Equal(t, uint64(2), rev, "an absent kind is absent at the newest revision")

	mustUpdate(t, ctx, st, "a", 5)
	l, err := st.List(ctx, testKind, state.WithListRevision(&rev))
	require.NoError(t, err)
	require.Len(t, l.Items, 1)
	assert.Equal(t, 5, specA(t, l.Items[0]))
	assert.Equal(t, uint64(3), rev)

	rev = 0
	_, err = st.List(ctx, resource.NewKind("nowhere", testType), state.WithListRevision(&rev))
	require.NoError(t, err)
	assert.Equal(t, uint64(3), rev)

	_, _, err = rr.KindRevision(ctx, resource.NewKind("", testType))
	assert.True(t, state.IsInvalidError(err))
}

// TestRevision_BootstrapAndCurrentState: the bootstrap contents, the
// Bootstrapped event and a single-resource watch's first event carry the
// revision of the state they were read at; the changes that follow carry
// higher ones.
func TestRevision_BootstrapAndCurrentState(t *testing.T) {
	st, ctx := newTestState(t)
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	require.NoError(t, st.Create(ctx, newOther("b", 1)))
	ch := make(chan state.Event, 8)
	require.NoError(t, st.WatchKind(ctx, testKind, ch, state.WithBootstrapContents(true)))
	ev := recv(t, ch)
	assert.Equal(t, state.Created, ev.Type)
	assert.Equal(t, uint64(2), ev.Revision)
	ev = recv(t, ch)
	assert.Equal(t, state.Bootstrapped, ev.Type)
	assert.Equal(t, uint64(2), ev.Revision)

	one := make(chan state.Event, 8)
	require.NoError(t, st.Watch(ctx, ptr("zz"), one))
	ev = recv(t, one)
	assert.Equal(t, state.Destroyed, ev.Type)
	assert.Equal(t, uint64(2), ev.Revision)

	mustUpdate(t, ctx, st, "a", 2)
	assert.Equal(t, uint64(3), recv(t, ch).Revision)
}

// TestRevision_CoalescedEventsCarryNewestRevision: a watcher far behind
// (its changes coalesced, rule S12) gets, per resource, the revision of
// the newest change its event covers; a destroy and re-create in the span
// are two events with the destroy's and the create's revisions. Writes to
// another kind are interleaved, so that revisions are not the kind's
// sequence numbers. Randomized over fixed seeds.
func TestRevision_CoalescedEventsCarryNewestRevision(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { coalescedRevisions(t, seed) })
	}
}

func coalescedRevisions(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 13))
	c := newCore(WithHistoryCapacity(8))
	st := state.WrapCore(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan state.Event) // unbuffered and unread: the watcher stalls
	require.NoError(t, c.WatchKind(ctx, testKind, ch))

	// newest[id] is the revision of the newest change of id; changes holds
	// the revisions of every change of the kind, by ID.
	newest := map[string]uint64{}
	changes := map[uint64]string{}
	exists := map[string]bool{}
	for i := range 200 {
		id := fmt.Sprintf("r%d", rng.IntN(6))
		switch {
		case rng.IntN(3) == 0:
			require.NoError(t, st.Modify(ctx, newOther(id, i), func(r resource.Resource) error {
				r.(*pair).TypedSpec().A = i
				return nil
			}))
			continue
		case !exists[id]:
			require.NoError(t, c.Create(ctx, newPair(id, i)))
			exists[id] = true
		case rng.IntN(4) == 0:
			require.NoError(t, c.Destroy(ctx, ptr(id)))
			exists[id] = false
		default:
			mustUpdate(t, ctx, st, id, i)
		}
		newest[id] = c.rev.Load()
		changes[newest[id]] = id
	}
	// The sentinel is the newest change: the watcher delivers it last.
	require.NoError(t, c.Create(ctx, newPair("end", 0)))
	end := c.rev.Load()
	var last uint64
	lastOf := map[string]uint64{}
	for {
		ev := recv(t, ch)
		require.Greater(t, ev.Revision, last, "revisions increase along the watch")
		last = ev.Revision
		id := ev.Resource.Metadata().ID()
		if id == "end" {
			require.Equal(t, end, ev.Revision)
			break
		}
		require.Equal(t, id, changes[ev.Revision], "the event's revision is one of %s's changes", id)
		lastOf[id] = ev.Revision
	}
	for id, rev := range lastOf {
		if exists[id] { // (one gone ends with a destroy it may have seen earlier)
			require.Equal(t, newest[id], rev, "the last event for %s covers its newest change", id)
		}
	}
}

// TestRevision_WrapCoreWithoutRevisions: WrapCore over a core that does
// not number its changes says so with errors.ErrUnsupported.
func TestRevision_WrapCoreWithoutRevisions(t *testing.T) {
	st := state.WrapCore(struct{ state.CoreState }{newCore()})
	rr, ok := st.(state.RevisionReporter)
	require.True(t, ok)
	_, err := rr.Revision(context.Background())
	assert.True(t, errors.Is(err, errors.ErrUnsupported))
	_, _, err = rr.KindRevision(context.Background(), testKind)
	assert.True(t, errors.Is(err, errors.ErrUnsupported))
}
