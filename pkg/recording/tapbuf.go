package recording

import (
	"sync"
	"time"

	"github.com/resgraph/resgraph/pkg/state"
)

// tapBufLen is how many tapped changes a tap's buffer holds (rule RC8):
// a batch that would take it past that is added to the window by the
// Runtime's watch goroutine itself, after the buffer.
const tapBufLen = 4096

// tapBuf holds the changes of the Runtime's watches that a tap handed
// over and the session has not added to its window yet (rule RC8): a
// copy of each batch (the Runtime reuses its batches), with its time of
// arrival. Its own lock is held only to append a batch or to take them
// all; the first batch into an empty buffer wakes the session (kick). It
// is bounded (tapBufLen) and reused: no allocation once it has grown.
type tapBuf struct {
	mu      sync.Mutex
	evs     []state.Event
	batches []tapBatch
	kick    chan<- struct{}
	// spare are the slices last taken, kept for the next (their
	// takers', under the recorder's lock).
	spareEvs     []state.Event
	spareBatches []tapBatch
}

// tapBatch is a batch of a tapBuf: its changes end at to, and came at
// at (Unix nanoseconds).
type tapBatch struct {
	at int64
	to int
}

// put appends a batch of one kind's changes that came at at; false when
// it would take the buffer past tapBufLen (a batch always goes into an
// empty buffer).
func (b *tapBuf) put(evs []state.Event, at int64) bool {
	b.mu.Lock()
	n := len(b.evs)
	if n > 0 && n+len(evs) > tapBufLen {
		b.mu.Unlock()
		return false
	}
	b.evs = append(b.evs, evs...)
	b.batches = append(b.batches, tapBatch{at: at, to: len(b.evs)})
	b.mu.Unlock()
	if n == 0 {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
	return true
}

// flushLocked adds the buffered changes to r's window, each batch at its
// time of arrival, in the order they came; r.mu is held (so that no
// change of a kind is added before one of the kind the buffer held).
func (b *tapBuf) flushLocked(r *Recorder) {
	if b == nil {
		return
	}
	b.mu.Lock()
	evs, batches := b.evs, b.batches
	b.evs, b.batches = b.spareEvs[:0], b.spareBatches[:0]
	b.mu.Unlock()
	from := 0
	for _, bt := range batches {
		r.addEventsLocked(evs[from:bt.to], time.Unix(0, bt.at))
		from = bt.to
	}
	if len(batches) > 0 {
		r.progressedLocked()
	}
	clear(evs) // the buffer keeps no resource
	b.spareEvs, b.spareBatches = evs[:0], batches[:0]
}
