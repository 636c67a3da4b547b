// Package telemetry is where the Runtime's parts report what they do, for
// the Runtime's metrics, latency histograms and causal trace: one
// [Controller] sink per controller and one [Kind] sink per watched kind,
// sharing an [Engine] (clock, trace ring, metrics on). The parts call a
// sink at each step of their work — a change routed, a wake-up or an item
// queued, a pass or an item started and ended with its outcome, a crash, a
// restart, a write committed, a watch failed — and never ask what is on: a
// nil sink (metrics and trace off) makes every method return at once.
//
// This is the one seam of the Runtime's observability: every event a trace
// or a histogram needs passes through these methods with the data it needs
// (the routed changes and their metadata, the queued items, the outcome's
// decision and message, the delays). Recording allocates nothing: the
// histograms are arrays of atomics, trace records are written into the ring,
// and what a reconcile waits with (its cause, its due time, the oldest
// commit behind it, a [Pending]) is kept per Controller in its sink, and
// per QController item in the item's own queue entry (the queue's note),
// so it lives exactly as long as the item is queued. What each call means,
// and on which goroutine it comes, is documented on it; no method is called
// with a Runtime lock held, and none may block.
package telemetry

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/resgraph/resgraph/pkg/observe/histogram"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/runtime/internal/busy"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
)

// Clock is a Runtime's monotonic clock: durations since the Runtime was
// built, cheap to read and to store in an atomic.
type Clock struct{ epoch time.Time }

// NewClock returns a clock starting now.
func NewClock() *Clock { return &Clock{epoch: time.Now()} }

// Now returns the time since the clock started.
func (c *Clock) Now() time.Duration { return time.Since(c.epoch) }

// at returns the reading of the clock at the batch's routing time (now
// for a nil batch).
func (c *Clock) at(b *Batch) time.Duration {
	if b == nil {
		return c.Now()
	}
	return b.time().Sub(c.epoch)
}

// Batch is the time of one routed batch of changes: read from the system
// clock at most once, by the first sink that needs it, and shared by the
// kind's and every controller's accounting of the batch (the per-change,
// per-controller calls [Kind.Routed], [Controller.Woken] and
// [Controller.Queued] would otherwise each read the clock). [Kind.Routed]
// also tells it whether it is the kind's first listing and, otherwise,
// when that listing was routed: a change's lag counts from its commit or,
// when later, from then — the Runtime could not see it before. A batch is
// used by the one goroutine that routes it; its zero value is ready to
// use, and a nil *Batch reads the clock at every call.
type Batch struct {
	now time.Time
	// listed is when the kind's first listing was routed (zero: unknown);
	// listing marks the batch of that listing itself.
	listed  time.Time
	listing bool
}

// origin returns when the lag of the change md of the batch starts (zero:
// unknown) and whether it is startup work (md was listed by the kind's
// first listing: its origin is the listing's time).
func (b *Batch) origin(md *resource.Metadata) (time.Time, bool) {
	if b != nil && b.listing {
		return b.time(), true
	}
	at := md.Updated()
	if b != nil && !at.IsZero() && at.Before(b.listed) {
		at = b.listed
	}
	return at, false
}

// time returns the batch's time, read on first use.
func (b *Batch) time() time.Time {
	if b == nil {
		return time.Now()
	}
	if b.now.IsZero() {
		b.now = time.Now()
	}
	return b.now
}

// Counters are a controller's counters (see observe.ControllerMetrics for
// what each counts).
type Counters struct {
	Reconciles, Crashes, Restarts, WakeUps, Requeues uint64
	Busy                                             time.Duration
}

