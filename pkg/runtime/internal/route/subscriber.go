package route

import (
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/internal/processed"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
)

// Subscriber is a controller as the router sees it: where to deliver a
// change. Exactly one of Wake and Queue is set.
type Subscriber struct {
	// Wake is a Controller's coalescing wake-up.
	Wake *Wake
	// Queue is a QController's work queue, whose entries note the items'
	// pending work for the telemetry.
	Queue *queue.Queue[work.Item, telemetry.Pending]
	// Last is, for a QController, the last versions its map items need
	// (rule Q4; see work.LastSeen).
	Last *work.LastSeen
	// Telemetry is the controller's sink (nil with metrics off).
	Telemetry *telemetry.Controller
	// Floor is the revision the controller's reads must reach, raised
	// before it is woken or its items queued (nil: not tracked).
	Floor *cache.Floor
	// Changes is, for a Controller, its change log (nil: none kept): the
	// IDs of the changes that woke it, logged after Floor is raised and
	// before Wake is sent.
	Changes *changelog.Log
	// Processed is, for a QController that says so (see
	// processed.Source), whether a primary input as it is now was already
	// reconciled: an update to such a version is not queued (rule Q1,
	// extended). Nil: every change is queued.
	Processed processed.Func
}

// Wake is a Controller's coalescing wake-up: a channel of capacity one
// written with a non-blocking send, so that wake-ups that arrive while one
// is pending coalesce into it, and a count of the wake-ups sent, which
// the Runtime's activity report compares with those the controller's events covered.
type Wake struct {
	ch chan struct{}
	// sent counts the wake-ups in the channel or taken from it: it is
	// incremented before the send and taken back when the channel is full,
	// so that a wake-up is never in the channel without being counted.
	sent atomic.Uint64
}

// NewWake returns a wake-up with nothing pending.
func NewWake() *Wake { return &Wake{ch: make(chan struct{}, 1)} }

// Send sends the wake-up; it never blocks.
func (w *Wake) Send() {
	if len(w.ch) != 0 {
		// A wake-up is pending: it covers this one (the controller reads
		// the state after taking it), as a failed send would.
		return
	}
	w.sent.Add(1)
	select {
	case w.ch <- struct{}{}:
	default:
		w.sent.Add(^uint64(0))
	}
}

// C is the channel the wake-ups are taken from.
func (w *Wake) C() <-chan struct{} { return w.ch }

// Sent returns how many wake-ups were sent (see the field's doc).
func (w *Wake) Sent() uint64 { return w.sent.Load() }
