package recording

import (
	"sync"
	"time"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/state"
)

// tapBufBytes bounds a tap's buffer (rule RC8): the bytes of its batches'
// slices (their capacity, tapEventBytes a change), and as much again in
// the emptied slices it keeps for the Runtime's watches. A batch that
// would take it past that is added to the window by the Runtime's watch
// goroutine itself, after the buffer.
const tapBufBytes = 2 << 20

// tapEventBytes is the size of a change in a batch's slice.
const tapEventBytes = int(unsafe.Sizeof(state.Event{}))

// tapSpareMax is the largest emptied slice a tap's buffer keeps for the
// Runtime's watches (they keep none larger for their next batches).
const tapSpareMax = 1024

// tapBuf holds the batches of changes of the Runtime's watches that a tap
// handed over and the session has not added to its window yet (rule
// RC8), each with its time of arrival: a batch's own slice, kept
// (runtime.KeepingChangeTap), or a copy of it. Its own lock is held only
// to append a batch or to take them all; the first batch into an empty
// buffer wakes the session (kick). It is bounded (tapBufBytes) and reused:
// the slices it emptied go back to the watches, which then allocate
// none for their batches.
type tapBuf struct {
	mu      sync.Mutex
	batches []tapBatch
	// held is the bytes of the batches' slices.
	held int
	kick chan<- struct{}
	// spares are emptied slices for the next batches (spareBytes their
	// bytes, at most tapBufBytes); spareBatches the list of batches last
	// taken, for the next.
	spares       [][]state.Event
	spareBytes   int
	spareBatches []tapBatch
}

// tapBatch is a batch of a tapBuf: its changes, which came at at (Unix
// nanoseconds).
type tapBatch struct {
	evs []state.Event
	at  int64
}

// keep appends a batch of one kind's changes that came at at, keeping its
// slice, and returns an emptied slice for the next (a new one with room
// for as many changes when it has none: the watch then grows none); false
// when it would take the buffer past tapBufBytes (a batch always goes
// into an empty buffer).
func (b *tapBuf) keep(evs []state.Event, at int64) (spare []state.Event, ok bool) {
	b.mu.Lock()
	if !b.fitsLocked(cap(evs)) {
		b.mu.Unlock()
		return nil, false
	}
	spare = b.spareLocked()
	first := b.appendLocked(evs, at)
	b.mu.Unlock()
	b.wake(first)
	if spare == nil {
		spare = make([]state.Event, 0, min(len(evs), tapSpareMax))
	}
	return spare, true
}

// put is keep of a copy of evs (whose slice the caller keeps).
func (b *tapBuf) put(evs []state.Event, at int64) bool {
	b.mu.Lock()
	if !b.fitsLocked(len(evs)) {
		b.mu.Unlock()
		return false
	}
	first := b.appendLocked(append(b.spareLocked(), evs...), at)
	b.mu.Unlock()
	b.wake(first)
	return true
}

// fitsLocked reports whether a batch of n changes' room fits; b.mu is
// held.
func (b *tapBuf) fitsLocked(n int) bool { return b.held == 0 || b.held+n*tapEventBytes <= tapBufBytes }

// appendLocked appends the batch evs and reports whether it is the first
// in the buffer; b.mu is held.
func (b *tapBuf) appendLocked(evs []state.Event, at int64) (first bool) {
	first = len(b.batches) == 0
	b.batches = append(b.batches, tapBatch{evs: evs, at: at})
	b.held += cap(evs) * tapEventBytes
	return first
}

// spareLocked takes an emptied slice (nil when there is none); b.mu is
// held.
func (b *tapBuf) spareLocked() []state.Event {
	n := len(b.spares)
	if n == 0 {
		return nil
	}
	s := b.spares[n-1]
	b.spares[n-1] = nil
	b.spares = b.spares[:n-1]
	b.spareBytes -= cap(s) * tapEventBytes
	return s
}

// wake wakes the session when a batch went into an empty buffer.
func (b *tapBuf) wake(first bool) {
	if !first {
		return
	}
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// flushLocked adds the buffered changes to r's window, each batch at its
// time of arrival, in the order they came; r.mu is held (so that no
// change of a kind is added before one of the kind the buffer held).
func (b *tapBuf) flushLocked(r *Recorder) {
	if b == nil {
		return
	}
	b.mu.Lock()
	batches := b.batches
	b.batches, b.held = b.spareBatches[:0], 0
	b.mu.Unlock()
	for _, bt := range batches {
		r.addEventsLocked(bt.evs, time.Unix(0, bt.at))
	}
	if len(batches) > 0 {
		r.progressedLocked()
	}
	for _, bt := range batches {
		clear(bt.evs) // the buffer keeps no resource
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, bt := range batches {
		if c := cap(bt.evs); c <= tapSpareMax && b.spareBytes+c*tapEventBytes <= tapBufBytes {
			b.spares = append(b.spares, bt.evs[:0])
			b.spareBytes += c * tapEventBytes
		}
		batches[i] = tapBatch{}
	}
	b.spareBatches = batches[:0]
}