// Controller is the sink of one controller. A nil *Controller is metrics
// and trace off: every method does nothing.
type Controller struct {
	eng        *Engine
	name       string
	reconciles atomic.Uint64
	crashes    atomic.Uint64
	restarts   atomic.Uint64
	wakeUps    atomic.Uint64
	requeues   atomic.Uint64
	busy       atomic.Int64 // nanoseconds
	// lastCall is Clock.Now() at the end of the controller's last runtime
	// call (see CallEnded), for a Controller's busy time (EventTaken);
	// items is set for a QController's sink (NewQController), whose busy
	// time is its items' (ItemEnded): its calls neither read the clock for
	// lastCall nor write it, which its workers would share.
	lastCall atomic.Int64
	items    bool
	// prevDelivery is when a Controller took its previous ReconcileEvent
	// (-1: none since its Run started); owned by the goroutine that
	// delivers its events (one Run's forwarder at a time).
	prevDelivery time.Duration
	lat          latencies
	meter        *busy.Meter
	// hotLoop describes the flagged hot loop the controller is part of
	// ("" when none); hotLoops counts the loops flagged with it.
	hotLoop  atomic.Pointer[string]
	hotLoops atomic.Uint64
	// writes counts its commits by kind (see Writes).
	writes writeCounts

	mu sync.Mutex
	// pass is the work pending for a Controller's next pass, and open,
	// openAt and early the state of its current pass (see PassEnded).
	// Protected by mu.
	pass   Pending
	open   bool
	openAt time.Duration
	early  struct {
		set    bool
		at     time.Duration
		failed bool
	}
}

// NewController returns the sink of the controller name (running workers
// workers at once: a QController's concurrency, 1 for a Controller) of the
// Runtime eng, or nil when eng keeps neither metrics nor a trace.
func NewController(eng *Engine, name string, workers int) *Controller {
	if eng.Off() {
		return nil
	}
	return &Controller{eng: eng, name: name, prevDelivery: -1, meter: busy.New(workers, 0)}
}

// NewQController is [NewController] for a QController (running workers
// workers at once): its busy time is its items' ([Controller.ItemEnded]),
// so the end of a runtime call is not kept for it, and a read (Get, List)
// does not read the clock.
func NewQController(eng *Engine, name string, workers int) *Controller {
	c := NewController(eng, name, workers)
	if c != nil {
		c.items = true
	}
	return c
}

// callDone keeps now as the end of the controller's last runtime call,
// for a Controller's busy time (see EventTaken).
func (c *Controller) callDone(now time.Duration) {
	if !c.items {
		c.lastCall.Store(int64(now))
	}
}

// Now returns the Runtime clock's reading at b's time (now for a nil
// batch), for the [Pending] notes of the items the controller's queue
// takes; 0 for a nil sink.
func (c *Controller) Now(b *Batch) time.Duration {
	if c == nil {
		return 0
	}
	return c.eng.Clock.at(b)
}

// Woken: the router woke a Controller for the change t of the resource
// md (the first change of a routed batch that concerns it; several
// wake-ups coalesce into one ReconcileEvent), routed at b's time. Called
// on the kind watch's goroutine, right after the kind's [Kind.Routed] for
// that batch; md is read, never kept.
func (c *Controller) Woken(t state.EventType, md *resource.Metadata, b *Batch) {
	if c == nil {
		return
	}
	c.wakeUps.Add(1)
	now := c.eng.Clock.at(b)
	c.mu.Lock()
	c.pass.change(t, md, now, b)
	c.mu.Unlock()
	c.route(t, md, now, b)
}

// Queued: the router queued an item for a QController for the change t
// of the resource md (a reconcile item for a primary input, a map item for
// a mapped one), routed at b's time, after its kind's [Kind.Routed] for
// the batch, on the same goroutine; md is read, never kept. The item's
// pending work is noted in its queue entry ([Pending.Queued]).
func (c *Controller) Queued(t state.EventType, md *resource.Metadata, b *Batch) {
	if c == nil {
		return
	}
	c.wakeUps.Add(1)
	c.route(t, md, c.eng.Clock.at(b), b)
}

// route traces the routing of a change of batch b to the controller: a
// resource of the kind's first listing as "existing", with no delivery
// lag.
func (c *Controller) route(t state.EventType, md *resource.Metadata, now time.Duration, b *Batch) {
	if c.eng.Ring == nil {
		return
	}
	wall := c.eng.Clock.Time(now)
	var lag time.Duration
	op := opName(t)
	if t != state.Destroyed {
		switch at, listed := b.origin(md); {
		case listed:
			op = opExisting
		case !at.IsZero():
			lag = max(wall.Sub(at), 0)
		}
	}
	// Written in place (one event per controller per change: the
	// trace's most frequent).
	c.eng.Ring.Put(&trace.Head{Type: trace.Route, Time: wall, Controller: c.name, Op: op, Resource: refOf(md), Duration: lag}, nil)
}

