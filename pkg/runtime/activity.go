package runtime

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Activity is what an engine is doing at one instant: for every controller
// whether it has work it has not finished, and for every watched kind
// whether its watch is behind the state. See [Runtime.Activity] and
// [Runtime.WaitIdle].
type Activity struct {
	// Controllers are sorted by name.
	Controllers []ControllerActivity
	// Kinds are sorted by namespace and type.
	Kinds []KindActivity
}

// ControllerActivity is one controller's part of an [Activity].
type ControllerActivity struct {
	Name string
	Kind string // KindController or KindQController
	// Busy is set when the controller has work it has not finished: a
	// Controller that is starting, has a ReconcileEvent (or a wake-up)
	// not yet taken, or took one and has not come back to EventCh since;
	// a QController that is starting (Run has not started it yet, or it
	// is filling its queue) or has an item due or in flight. Before Run,
	// every controller is starting. A Controller waiting
	// out its restart backoff and a QController item waiting out its
	// backoff or requeue interval are not busy (they are not due).
	Busy bool
	// Why says what the controller is doing when busy, or what it waits
	// for (a restart, delayed items) when not.
	Why string
	// Due, InFlight and Delayed count a QController's queued items.
	Due, InFlight, Delayed int
	// NextDue is when the earliest delayed item (or a Controller's
	// restart) is due; zero when none is.
	NextDue time.Time
}

// KindActivity is one watched kind's part of an [Activity].
type KindActivity struct {
	Namespace resource.Namespace
	Type      resource.Type
	// Behind is set while the kind's watch has not routed every change
	// to the controllers: it has not bootstrapped yet, is being
	// re-established after a failure, is routing a batch, or (when Exact)
	// has routed up to an older change than the state's newest.
	Behind bool
	// Exact is set when the state reports the kind's newest change
	// ([state.KindHeadReporter]), so that Behind also covers changes the
	// state has committed but not yet delivered to the watch.
	Exact bool
	// Why says how the watch is behind.
	Why string
}

// Idle reports whether no controller is busy and no kind watch is behind.
func (a Activity) Idle() bool {
	for i := range a.Controllers {
		if a.Controllers[i].Busy {
			return false
		}
	}
	for i := range a.Kinds {
		if a.Kinds[i].Behind {
			return false
		}
	}
	return true
}

