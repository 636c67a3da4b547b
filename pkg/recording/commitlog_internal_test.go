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
	"github.com/resgraph/resgraph/pkg/resource/typed"
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
	collect := func(r run) {
		for i := range r.len() {
			got = append(got, r.rev(i))
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
			drainErr = cmp.Or(drainErr, l.drain(func(run) {}))
		}
	})
	require.NoError(t, drainErr)
	assert.Equal(t, 3.0, allocs, "a chunk per commitChunkLen changes")

	got = nil
	first := rev + 1
	for range 2*commitChunkLen + 1 {
		rev++
		l.Committed(rev, nil, r, 0)
	}
	require.ErrorIs(t, l.drain(collect), errFellBehind)
	require.Greater(t, len(got), commitChunkLen, "the changes before the overflow")
	for i, v := range got {
		require.Equal(t, first+uint64(i), v)
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

// TestRC11_ACommitChunkIsOneSmallAllocation: a chunk of changes (its
// changes, its base and its counters) fits the 8 KiB size class with no
// room for one more change, and a change is 16 bytes with one pointer.
func TestRC11_ACommitChunkIsOneSmallAllocation(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(commitChunk{}), uintptr(8192))
	assert.Less(t, 8192-unsafe.Sizeof(commitChunk{}), unsafe.Sizeof(committed{}), "no room for one more change")
	assert.Equal(t, uintptr(16), unsafe.Sizeof(committed{}), "a change is its resource's data word and one word of what it did, its revision and its time")
}

type otherDef struct{}

func (otherDef) Definition() typed.Definition { return def{}.Definition() }

// TestRC11_ALogGivesBackEachChangeAsItWasWritten: whatever a change's
// revision (any 64-bit one, one lower than the change before it), its
// time (any, one earlier than the change before it or far after it) and
// its resource's Go type (a kind served by several), a commit log's
// reader reads back the revision, time, resource and what it did that
// the writer committed, in order.
func TestRC11_ALogGivesBackEachChangeAsItWasWritten(t *testing.T) {
	type change struct {
		rev uint64
		at  int64
		res resource.Resource
		op  commitOp
	}
	other := typed.NewDefault[spec, otherDef]("o", spec{})
	var want []change
	rev, when := uint64(1), int64(1000)
	for i := range 3 * commitChunkLen {
		res := at(fmt.Sprint("r", i), uint64(i+1))
		switch {
		case i > 2*commitChunkLen && i%7 == 3: // the first two chunks' of one type
			res = other
		case i == 100:
			rev = 1<<62 + 5 // no longer numbered in 62 bits
		case i == 101:
			rev = 1<<64 - 1
		case i == 102:
			rev = 3 // lower than the change before
		case i == 200:
			rev += 1 << 40 // far after
		case i == 300:
			when -= 10 // earlier
		case i == 400:
			when += int64(time.Hour)
		}
		want = append(want, change{rev: rev, at: when, res: res, op: commitOp(i % 3)})
		rev, when = rev+1, when+int64(i)
	}
	l := newCommitLog(wsKind, 1<<20, make(chan struct{}, 1))
	for _, c := range want {
		var old, new resource.Resource
		switch c.op {
		case committedCreate:
			new = c.res
		case committedUpdate:
			old, new = c.res, c.res
		case committedDestroy:
			old = c.res
		}
		l.Committed(c.rev, old, new, c.at)
	}
	var got []change
	require.NoError(t, l.drain(func(r run) {
		for i := range r.len() {
			got = append(got, change{rev: r.rev(i), at: r.at(i), res: r.res(i), op: r.op(i)})
		}
	}))
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].rev, got[i].rev, "change %d's revision", i)
		require.Equal(t, want[i].at, got[i].at, "change %d's time", i)
		require.Equal(t, want[i].op, got[i].op, "change %d's op", i)
		require.Same(t, want[i].res, got[i].res, "change %d's resource", i)
	}
}

// TestRC11_AWriterWakesTheRecorderOnceAQuarterOfItsLogIsUnread: a commit
// log's writer wakes its reader when it starts a chunk while a quarter
// of the log's limit of chunks is unread, not at each chunk (a burst of
// writes is drained at the recorder's tick, a take or a Sync); once the
// reader drained it, the next wake-up waits for another quarter.
func TestRC11_AWriterWakesTheRecorderOnceAQuarterOfItsLogIsUnread(t *testing.T) {
	kick := make(chan struct{}, 1)
	l := newCommitLog(wsKind, 16, kick)
	r := at("r", 1)
	rev := uint64(0)
	write := func(n int) {
		for range n {
			rev++
			l.Committed(rev, nil, r, 0)
		}
	}
	woken := func() bool {
		select {
		case <-kick:
			return true
		default:
			return false
		}
	}
	write(3 * commitChunkLen) // three chunks written, none read
	assert.False(t, woken(), "3 of 16 chunks unread")
	write(1)
	assert.True(t, woken(), "4 of 16 chunks unread")
	write(commitChunkLen)
	assert.True(t, woken(), "each chunk started past the quarter wakes it")
	n := 0
	require.NoError(t, l.drain(func(r run) { n += r.len() }))
	assert.Equal(t, 4*commitChunkLen+1, n)
	write(2 * commitChunkLen)
	assert.False(t, woken(), "3 of 16 chunks unread after the drain")
	write(commitChunkLen)
	assert.True(t, woken())
}