// RunStarted: a Controller's Run starts (or restarts); its start event is
// pending.
func (c *Controller) RunStarted() {
	if c == nil {
		return
	}
	c.prevDelivery = -1
	now := c.eng.Clock.Now()
	c.mu.Lock()
	c.pass.dueAt(now)
	c.pass.origin(unixNano(c.eng.Clock.Time(now)), true)
	c.open, c.early.set = false, false
	c.mu.Unlock()
}

// EventTaken: a Controller took a ReconcileEvent from EventCh — a pass
// starts. waited tells whether the event had to wait for it (it was busy
// when the event became pending). Called by the goroutine that delivers
// its events, after the send. It ends the busy time of the previous pass:
// until now when the event waited (the controller was busy until it came
// back for it), otherwise until the end of the last runtime call it made
// (the pass's last step before it went back to wait).
func (c *Controller) EventTaken(waited bool) {
	if c == nil {
		return
	}
	now := c.eng.Clock.Now()
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

	c.mu.Lock()
	p := c.pass
	c.pass = Pending{}
	early := c.early
	c.early.set = false
	c.open, c.openAt = !early.set, now
	c.mu.Unlock()
	c.started(&p, trace.Ref{}, "", 0, now)
	if early.set {
		// The pass ended before its start was accounted (see PassEnded).
		c.ended(trace.Ref{}, "", 0, outcomeOf(early.failed), "", now)
	}
}

// PassEnded: a Controller came back to EventCh after a pass (failed: it
// reported a failure in it). Called on the controller's goroutine. The
// pass's start may not be accounted yet (the forwarder accounts it right
// after the send): its end is then kept for [Controller.EventTaken].
func (c *Controller) PassEnded(failed bool) {
	if c == nil {
		return
	}
	now := c.eng.Clock.Now()
	c.mu.Lock()
	open, at := c.open, c.openAt
	c.open = false
	if !open {
		c.early.set, c.early.at, c.early.failed = true, now, failed
	}
	c.mu.Unlock()
	if open {
		c.ended(trace.Ref{}, "", now-at, outcomeOf(failed), "", now)
	}
}

func outcomeOf(failed bool) trace.Outcome {
	if failed {
		return trace.OutcomeError
	}
	return trace.OutcomeOK
}

// started accounts a reconcile's start: its queue wait and end-to-end lag
// (or startup time) from p, and its trace record.
func (c *Controller) started(p *Pending, item trace.Ref, op string, worker uint32, now time.Duration) {
	wall := c.eng.Clock.Time(now)
	var wait time.Duration
	if p.set {
		wait = max(now-p.due, 0)
		if c.eng.Metrics {
			c.lat.queueWait.Observe(wait)
			switch since := time.Duration(wall.UnixNano() - p.commit); {
			case p.commit == 0:
			case p.startup:
				c.lat.startup.Observe(since)
			default:
				c.lat.lag.Observe(since)
			}
		}
	}
	h := trace.Head{Type: trace.ReconcileStart, Time: wall, Worker: worker, Controller: c.name, Op: op, Resource: item, Duration: wait, Causes: p.causes}
	if cause := p.cause.ref(); !cause.IsZero() {
		c.eng.Ring.Put(&h, func(ev *trace.Record) { ev.Cause = cause })
		return
	}
	c.eng.Ring.Put(&h, nil)
}

