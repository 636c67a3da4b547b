// Package telemetry is where the engine's parts report what they do, for
// the engine's metrics: one [Controller] sink per controller and one [Kind]
// sink per watched kind. The parts call a sink at each step of their work —
// a change routed, a wake-up or an item queued, a pass or an item started
// and ended with its outcome, a crash, a restart, a write committed, a
// watch failed — and never ask whether metrics are on: a nil sink (metrics
// off) makes every method return at once, and the methods that only count
// are small enough to inline, so an instrumented step costs what an
// uninstrumented counter did.
//
// This is the one seam of the engine's observability: every event a trace
// or a histogram needs passes through these methods with the data it needs
// (the routed changes and their metadata, the queued items, the outcome's
// decision and message, the delays), so that more instruments — latency
// histograms, a causal trace, hot-loop detection — are added here, inside
// the sinks, without touching the router, the runners or the adapter. What
// each call means, and on which goroutine it comes, is documented on it;
// no method is called with an engine lock held, and none may block.
package telemetry

import (
	"sync/atomic"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
)

// Clock is an engine's monotonic clock: durations since the engine was
// built, cheap to read and to store in an atomic.
type Clock struct{ epoch time.Time }

// NewClock returns a clock starting now.
func NewClock() *Clock { return &Clock{epoch: time.Now()} }

// Now returns the time since the clock started.
func (c *Clock) Now() time.Duration { return time.Since(c.epoch) }

// Counters are a controller's counters (see runtime.ControllerStatus for
// what each counts).
type Counters struct {
	Reconciles, Crashes, Restarts, WakeUps, Requeues uint64
	Busy                                             time.Duration
}

// Controller is the sink of one controller. A nil *Controller is metrics
// off: every method does nothing.
type Controller struct {
	clock      *Clock
	reconciles atomic.Uint64
	crashes    atomic.Uint64
	restarts   atomic.Uint64
	wakeUps    atomic.Uint64
	requeues   atomic.Uint64
	busy       atomic.Int64 // nanoseconds
	// lastCall is Clock.Now() at the end of the controller's last runtime
	// call (see CallEnded).
	lastCall atomic.Int64
	// prevDelivery is when a Controller took its previous ReconcileEvent
	// (-1: none since its Run started); owned by the goroutine that
	// delivers its events (one Run's forwarder at a time).
	prevDelivery time.Duration
}

// NewController returns the sink of one controller, timed by clock.
func NewController(clock *Clock) *Controller { return &Controller{clock: clock, prevDelivery: -1} }

// Woken: the router woke a Controller for a change of one of its inputs
// (several wake-ups coalesce into one ReconcileEvent). Called on the kind
// watch's goroutine, once per routed batch that concerns the controller,
// right after the kind's [Kind.Routed] for that batch.
func (c *Controller) Woken() {
	if c != nil {
		c.wakeUps.Add(1)
	}
}

// Queued: the router queued items for a QController (a reconcile item per
// changed primary input, a map item per changed mapped input), for the
// batch its kind's [Kind.Routed] reported just before, on the same
// goroutine. items is the router's scratch storage: read it, never keep
// it.
func (c *Controller) Queued(items []work.Item) {
	if c != nil {
		c.wakeUps.Add(uint64(len(items)))
	}
}

// RunStarted: a Controller's Run starts (or restarts); its start event is
// pending.
func (c *Controller) RunStarted() {
	if c != nil {
		c.prevDelivery = -1
	}
}

// EventTaken: a Controller took a ReconcileEvent from EventCh — a pass
// starts. waited tells whether the event had to wait for it (it was busy
// when the event became pending). Called by the goroutine that delivers
// its events. It ends the busy time of the previous pass: until now when
// the event waited (the controller was busy until it came back for it),
// otherwise until the end of the last runtime call it made (the pass's last
// step before it went back to wait).
func (c *Controller) EventTaken(waited bool) {
	if c == nil {
		return
	}
	now := c.clock.Now()
	if prev := c.prevDelivery; prev >= 0 {
		var busy time.Duration
		if waited {
			busy = now - prev
		} else if last := time.Duration(c.lastCall.Load()); last > prev {
			busy = last - prev
		}
		c.busy.Add(int64(busy))
	}
	c.prevDelivery = now
	c.reconciles.Add(1)
}

// Op names a runtime call of a controller (the reads and writes of
// controller.Reader and controller.Writer, and CleanupOutputs).
type Op string

