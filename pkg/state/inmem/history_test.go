package inmem

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// blobSpec is a large spec: 16 KiB of data.
type blobSpec struct{ Data []byte }

type blobDef struct{}

func (blobDef) Definition() typed.Definition {
	return typed.Definition{Type: "Blobs.test.resgraph.dev", DefaultNamespace: testNS}
}

var blobKind = resource.NewKind(testNS, "Blobs.test.resgraph.dev")

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestHistoryBoundedInBytes: one 16 KiB resource updated 5,000 times
// keeps at most DefaultHistoryBytes of old versions in the history (the
// history's count bound alone, 4,096 versions, would retain about 64 MiB);
// the reach of tail events shrinks accordingly, and a bookmark from before
// what is kept is a buffer overrun (S11).
func TestHistoryBoundedInBytes(t *testing.T) {
	st, ctx := newTestState(t, withoutMutationDetector())
	before := heapInUse()
	r := typed.NewDefault[blobSpec, blobDef]("b", blobSpec{Data: make([]byte, 16<<10)})
	require.NoError(t, st.Create(ctx, r))
	wctx, cancel := context.WithCancel(ctx)
	ch := make(chan state.Event, 1)
	require.NoError(t, st.WatchKind(wctx, blobKind, ch, state.WithKindTailEvents(1)))
	bookmark := recv(t, ch).Bookmark
	cancel()
	for i := range 5000 {
		r.TypedSpec().Data[0] = byte(i)
		require.NoError(t, st.Update(ctx, r))
	}
	retained := heapInUse() - min(before, heapInUse())
	t.Logf("heap retained by the state after 5,000 updates of a 16 KiB resource: %.1f MiB", float64(retained)/(1<<20))
	assert.Less(t, retained, uint64(DefaultHistoryBytes+2<<20), "history bounded in bytes")
	runtime.KeepAlive(st)

	tail := make(chan state.Event, 5000)
	require.NoError(t, st.WatchKind(ctx, blobKind, tail, state.WithKindTailEvents(5000)))
	want := uint64(5001)
	n := 0
	for {
		ev := recv(t, tail)
		n++
		if version(ev.Resource) == want {
			break
		}
	}
	kept := DefaultHistoryBytes / (16 << 10)
	assert.Less(t, n, kept+1, "the tail is what the byte bound keeps")
	assert.Greater(t, n, kept/2)

	err := st.WatchKind(ctx, blobKind, make(chan state.Event, 1), state.WithKindStartFromBookmark(bookmark))
	require.Error(t, err)
	assert.True(t, state.IsBufferOverrunError(err), "%v", err)
}

// TestWithHistoryBytesZeroKeepsTheNewestChange: a zero byte budget keeps
// only the newest change: tail events replay it alone, and watchers still
// reach every final state (S12).
func TestWithHistoryBytesZeroKeepsTheNewestChange(t *testing.T) {
	st, ctx := newTestState(t, WithHistoryBytes(0))
	live := make(chan state.Event, 64)
	require.NoError(t, st.WatchKind(ctx, testKind, live))
	require.NoError(t, st.Create(ctx, newPair("a", 0)))
	for i := 1; i <= 10; i++ {
		mustUpdate(t, ctx, st, "a", i)
	}
	// The live watcher may have its backlog coalesced (the history keeps
	// one change), but it reaches the final version in order.
	last := uint64(0)
	for last < 11 {
		ev := recv(t, live)
		require.Greater(t, version(ev.Resource), last)
		last = version(ev.Resource)
	}
	tail := make(chan state.Event, 16)
	require.NoError(t, st.WatchKind(ctx, testKind, tail, state.WithKindTailEvents(10)))
	ev := recv(t, tail)
	assert.Equal(t, uint64(11), version(ev.Resource))
	select {
	case ev := <-tail:
		t.Fatalf("unexpected %v of version %d", ev.Type, version(ev.Resource))
	default:
	}
}