// ended accounts a reconcile's end after d with o (msg: the failure).
func (c *Controller) ended(item trace.Ref, op string, d time.Duration, o trace.Outcome, msg string, now time.Duration) {
	wall := c.eng.Clock.Time(now)
	if c.eng.Metrics {
		c.lat.duration[o].Observe(d)
		c.meter.Add(wall, d)
	}
	h := trace.Head{Type: trace.ReconcileEnd, Time: wall, Controller: c.name, Op: op, Resource: item, Duration: d, Outcome: o}
	if msg != "" {
		c.eng.Ring.Put(&h, func(ev *trace.Record) { ev.Error = msg })
		return
	}
	c.eng.Ring.Put(&h, nil)
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
// committed version (the writes whose target does not carry it end with
// [Controller.CallCommitted]). It is counted by kind (see
// [Controller.Writes]). Called on the controller's goroutine once the state
// returned. The end of a Controller's last call before it waits again ends
// the busy time of its pass (see [Controller.EventTaken]). A destroy
// refused for pending finalizers is traced as a finalizer wait.
func (c *Controller) CallEnded(op Op, target resource.Kind, err error) {
	c.callEnded(op, target, nil, 0, err)
}

// WriteEnded is [Controller.CallEnded] for a write made by worker (from
// 1) of a QController whose workers are numbered (several, or one and a
// RunHook), 0 otherwise (its RunHook's writes among them): its trace
// records name the worker (trace.Record.Worker).
func (c *Controller) WriteEnded(op Op, target resource.Kind, worker uint32, err error) {
	c.callEnded(op, target, nil, worker, err)
}

// CallCommitted is [Controller.CallEnded] for a write whose target does
// not carry the version it committed — a teardown, a destroy, a finalizer
// edit, given any pointer — which the state told apart: committed is the
// version it wrote, or for a destroy the version it destroyed. A teardown
// or a finalizer edit that succeeded with committed undefined wrote
// nothing (the resource was tearing down already, the finalizers were as
// asked): it is traced as a Noop event, never as a Commit (and counted
// with the writes, as [Controller.Writes] says). A destroy with committed
// undefined is traced with no version (the state could not tell). worker
// is as for [Controller.WriteEnded].
func (c *Controller) CallCommitted(op Op, target resource.Pointer, committed resource.Version, worker uint32, err error) {
	if c == nil {
		return
	}
	if err == nil && committed.Value() == 0 && op != OpDestroy {
		if c.eng.Metrics {
			if ref, ok := refOfTarget(target); ok {
				c.writes.add(kindOfTarget(target, ref))
			}
		}
		c.unchanged(op, target, 0, worker)
		return
	}
	v := committed.Value()
	c.callEnded(op, target, &v, worker, err)
}

// callEnded is CallEnded; version, when not nil, is the version to trace
// instead of the target's; worker is the QController worker of the write.
func (c *Controller) callEnded(op Op, target resource.Kind, version *uint64, worker uint32, err error) {
	if c == nil {
		return
	}
	if op == OpGet || op == OpList || op == OpContextWithTeardown || op == OpCleanupOutputs {
		if !c.items {
			c.callDone(c.eng.Clock.Now())
		}
		return
	}
	now := c.eng.Clock.Now()
	c.callDone(now)
	count := err == nil && c.eng.Metrics
	if !count && c.eng.Ring == nil {
		return
	}
	typ := trace.Commit
	var detail string
	if err != nil {
		if op != OpDestroy || !state.IsPendingFinalizersError(err) {
			return
		}
		typ, detail = trace.FinalizerWait, err.Error()
	}
	ref, ok := refOfTarget(target)
	if !ok {
		return
	}
	if version != nil && typ == trace.Commit {
		ref.Version = *version
	}
	if count {
		c.writes.add(kindOfTarget(target, ref))
	}
	if c.eng.Ring == nil {
		return
	}
	ref.Writer = c.name
	wall := c.eng.Clock.Time(now)
	h := trace.Head{Type: typ, Time: wall, Worker: worker, Controller: c.name, Op: string(op), Resource: ref}
	if detail == "" {
		c.eng.Ring.Put(&h, nil)
		return
	}
	c.eng.Ring.Put(&h, func(ev *trace.Record) { ev.Detail = detail })
}

// CallUnchanged: a write of the controller (op, a Modify) succeeded but
// left target, the resource as stored, equal: nothing was committed (rule
// S6). Traced as a Noop event, never as a Commit; otherwise as
// [Controller.CallEnded]. Called on the controller's goroutine once the
// state returned. worker is as for [Controller.WriteEnded].
func (c *Controller) CallUnchanged(op Op, target *resource.Metadata, worker uint32) {
	if c == nil {
		return
	}
	c.unchanged(op, target, target.Version().Value(), worker)
}

// unchanged traces a write of the controller that committed nothing, of
// target at version (0: unknown).
func (c *Controller) unchanged(op Op, target resource.Kind, version uint64, worker uint32) {
	now := c.eng.Clock.Now()
	c.callDone(now)
	if c.eng.Ring == nil {
		return
	}
	ref, ok := refOfTarget(target)
	if !ok {
		return
	}
	ref.Version = version
	wall := c.eng.Clock.Time(now)
	c.eng.Ring.Put(&trace.Head{Type: trace.Noop, Time: wall, Worker: worker, Controller: c.name, Op: string(op), Resource: ref}, nil)
}

// TeardownPending: a teardown by the controller left target tearing down
// with finalizers still on it (it cannot be destroyed yet). Called on the
// controller's goroutine. worker is as for [Controller.WriteEnded].
func (c *Controller) TeardownPending(target resource.Pointer, worker uint32) {
	if c == nil || c.eng.Ring == nil {
		return
	}
	ref, ok := refOfTarget(target)
	if !ok {
		return
	}
	ev := trace.Record{Type: trace.FinalizerWait, Controller: c.name, Op: string(OpTeardown), Resource: ref, Detail: "finalizers pending after teardown", Worker: worker}
	c.eng.add(&ev, time.Now())
}

// Stamp is an item's start: when, on the Runtime's clock, and the change
// that caused it (zero with metrics and trace off).
type Stamp struct {
	at      time.Duration
	cause   cause
	commit  int64 // Unix nanoseconds; 0: unknown
	startup bool
}

// ItemStarted: a QController worker took item from the queue, with its
// pending work p (the note of its queue entry), and is about to call
// Reconcile or MapInput. worker is the worker's number (from 1) when the
// QController's workers are numbered (several, or one and a RunHook), 0
// otherwise: its ReconcileStart record names
// it, as do those of the writes made in the call ([Controller.WriteEnded]).
// Called on the worker's goroutine; the stamp goes back to
// [Controller.ItemEnded].
func (c *Controller) ItemStarted(item work.Item, p *Pending, worker uint32) Stamp {
	if c == nil {
		return Stamp{}
	}
	now := c.eng.Clock.Now()
	c.started(p, refOfKey(item.Ptr), itemOp(item), worker, now)
	return Stamp{at: now, cause: p.cause, commit: p.commit, startup: p.startup}
}

// Mapped: the MapInput call of the item started at from returned items,
// about to be queued: they are caused by the map item's cause (traced as
// Queue events; their pending work is noted in their queue entries with
// [Pending.Mapped]). Called on the worker's goroutine, before the items
// are queued.
func (c *Controller) Mapped(from Stamp, items []work.Item) {
	if c == nil || c.eng.Ring == nil {
		return
	}
	wall := c.eng.Clock.Time(c.eng.Clock.Now())
	for _, it := range items {
		ev := trace.Record{Type: trace.Queue, Controller: c.name, Op: itemOp(it), Resource: refOfKey(it.Ptr), Cause: from.cause.ref(), Causes: 1}
		c.eng.add(&ev, wall)
	}
}

func itemOp(item work.Item) string {
	if item.Map {
		return "map"
	}
	return "reconcile"
}

// ItemEnded: the item's call ended at now (see [Controller.Now]) with o,
// decided as d; the queue made the item due again after delay (for
// d.Action Retry or Requeue; Park: the queue parked it, traced as
// such); attempts is its consecutive failed runs, this one included.
// Called on the worker's goroutine, after the queue took the result.
func (c *Controller) ItemEnded(item work.Item, start Stamp, now time.Duration, o outcome.Outcome, d outcome.Decision, delay time.Duration, attempts uint32) {
	if c == nil {
		return
	}
	took := now - start.at
	c.busy.Add(int64(took))
	c.reconciles.Add(1)
	if d.Action == outcome.Retry || d.Action == outcome.Requeue {
		c.requeues.Add(1)
	}
	if d.Crash {
		c.crashes.Add(1)
	}
	ref := refOfKey(item.Ptr)
	msg := ""
	if d.Failure {
		msg = o.Msg
	}
	c.ended(ref, itemOp(item), took, labelOutcome(d.Label), msg, now)
	if c.eng.Ring == nil || d.Action == outcome.Done {
		return
	}
	wall := c.eng.Clock.Time(now)
	ev := trace.Record{Type: trace.Requeue, Controller: c.name, Op: itemOp(item), Resource: ref, Due: wall.Add(delay), Error: msg, Attempt: attempts}
	switch {
	case d.Action == outcome.Park:
		ev.Type, ev.Due = trace.Parked, time.Time{}
	case d.Crash:
		ev.Type = trace.Crash
	case d.Action == outcome.Retry:
		ev.Type = trace.Backoff
	}
	c.eng.add(&ev, wall)
}

// labelOutcome is the trace outcome of a metric label.
func labelOutcome(l string) trace.Outcome {
	switch l {
	case outcome.LabelError:
		return trace.OutcomeError
	case outcome.LabelRequeue:
		return trace.OutcomeRequeue
	case outcome.LabelPanic:
		return trace.OutcomePanic
	}
	return trace.OutcomeOK
}

// Crashed: a Controller's Run ended with o (a failure or a panic), decided
// as d; it restarts after delay (attempt: its consecutive crashes), or,
// parked (d.Action Park: an access denial), when an input changes, traced
// as such. Called on the controller's run goroutine. A pass still open
// ends with the crash.
func (c *Controller) Crashed(o outcome.Outcome, d outcome.Decision, delay time.Duration, attempt int) {
	if c == nil {
		return
	}
	if d.Crash {
		c.crashes.Add(1)
	}
	now := c.eng.Clock.Now()
	c.mu.Lock()
	open, at := c.open, c.openAt
	c.open, c.early.set = false, false
	c.mu.Unlock()
	if open {
		c.ended(trace.Ref{}, "", now-at, labelOutcome(d.Label), o.Msg, now)
	}
	if c.eng.Ring != nil {
		wall := c.eng.Clock.Time(now)
		ev := trace.Record{Type: trace.Crash, Controller: c.name, Due: wall.Add(delay), Error: o.Msg, Attempt: uint32(attempt)}
		if d.Action == outcome.Park {
			ev.Type, ev.Due = trace.Parked, time.Time{}
		}
		c.eng.add(&ev, wall)
	}
}

// Restarted: a Controller's Run starts again after its restart backoff
// (attempt: its consecutive crashes).
func (c *Controller) Restarted(attempt int) {
	if c == nil {
		return
	}
	c.restarts.Add(1)
	if c.eng.Ring != nil {
		ev := trace.Record{Type: trace.Restart, Controller: c.name, Attempt: uint32(attempt)}
		c.eng.add(&ev, time.Now())
	}
}

// Counters returns the controller's counters (zero with metrics off).
func (c *Controller) Counters() Counters {
	if c == nil || !c.eng.Metrics {
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
	// lag is the delivery lag of its changes: commit (or the first
	// listing, when later) → routed.
	lag histogram.Histogram
	// listed is when the kind's first listing was routed; owned by the
	// watch's goroutine.
	listed time.Time
}

// NewKind returns the sink of one kind.
func NewKind() *Kind { return &Kind{} }

// Routed: the kind's watch routed a batch of changes (Created, Updated or
// Destroyed events; metas[i] is events[i]'s metadata, read once) to the
// kind's subscriptions at b's time; bootstrap marks the contents of the
// kind's first listing (existing resources, routed to QControllers only).
// It tells b whether it is that listing and, otherwise, when the listing
// was routed (see [Batch]). Called on the watch's goroutine, before the
// per-controller calls ([Controller.Woken], [Controller.Queued]) for the
// batch. events and metas are reused storage: read them, never keep them.
func (k *Kind) Routed(events []state.Event, metas []*resource.Metadata, bootstrap bool, b *Batch) {
	if k == nil {
		return
	}
	k.eventsRouted.Add(uint64(len(events)))
	if bootstrap {
		// Existing resources: not a delivery of their commit.
		if k.listed.IsZero() {
			k.listed = b.time()
		}
		if b != nil {
			b.listing = true
		}
		return
	}
	if b != nil {
		b.listed = k.listed
	}
	now := b.time()
	for i := range events {
		if events[i].Type == state.Destroyed {
			continue // no commit time: the metadata is the last version's
		}
		if u := metas[i].Updated(); !u.IsZero() {
			k.lag.Observe(now.Sub(later(u, k.listed)))
		}
	}
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// DeliveryLag returns the histogram of the kind's delivery lag: from the
// commit of a created or updated resource (or the kind's first listing,
// when later) to its routing (empty with metrics off).
func (k *Kind) DeliveryLag() histogram.Snapshot {
	if k == nil {
		return histogram.Snapshot{}
	}
	return k.lag.Snapshot()
}

// WatchFailed: the kind's watch failed with msg and is re-established with
// a re-list after retryIn.
func (k *Kind) WatchFailed(msg string, retryIn time.Duration) {
	if k != nil {
		k.relists.Add(1)
	}
}

// Relisted: the kind's watch was re-listed on request (Runtime.Relist);
// counted with the re-lists after failures.
func (k *Kind) Relisted() {
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

// Relists returns how many times the kind's watch re-listed: after a
// failure, or on request.
func (k *Kind) Relists() uint64 {
	if k == nil {
		return 0
	}
	return k.relists.Load()
}
