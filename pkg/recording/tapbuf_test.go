package recording

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// liveSink returns a recorder over a bare state whose window starts
// empty, and a live tap of wsKind's changes into it (as a session's,
// once it listed), whose buffer wakes kick.
func liveSink(t *testing.T, kick chan struct{}) (*Recorder, *tapSink) {
	rec, err := New(inmem.NewState(), codec.NewRegistry(), WithKinds(wsKind))
	require.NoError(t, err)
	s := newTapSink(rec)
	s.buf = &tapBuf{kick: kick}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	s.resolveLocked([]resource.KindKey{resource.KindOf(wsKind)})
	rec.win.reset(listingAt(0))
	rec.ready, rec.src = true, &source{tap: s}
	s.liveLocked(&startState{kindRev: map[resource.KindKey]uint64{resource.KindOf(wsKind): 0}})
	return rec, s
}

// created returns the watch events of creates of ids from revision rev
// on.
func created(rev uint64, ids ...string) []state.Event {
	evs := make([]state.Event, len(ids))
	for i, id := range ids {
		evs[i] = state.Event{Type: state.Created, Resource: at(id, 1), Revision: rev + uint64(i)}
	}
	return evs
}

// TestRC8_ATappedBatchWaitsForNoLockOfTheRecorders: while the recorder
// holds its lock (a take), a live tap's batch is buffered without
// waiting for it, keeps its time of arrival, and wakes the session; the
// session's drain adds it to the window.
func TestRC8_ATappedBatchWaitsForNoLockOfTheRecorders(t *testing.T) {
	kick := make(chan struct{}, 1)
	rec, s := liveSink(t, kick)
	rec.mu.Lock()
	before := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Changes(resource.KindOf(wsKind), created(1, "a", "b"))
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		rec.mu.Unlock()
		<-done
		t.Fatal("the tap waited for the recorder's lock")
	}
	after := time.Now()
	for !time.Now().After(after) { // the clock moves past the batch's arrival
	}
	<-kick
	rec.mu.Unlock()
	require.NoError(t, rec.drain())

	rec.mu.Lock()
	v := rec.win.view(nil, time.Now())
	rec.mu.Unlock()
	require.Len(t, v.entries, 2)
	for _, e := range v.entries {
		at := time.Unix(0, e.at)
		assert.False(t, at.Before(before) || at.After(after), "a change is recorded at its arrival (%v), not when the session added it", at)
	}
}

// buffered returns how many changes b holds.
func buffered(b *tapBuf) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, bt := range b.batches {
		n += len(bt.evs)
	}
	return n
}

// TestRC8_AFullTapBufferIsAddedByTheTapInOrder: a tap's buffer holds
// batches whose slices take at most tapBufBytes (a batch into an empty
// one excepted); a batch that does not fit is added to the
// window by the tap itself, after the changes the buffer held, so that
// the window has every change in the order it came.
func TestRC8_AFullTapBufferIsAddedByTheTapInOrder(t *testing.T) {
	kick := make(chan struct{}, 1)
	rec, s := liveSink(t, kick)
	kind := resource.KindOf(wsKind)
	const batch = 1000
	rev := uint64(1)
	next := func() []state.Event {
		ids := make([]string, batch)
		for i := range ids {
			ids[i] = fmt.Sprint("r", rev+uint64(i))
		}
		evs := created(rev, ids...)
		rev += batch
		return evs
	}
	const bufLen = tapBufBytes / tapEventBytes
	for range bufLen / batch {
		evs := next()
		_, kept := s.ChangesKept(kind, evs[:len(evs):len(evs)])
		require.True(t, kept)
	}
	require.Equal(t, bufLen/batch*batch, buffered(s.buf), "buffered")
	room := bufLen - bufLen/batch*batch
	_, kept := s.buf.keep(make([]state.Event, 1, room+1), 0)
	assert.False(t, kept, "a batch whose slice's room takes the buffer past tapBufBytes is refused")
	assert.False(t, s.buf.put(make([]state.Event, room+1), 0), "a batch past tapBufBytes is refused")
	s.Changes(kind, next()) // does not fit: the tap adds the buffer, then it
	assert.Zero(t, buffered(s.buf), "the tap added the buffer's changes")

	rec.mu.Lock()
	v := rec.win.view(nil, time.Now())
	rec.mu.Unlock()
	require.Len(t, v.entries, int(rev-1))
	for i, e := range v.entries {
		require.Equal(t, uint64(i+1), e.rev, "change %d in order", i)
	}
	assert.True(t, (&tapBuf{}).put(make([]state.Event, 2*bufLen), 0), "a batch always goes into an empty buffer")
}

