package recording

import (
	"cmp"
	"context"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

var wsKind = resource.NewKind("w", def{}.Definition().Type)

// TestRC11_ALogKeepsEveryChangeUntilItOverflows: a commit log drained as
// it is written hands over every change once, in order, and its writer
// allocates a chunk per commitChunkLen changes and nothing else; a writer limit
// chunks ahead of its reader stops, and the reader learns it after the
// changes written before.
func TestRC11_ALogKeepsEveryChangeUntilItOverflows(t *testing.T) {
	kick := make(chan struct{}, 1)
	l := newCommitLog(wsKind, 2, kick)
	var got []uint64
	collect := func(cs []committed) {
		for _, c := range cs {
			got = append(got, c.rev())
		}
	}
	r := at("r", 1)
	rev := uint64(0)
	for range 100 {
		for range 100 {
			rev++
			l.Committed(rev, nil, r, 0)
		}
		require.NoError(t, l.drain(collect))
	}
	require.Len(t, got, 10_000)
	for i, v := range got {
		require.Equal(t, uint64(i+1), v)
	}
	var drainErr error
	allocs := testing.AllocsPerRun(10, func() {
		for range 3 {
			for range commitChunkLen {
				rev++
				l.Committed(rev, nil, r, 0)
			}
			drainErr = cmp.Or(drainErr, l.drain(func([]committed) {}))
		}
	})
	require.NoError(t, drainErr)
	assert.Equal(t, 3.0, allocs, "a chunk per commitChunkLen changes")

	got = nil
	for i := range 2*commitChunkLen + 1 {
		l.Committed(uint64(i), nil, r, 0)
	}
	require.ErrorIs(t, l.drain(collect), errFellBehind)
	require.Greater(t, len(got), commitChunkLen, "the changes before the overflow")
	for i, v := range got {
		require.Equal(t, uint64(i), v)
	}
}

// TestRC11_ARecorderThatFallsBehindStartsOver: when its writers get more
// than the window's bytes ahead of the recorder, it starts its window
// over (a take meanwhile fails): the new window starts from the state
// after those writes.
func TestRC11_ARecorderThatFallsBehindStartsOver(t *testing.T) {
	st := inmem.NewState()
	rec, err := New(st, codec.NewRegistry(), WithKinds(wsKind), WithWindow(time.Hour, 2*commitChunkLen*entryOverhead))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	<-rec.Started()

	assert.ErrorIs(t, fallBehind(t, rec, st), errFellBehind)
	_, err = rec.Take()
	require.Error(t, err, "not passed off as complete")

	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := rec.Take()
		if err == nil {
			assert.Len(t, r.Initial, 3*commitChunkLen, "the window starts over from the state after the writes")
			assert.Empty(t, r.Changes)
			return
		}
		require.True(t, time.Now().Before(deadline), "the recorder did not start over: %v", err)
		time.Sleep(5 * time.Millisecond)
	}
}

// fallBehind writes three chunks of changes while it holds the recorder's
// lock (the recorder cannot read its logs), and returns what the recorder
// then reads of them.
func fallBehind(t *testing.T, rec *Recorder, st state.State) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i := range 3 * commitChunkLen {
		if err := st.Create(context.Background(), atOf(fmt.Sprint("r", i), 0)); err != nil {
			return err
		}
	}
	return rec.drainLocked()
}

// TestRC11_ACommitChunkIsOneSmallAllocation: a commit log's chunk (its
// changes and counters) fits the 8 KiB size class, so the window's chunks
// hold no allocator slack.
func TestRC11_ACommitChunkIsOneSmallAllocation(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(commitChunk{}), uintptr(8192))
	assert.Equal(t, uintptr(32), unsafe.Sizeof(committed{}), "a change is a resource, a revision, a time and what it did")
}

// TestRC11_ACommittedChangeKeepsItsRevisionAndWhatItDid: a change's
// revision and what it did share a word; a revision too large for it is
// kept as not numbered (its change ordered by its arrival), never as
// another revision.
func TestRC11_ACommittedChangeKeepsItsRevisionAndWhatItDid(t *testing.T) {
	r := at("r", 1)
	for _, op := range []commitOp{committedCreate, committedUpdate, committedDestroy} {
		for _, rev := range []uint64{0, 1, 1<<62 - 1} {
			c := newCommitted(r, rev, op, 7)
			assert.Equal(t, rev, c.rev(), "op %d", op)
			assert.Equal(t, op, c.op(), "rev %d", rev)
		}
		c := newCommitted(r, 1<<62, op, 7)
		assert.Equal(t, uint64(0), c.rev(), "a revision of 2^62 or more is not numbered")
		assert.Equal(t, op, c.op())
	}
}
