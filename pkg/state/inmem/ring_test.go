package inmem

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

// copySink keeps the copies TestS11_AFullHistoryAllocatesNothingPerWrite
// makes, so that they are allocated as a write's are.
var copySink resource.Resource

// TestS11_AFullHistoryAllocatesNothingPerWrite: the history holds its
// changes by value in a ring; once the ring is full, a write overwrites the
// oldest change in place, so an update allocates what a DeepCopy of its
// resource does (the stored copy) and nothing for the history. Each run
// makes more updates than a ring chunk holds, so a history that allocated
// its records, even a chunk of them at a time, would show.
func TestS11_AFullHistoryAllocatesNothingPerWrite(t *testing.T) {
	const capacity = 2 * ringChunk
	st, ctx := newTestState(t, withoutMutationDetector(), WithHistoryCapacity(capacity))
	r := newPair("x", 0)
	require.NoError(t, st.Create(ctx, r))
	update := func() {
		r.TypedSpec().A++
		if err := st.Update(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 * capacity {
		update() // fills the ring
	}
	const perRun = ringChunk + 1
	writes := testing.AllocsPerRun(20, func() {
		for range perRun {
			update()
		}
	})
	copies := testing.AllocsPerRun(20, func() {
		for range perRun {
			copySink = r.DeepCopy()
		}
	})
	t.Logf("%d updates: %.0f allocations; %d copies: %.0f", perRun, writes, perRun, copies)
	require.Equal(t, copies, writes, "allocations of %d updates once the history is full", perRun)
}