// TestRC10_AnAttachedTapGoesLiveOnceEachKindIsHandedOver: a tap set
// before the Runtime ran adds its changes under the recorder's lock
// until its kind is handed over and it brought a change newer than any
// of the own watch's (the older ones dropped: no change twice); from
// then on a batch waits for no lock of the recorder's, and the window
// has every change once, in order.
func TestRC10_AnAttachedTapGoesLiveOnceEachKindIsHandedOver(t *testing.T) {
	kick := make(chan struct{}, 1)
	rec, err := New(inmem.NewState(), codec.NewRegistry(), WithKinds(wsKind))
	require.NoError(t, err)
	kind := resource.KindOf(wsKind)
	s := newTapSink(rec)
	h := &handover{}
	s.handovers = map[resource.KindKey]*handover{kind: h}
	s.buf = &tapBuf{kick: kick}
	rec.mu.Lock()
	s.resolveLocked([]resource.KindKey{kind})
	rec.win.reset(listingAt(0))
	rec.ready, rec.src = true, &source{tap: s}
	s.liveLocked(&startState{kindRev: map[resource.KindKey]uint64{kind: 0}})
	rec.mu.Unlock()

	s.Listed(kind, nil, 2) // the Runtime listed at 2
	rec.mu.Lock()
	s.ownLocked(h, created(1, "a", "b", "c"), s.start) // 3 > 2: handed over
	rec.mu.Unlock()
	assert.False(t, s.live.Load(), "live before the tap brought a change newer than the own watch's")
	s.Changes(kind, created(3, "c", "d")) // c dropped, d added under the lock
	require.True(t, s.live.Load(), "live once the tap passed the own watch")

	rec.mu.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Changes(kind, created(5, "e"))
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		rec.mu.Unlock()
		<-done
		t.Fatal("the handed-over tap waited for the recorder's lock")
	}
	<-kick
	rec.mu.Unlock()
	ids := make([]string, tapBufBytes/tapEventBytes)
	for i := range ids {
		ids[i] = fmt.Sprint("r", i)
	}
	s.Changes(kind, created(6, ids...)) // does not fit: added by the tap, after e
	assert.Zero(t, buffered(s.buf), "the tap added the buffer's changes before its own")
	require.NoError(t, rec.drain())

	rec.mu.Lock()
	v := rec.win.view(nil, time.Now())
	rec.mu.Unlock()
	require.Len(t, v.entries, 5+len(ids))
	for i, e := range v.entries {
		assert.Equal(t, uint64(i+1), e.rev, "change %d once, in order", i)
	}
}

// TestRC8_ALiveTapKeepsABatchsSliceAndGivesItBackEmptied: a live tap
// keeps the slice of a batch the Runtime's watch hands over (no copy),
// and once the session added it to the window gives it back emptied (no
// resource kept) for a later batch: a watch allocates nothing for its
// batches while the tap keeps them.
func TestRC8_ALiveTapKeepsABatchsSliceAndGivesItBackEmptied(t *testing.T) {
	kick := make(chan struct{}, 1)
	rec, s := liveSink(t, kick)
	kind := resource.KindOf(wsKind)
	first := created(1, "a", "b")
	spare, kept := s.ChangesKept(kind, first)
	require.True(t, kept)
	assert.Empty(t, spare)
	assert.Equal(t, len(first), cap(spare), "no emptied slice yet: a new one with room for as many changes")
	s.buf.mu.Lock()
	same := &s.buf.batches[0].evs[0] == &first[0]
	s.buf.mu.Unlock()
	assert.True(t, same, "the buffer holds the batch's own slice, not a copy")
	<-kick
	require.NoError(t, rec.drain())
	for _, ev := range first {
		assert.Nil(t, ev.Resource, "the buffer keeps no resource once it added the batch")
	}

	spare, kept = s.ChangesKept(kind, created(3, "c"))
	require.True(t, kept)
	require.Empty(t, spare)
	require.Equal(t, cap(first), cap(spare))
	assert.True(t, &spare[:1][0] == &first[0], "the first batch's slice comes back for a later batch")
	require.NoError(t, rec.drain())

	rec.mu.Lock()
	v := rec.win.view(nil, time.Now())
	rec.mu.Unlock()
	require.Len(t, v.entries, 3)
	for i, e := range v.entries {
		assert.Equal(t, uint64(i+1), e.rev, "change %d once, in order", i)
	}
}