// String lists the busy controllers and the kinds whose watch is behind,
// one per line, or says that the engine is idle.
func (a Activity) String() string {
	var b strings.Builder
	for _, c := range a.Controllers {
		if c.Busy {
			fmt.Fprintf(&b, "controller %s: %s\n", c.Name, c.Why)
		}
	}
	for _, k := range a.Kinds {
		if k.Behind {
			fmt.Fprintf(&b, "watch of %s(%s): %s\n", k.Type, k.Namespace, k.Why)
		}
	}
	if b.Len() == 0 {
		return "idle"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Activity reports what the engine is doing now (see [Activity]). ctx
// bounds the calls to the state's [state.KindHeadReporter]. It is meant
// for tests and diagnostics: it takes locks and scans queues.
func (r *Runtime) Activity(ctx context.Context) Activity {
	kinds := r.kindActivity(ctx)
	return Activity{Controllers: r.controllerActivity(), Kinds: kinds.list}
}

// WaitIdle waits until the engine is idle and returns nil, or returns the
// last [Activity] it saw with ctx's error when ctx is done first. Idle
// means: every kind watch has routed every change (with a state that
// implements [state.KindHeadReporter], every change the state committed;
// otherwise every change the state delivered to the watch), no Controller
// is busy (see [ControllerActivity.Busy]) and no QController item is due
// or in flight — checked so that no work can move between the parts
// checked: the kinds are checked before and after the controllers and
// must not have routed anything in between. It waits for the engine's own
// notifications, never by polling.
//
// A Controller is seen idle from the moment it calls EventCh after taking
// its last ReconcileEvent, which a Run loop that selects on r.EventCh() in
// every iteration does before it waits again. A Controller that keeps the
// channel from one EventCh call is seen busy after its first event; one
// that hands its events to another goroutine is seen idle once the
// handing-over loop calls EventCh again, whether or not the other
// goroutine is done. A state whose whole-kind watches may coalesce changes
// into nothing (inmem does, for a resource created and destroyed while a
// watch that fell far behind catches up) leaves that kind seen behind until
// its next change.
//
// An engine whose Run has not started yet is not idle: its controllers
// are starting.
func (r *Runtime) WaitIdle(ctx context.Context) (Activity, error) {
	return r.WaitIdleExcept(ctx)
}

// WaitIdleExcept is [Runtime.WaitIdle] leaving out the controllers named:
// they count as idle whatever they do, and everything else must be idle
// as WaitIdle says. It is for a test that holds some controllers on
// purpose — a pass or a reconcile blocked until the test lets it go —
// while it waits for the rest of the engine (every change routed, the
// other controllers done); a held controller must not be doing anything
// but waiting, or the wait means nothing. The Activity returned shows
// every controller as it is.
func (r *Runtime) WaitIdleExcept(ctx context.Context, names ...string) (Activity, error) {
	ch, release := r.idleNotify.subscribe()
	defer release()
	for {
		before := r.kindActivity(ctx)
		ctrls := r.controllerActivity()
		after := r.kindActivity(ctx)
		a := Activity{Controllers: ctrls, Kinds: after.list}
		if idleExcept(a, names) && (Activity{Kinds: before.list}).Idle() && slices.Equal(before.routed, after.routed) {
			return a, nil
		}
		select {
		case <-ch:
			ch = r.idleNotify.renew()
		case <-ctx.Done():
			// Report what is busy now, not at the last notification.
			return r.Activity(context.WithoutCancel(ctx)), ctx.Err()
		}
	}
}

// idleExcept reports whether a is idle but for the controllers named.
func idleExcept(a Activity, names []string) bool {
	if len(names) == 0 {
		return a.Idle()
	}
	rest := Activity{Kinds: a.Kinds}
	for _, c := range a.Controllers {
		if !slices.Contains(names, c.Name) {
			rest.Controllers = append(rest.Controllers, c)
		}
	}
	return rest.Idle()
}

// activityNotifier wakes WaitIdle callers when something that may make the
// engine idle happens (a Controller comes back to EventCh or stops a pass,
// a QController item is done, a kind watch routed a batch). Without a
// waiter a ping costs one atomic load.
type activityNotifier struct {
	waiters atomic.Int32
	mu      sync.Mutex
	// ch is closed by the next ping; protected by mu.
	ch chan struct{}
}

// ping wakes the current waiters, if any.
func (n *activityNotifier) ping() {
	if n.waiters.Load() == 0 {
		return
	}
	n.mu.Lock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
	n.mu.Unlock()
}

// subscribe registers a waiter and returns the channel the next ping
// closes, and the function that unregisters the waiter.
func (n *activityNotifier) subscribe() (<-chan struct{}, func()) {
	n.waiters.Add(1)
	return n.renew(), func() { n.waiters.Add(-1) }
}

// renew returns the channel the next ping closes.
func (n *activityNotifier) renew() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

// passTracker tells whether a Controller has work pending or in progress.
//
// Wake-ups: the subscriber counts the wake-ups sent (subscriber.wakes,
// counted before the send), the forwarder those it took from the channel
// (consumed) and, at each delivery, how many the delivered event covers
// (covered). A wake-up sent and not covered by a delivered event is work
// pending: wakes != covered.
//
// Passes: the forwarder counts the ReconcileEvents it delivered, EventCh
// counts its calls. A Run loop calls EventCh once per wait, before it takes
// an event: after the n-th delivery the controller is back at its wait once
// it made more than n calls (calls are reset to the deliveries at every
// (re)start, when the controller is not waiting yet).
type passTracker struct {
	// pending is set while the start event has not been taken.
	pending   atomic.Bool
	covered   atomic.Uint64
	delivered atomic.Uint64
	calls     atomic.Uint64
	// consumed counts the wake-ups taken from the channel; written only
	// by the goroutine that drains the channel (the run goroutine before
	// it starts the forwarder, then the forwarder).
	consumed uint64
}

// restart is called before a Run starts, with its start event pending.
func (p *passTracker) restart() {
	p.pending.Store(true)
	p.calls.Store(p.delivered.Load())
}

// taken counts a delivered event; the forwarder calls it after the send.
// The order of the stores matters: busy reads pending, then covered, then
// delivered, so whoever sees the new covered (or pending cleared) also
// sees the new delivered count, which puts the controller in its pass.
func (p *passTracker) taken(rt *Runtime) {
	p.delivered.Add(1)
	p.covered.Store(p.consumed)
	p.pending.Store(false)
	rt.idleNotify.ping()
}

// eventCh counts a call of EventCh.
func (p *passTracker) eventCh(rt *Runtime) {
	p.calls.Add(1)
	rt.idleNotify.ping()
}

// busy reports whether the controller has an event pending or is in a
// pass, and why; wakes is the subscriber's wake-up count. The loads are
// in the order taken relies on: pending, covered, then delivered.
func (p *passTracker) busy(wakes uint64) (bool, string) {
	pending := p.pending.Load()
	covered := p.covered.Load()
	calls := p.calls.Load()
	delivered := p.delivered.Load()
	var why []string
	switch {
	case pending:
		why = append(why, "its start event is waiting to be taken")
	case calls <= delivered:
		why = append(why, "in a reconcile pass (took a ReconcileEvent and has not called EventCh since)")
	}
	if !pending && wakes != covered {
		why = append(why, "woken: a ReconcileEvent is waiting to be taken")
	}
	return len(why) > 0, strings.Join(why, "; ")
}

// watchProgress is what a kind watch has routed, for [Runtime.Activity].
// The watch goroutine updates it once per batch.
type watchProgress struct {
	mu sync.Mutex
	// The fields below are protected by mu.
	live     bool               // bootstrapped, and the watch is up
	routing  bool               // a batch was received and is being routed
	batches  uint64             // batches routed so far
	bookmark state.Bookmark     // bookmark of the last event routed
	ch       chan []state.Event // the current watch's channel
}

// received marks a batch received from ch.
func (p *watchProgress) received() {
	p.mu.Lock()
	p.routing = true
	p.mu.Unlock()
}

// routed marks the batch received last as routed; live tells whether the
// watch has bootstrapped.
func (p *watchProgress) routed(batch []state.Event, live bool) {
	var bm state.Bookmark
	for i := len(batch) - 1; i >= 0 && bm == nil; i-- {
		bm = batch[i].Bookmark
	}
	p.mu.Lock()
	p.routing = false
	p.live = live
	p.batches++
	if bm != nil {
		p.bookmark = bm
	}
	p.mu.Unlock()
}

// started records the channel of a new watch; down marks the watch as
// failed (it is re-established with a re-list).
func (p *watchProgress) started(ch chan []state.Event) {
	p.mu.Lock()
	p.ch = ch
	p.mu.Unlock()
}

func (p *watchProgress) down() {
	p.mu.Lock()
	p.live, p.routing, p.ch = false, false, nil
	p.mu.Unlock()
}

// kindActivities are the kinds' activity and, in the same order, how many
// batches each has routed.
type kindActivities struct {
	list   []KindActivity
	routed []uint64
}

func (r *Runtime) kindActivity(ctx context.Context) kindActivities {
	r.mu.Lock()
	watchers := make([]*kindWatcher, 0, len(r.router.kinds))
	for _, w := range r.router.kinds {
		watchers = append(watchers, w)
	}
	running := r.phase == phaseRunning
	r.mu.Unlock()
	slices.SortFunc(watchers, func(a, b *kindWatcher) int {
		return cmp.Or(cmp.Compare(a.key.Namespace, b.key.Namespace), cmp.Compare(a.key.Type, b.key.Type))
	})

	heads, _ := r.st.(state.KindHeadReporter)
	out := kindActivities{list: make([]KindActivity, 0, len(watchers)), routed: make([]uint64, 0, len(watchers))}
	for _, w := range watchers {
		ka := KindActivity{Namespace: w.key.Namespace, Type: w.key.Type}
		var head state.Bookmark
		if heads != nil && running {
			if h, err := heads.KindHead(ctx, w.kind); err == nil {
				head, ka.Exact = h, true
			}
		}
		p := &w.progress
		p.mu.Lock()
		switch {
		case !running:
			// A stopped (or not yet started) engine routes nothing.
		case !p.live && p.batches == 0:
			ka.Behind, ka.Why = true, "not bootstrapped yet"
		case !p.live:
			ka.Behind, ka.Why = true, "re-establishing the watch after a failure"
		case p.routing:
			ka.Behind, ka.Why = true, "routing a batch"
		case len(p.ch) > 0:
			ka.Behind, ka.Why = true, fmt.Sprintf("%d batches received, not yet routed", len(p.ch))
		case ka.Exact && !bytes.Equal(head, p.bookmark):
			ka.Behind, ka.Why = true, "the state has changes the watch has not delivered yet"
		}
		out.routed = append(out.routed, p.batches)
		p.mu.Unlock()
		out.list = append(out.list, ka)
	}
	return out
}

// activitySample bounds the items a QController's activity names.
const activitySample = 8

func (r *Runtime) controllerActivity() []ControllerActivity {
	r.mu.Lock()
	runners := make([]runner, 0, len(r.runners))
	for _, rn := range r.runners {
		runners = append(runners, rn)
	}
	r.mu.Unlock()
	out := make([]ControllerActivity, 0, len(runners))
	for _, rn := range runners {
		out = append(out, activityOf(rn))
	}
	slices.SortFunc(out, func(a, b ControllerActivity) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func activityOf(rn runner) ControllerActivity {
	switch c := rn.(type) {
	case *controllerRunner:
		return c.activity()
	case *qcontrollerRunner:
		return c.activity()
	}
	panic(errors.New("runtime: unknown runner type"))
}

// activity reports the Controller's part of an Activity.
func (c *controllerRunner) activity() ControllerActivity {
	st := c.status()
	a := ControllerActivity{Name: c.name, Kind: KindController}
	switch st.State {
	case StateStarting:
		a.Busy, a.Why = true, "starting: waiting for its inputs' first bootstrap"
	case StateBackoff:
		a.Why, a.NextDue = "restarting after its backoff", st.BackoffUntil
	case StateRunning:
		a.Busy, a.Why = c.act.busy(c.sub.wakes.Load())
	}
	return a
}

// activity reports the QController's part of an Activity.
func (c *qcontrollerRunner) activity() ControllerActivity {
	a := ControllerActivity{Name: c.name, Kind: KindQController}
	switch c.status().State {
	case StateStopped:
		return a
	case StateStarting:
		// Not running yet, or listing the inputs whose watch ran before
		// it was registered: its queue is not filled yet.
		a.Busy, a.Why = true, "starting: its queue is not filled yet"
		return a
	}
	st := c.sub.queue.Stats(activitySample)
	a.Due, a.InFlight, a.Delayed, a.NextDue = st.Due, st.InFlight, st.Delayed, st.NextDue
	a.Busy = st.Due > 0 || st.InFlight > 0
	var parts []string
	if st.InFlight > 0 {
		parts = append(parts, fmt.Sprintf("%d in flight (%s)", st.InFlight, itemList(st.Sample[:st.SampleInFlight], st.InFlight)))
	}
	if st.Due > 0 {
		parts = append(parts, fmt.Sprintf("%d due (%s)", st.Due, itemList(st.Sample[st.SampleInFlight:], st.Due)))
	}
	if st.Delayed > 0 {
		parts = append(parts, fmt.Sprintf("%d delayed, the next due at %s", st.Delayed, st.NextDue.Format(time.RFC3339Nano)))
	}
	a.Why = strings.Join(parts, "; ")
	return a
}

// itemList formats sampled queue items, noting how many more there are.
func itemList(items []qkey, total int) string {
	s := make([]string, 0, len(items)+1)
	for _, k := range items {
		s = append(s, k.String())
	}
	if n := total - len(items); n > 0 {
		s = append(s, fmt.Sprintf("and %d more", n))
	}
	return strings.Join(s, ", ")
}