// Runtime calls.
const (
	OpGet                 Op = "get"
	OpList                Op = "list"
	OpContextWithTeardown Op = "contextWithTeardown"
	OpCreate              Op = "create"
	OpUpdate              Op = "update"
	OpModify              Op = "modify"
	OpTeardown            Op = "teardown"
	OpDestroy             Op = "destroy"
	OpAddFinalizer        Op = "addFinalizer"
	OpRemoveFinalizer     Op = "removeFinalizer"
	OpCleanupOutputs      Op = "cleanupOutputs"
)

// CallEnded: a runtime call of the controller ended — op on target (a
// pointer, or a kind for List and CleanupOutputs) with err (nil when it
// succeeded). A write that succeeded committed: after a create, an update
// or a modify, target is the written resource's metadata with the
// committed version. Called on the controller's goroutine once the state
// returned. The end of a Controller's last call before it waits again ends
// the busy time of its pass (see [Controller.EventTaken]).
func (c *Controller) CallEnded(op Op, target resource.Kind, err error) {
	if c != nil {
		c.lastCall.Store(int64(c.clock.Now()))
	}
}

// Stamp is when an item started, on the engine's clock (zero with metrics
// off).
type Stamp time.Duration

// ItemStarted: a QController worker took item from the queue and is about
// to call Reconcile or MapInput. Called on the worker's goroutine; the
// stamp goes back to [Controller.ItemEnded].
func (c *Controller) ItemStarted(item work.Item) Stamp {
	if c == nil {
		return 0
	}
	return Stamp(c.clock.Now())
}

// ItemEnded: the item's call ended with o, decided as d; the queue made the
// item due again after delay (for d.Action Retry or Requeue). Called on the
// worker's goroutine, after the queue took the result.
func (c *Controller) ItemEnded(item work.Item, start Stamp, o outcome.Outcome, d outcome.Decision, delay time.Duration) {
	if c == nil {
		return
	}
	c.busy.Add(int64(c.clock.Now() - time.Duration(start)))
	c.reconciles.Add(1)
	if d.Action != outcome.Done {
		c.requeues.Add(1)
	}
	if d.Crash {
		c.crashes.Add(1)
	}
}

// Crashed: a Controller's Run ended with o (a failure or a panic), decided
// as d; it restarts after delay. Called on the controller's run goroutine.
func (c *Controller) Crashed(o outcome.Outcome, d outcome.Decision, delay time.Duration) {
	if c != nil && d.Crash {
		c.crashes.Add(1)
	}
}

// Restarted: a Controller's Run starts again after its restart backoff.
func (c *Controller) Restarted() {
	if c != nil {
		c.restarts.Add(1)
	}
}

// Counters returns the controller's counters (zero with metrics off).
func (c *Controller) Counters() Counters {
	if c == nil {
		return Counters{}
	}
	return Counters{
		Reconciles: c.reconciles.Load(),
		Crashes:    c.crashes.Load(),
		Restarts:   c.restarts.Load(),
		WakeUps:    c.wakeUps.Load(),
		Requeues:   c.requeues.Load(),
		Busy:       time.Duration(c.busy.Load()),
	}
}

// Kind is the sink of one watched kind. A nil *Kind is metrics off.
type Kind struct {
	eventsRouted atomic.Uint64
	relists      atomic.Uint64
}

// NewKind returns the sink of one kind.
func NewKind() *Kind { return &Kind{} }

// Routed: the kind's watch routed a batch of changes (Created, Updated or
// Destroyed events; metas[i] is events[i]'s metadata, read once) to the
// kind's subscriptions; bootstrap marks the contents of the kind's first
// bootstrap (existing resources, routed to QControllers only). Called on
// the watch's goroutine, before the per-controller calls ([Controller.Woken],
// [Controller.Queued]) for the batch. events and metas are reused storage:
// read them, never keep them.
func (k *Kind) Routed(events []state.Event, metas []*resource.Metadata, bootstrap bool) {
	if k != nil {
		k.eventsRouted.Add(uint64(len(events)))
	}
}

// WatchFailed: the kind's watch failed with msg and is re-established with
// a re-list after retryIn.
func (k *Kind) WatchFailed(msg string, retryIn time.Duration) {
	if k != nil {
		k.relists.Add(1)
	}
}

// EventsRouted returns how many changes the kind's watch routed.
func (k *Kind) EventsRouted() uint64 {
	if k == nil {
		return 0
	}
	return k.eventsRouted.Load()
}

// Relists returns how many times the kind's watch failed and re-listed.
func (k *Kind) Relists() uint64 {
	if k == nil {
		return 0
	}
	return k.relists.Load()
}
