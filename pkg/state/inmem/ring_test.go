package inmem

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// copySink keeps the copies TestS11_AFullHistoryAllocatesNothingPerWrite
// makes, so that they are allocated as a write's are.
var copySink resource.Resource

// TestS11_AFullHistoryAllocatesNothingPerWrite: once a kind's history
// ring is full, a write with no kind watcher reading behind it reuses the
// record of the change leaving the ring, so an update allocates what a
// DeepCopy of its resource does (the stored copy) and nothing for the
// history. Each run makes more updates than a block of records holds, so
// a history that allocated its records, even a block at a time, would
// show.
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

// TestS12_ARecordIsReusedOnlyOnceNoKindWatcherCanReadIt: a write reuses
// the record leaving the ring in place only when every kind watcher's
// released position is past it; a watcher that may still be reading it
// (here one at seq 2 that the ring overwrites: it lost the record to the
// spill, and its goroutine may still be copying it) keeps it as it was,
// and the write takes a new record, until the watcher has drained the
// spill and reads from its new position on.
func TestS12_ARecordIsReusedOnlyOnceNoKindWatcherCanReadIt(t *testing.T) {
	c := newCore(withoutMutationDetector(), WithHistoryCapacity(4))
	ctx := context.Background()
	ks := c.store(resource.KindOf(testKind))
	r := newPair("x", 0)
	require.NoError(t, c.Create(ctx, r))
	update := func() {
		r.TypedSpec().A++
		require.NoError(t, c.Update(ctx, r))
	}
	for range 3 {
		update() // seqs 2 to 4: the ring is full
	}
	w := &kindWatcher{feed: feed{ks: ks, ctx: ctx, ch: make(chan state.Event, 1), wake: make(chan struct{}, 1)}}
	w.pos.Store(2)
	ks.mu.Lock()
	ks.addKindWatcherLocked(w)
	first, second := ks.recordLocked(1), ks.recordLocked(2)
	ks.mu.Unlock()
	t.Cleanup(func() {
		ks.mu.Lock()
		ks.removeKindWatcherLocked(w)
		ks.mu.Unlock()
	})

	record := func(s uint64) *record {
		ks.mu.Lock()
		defer ks.mu.Unlock()
		return ks.recordLocked(s)
	}
	update() // seq 5 replaces seq 1, which no watcher reads
	require.Same(t, first, record(5), "reused in place")

	update() // seq 6 replaces seq 2, which w may be reading
	require.NotSame(t, second, record(6), "a new record")
	require.Equal(t, uint64(2), second.seq, "the record w may read is as it was")
	require.Equal(t, uint64(spilled), w.pos.Load())
	require.Equal(t, uint64(2), w.released.Load(), "spilled: it may still be reading what it lost")

	ks.mu.Lock()
	ks.drainLocked(w, nil)
	ks.mu.Unlock()
	require.Equal(t, w.pos.Load(), w.released.Load(), "drained: it reads from its new position on")

	for range recountGap + 4 {
		w.released.Store(ks.seq + 1) // w keeps up: it reads nothing below
		update()
	}
	w.released.Store(ks.seq + 1)
	head := ks.seq
	leaving := record(head - 3)
	update()
	require.Same(t, leaving, record(head+1), "reused again")
}
