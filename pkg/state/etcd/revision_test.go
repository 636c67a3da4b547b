package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestRevisionsAreModRevisions checks state.RevisionReporter on etcd:
// revisions are etcd's — a kind's KindRevision is its newest change's mod
// revision (another kind's writes move only the cluster's revision), every
// event carries its change's revision (bootstrap contents and Bootstrapped
// the revision of the snapshot), and Get and List report the revision they
// read at, no older than the writes that returned before them.
func TestRevisionsAreModRevisions(t *testing.T) {
	st := newState(t)
	rr, ok := st.(state.RevisionReporter)
	require.True(t, ok, "the etcd state numbers its changes")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ints := resource.NewKind("ns", conformance.IntResourceType)

	kindRev := func() (uint64, uint64) {
		t.Helper()
		last, at, err := rr.KindRevision(ctx, ints)
		require.NoError(t, err)
		require.LessOrEqual(t, last, at)
		return last, at
	}
	last, _ := kindRev()
	require.Zero(t, last, "a kind never written has no change")

	require.NoError(t, st.Create(ctx, conformance.NewIntResource("ns", "a", 1)))
	created, _ := kindRev()
	require.Positive(t, created)
	require.NoError(t, st.Create(ctx, conformance.NewStrResource("ns", "s", "x")))
	same, at := kindRev()
	assert.Equal(t, created, same, "another kind's write does not change this kind's newest change")
	assert.Greater(t, at, created, "but it moves the cluster's revision")
	now, err := rr.Revision(ctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, now, at)

	ch := make(chan []state.Event, 16)
	require.NoError(t, st.WatchKindAggregated(ctx, ints, ch, state.WithBootstrapContents(true)))
	batch := recvBatch(t, ctx, ch)
	require.Len(t, batch, 2)
	// The snapshot's revision: at or after the kind's newest change, and
	// not after the cluster's revision when the watch started (no change
	// of the kind in between, so the contents are the kind at it).
	assert.GreaterOrEqual(t, batch[0].Revision, created, "bootstrap contents")
	assert.LessOrEqual(t, batch[0].Revision, now)
	assert.Equal(t, state.Bootstrapped, batch[1].Type)
	assert.Equal(t, batch[0].Revision, batch[1].Revision)

	_, err = st.UpdateWithConflicts(ctx, resource.NewPointer("ns", conformance.IntResourceType, "a"), func(r resource.Resource) error {
		r.(*conformance.IntResource).TypedSpec().Value = 2
		return nil
	})
	require.NoError(t, err)
	updated, _ := kindRev()
	require.NoError(t, st.Destroy(ctx, resource.NewPointer("ns", conformance.IntResourceType, "a")))
	destroyed, _ := kindRev()
	var got []uint64
	for len(got) < 2 {
		for _, ev := range recvBatch(t, ctx, ch) {
			got = append(got, ev.Revision)
		}
	}
	assert.Equal(t, []uint64{updated, destroyed}, got, "each change carries its mod revision")

	var rev uint64
	_, err = st.Get(ctx, resource.NewPointer("ns", conformance.IntResourceType, "a"), state.WithGetRevision(&rev))
	require.True(t, state.IsNotFoundError(err))
	assert.GreaterOrEqual(t, rev, destroyed)
	rev = 0
	_, err = st.List(ctx, ints, state.WithListRevision(&rev))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, rev, destroyed)
}

// recvBatch returns the next batch of ch, failing the test when ctx ends
// first.
func recvBatch(t *testing.T, ctx context.Context, ch <-chan []state.Event) []state.Event {
	t.Helper()
	select {
	case b := <-ch:
		return b
	case <-ctx.Done():
		require.FailNow(t, "no batch")
		return nil
	}
}
