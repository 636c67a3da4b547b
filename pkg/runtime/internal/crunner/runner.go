// Package crunner runs one Controller: its Run loop with restarts after a
// backoff (rule C6), the forwarder that turns coalesced wake-ups into
// ReconcileEvents (rule C2), and the [controller.Runtime] it hands to Run.
//
// A runner depends on exactly what it uses ([Config]): its controller, its
// adapter (the scoped reader/writer), its wake-up, a way to wait for its
// inputs' first bootstrap, the Runtime's handler of UpdateInputs, its
// telemetry sink and the idle notifier. It tracks the controller's passes
// once (pass.go) for its activity, its recovery and its busy time, and
// judges each Run's end with the Runtime's one outcome switch
// (package outcome).
package crunner

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
	"github.com/resgraph/resgraph/pkg/runtime/internal/idle"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/route"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/runtime/internal/status"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
)

// Bootstrap waits until the watches of input kinds delivered their first
// bootstrap (see route.Router.WaitBootstrapped).
type Bootstrap interface {
	WaitBootstrapped(ctx context.Context, kinds []resource.KindKey) bool
}

// Config is what a [Runner] needs.
type Config struct {
	Name string
	Ctrl controller.Controller
	// Logger is the Runtime's logger; the runner adds the controller's name.
	Logger *zap.Logger
	// Restart is the restart backoff (rule C6).
	Restart retry.Backoff
	// Items is the retry policy of the items the controller retries
	// itself (the generic Controllers' inputs): its Run context carries
	// it (retry.FromContext).
	Items retry.Policy
	// Adapter is the controller's reader/writer.
	Adapter *adapter.Adapter
	// Wake is the controller's wake-up, sent by the router.
	Wake *route.Wake
	// Changes is the controller's change log, fed by the router (nil:
	// none kept; its Runtime then offers none).
	Changes *changelog.Log
	// Inputs returns the kinds of the controller's current inputs.
	Inputs func() []resource.KindKey
	// Bootstrap delays the start event until the inputs are watched live.
	Bootstrap Bootstrap
	// UpdateInputs is the Runtime's handler of the controller's
	// UpdateInputs calls (rule C7).
	UpdateInputs func([]controller.Input) error
	// Telemetry is the controller's sink (nil with metrics off).
	Telemetry *telemetry.Controller
	// Idle is pinged when the controller may have become idle.
	Idle *idle.Notifier
	// Scheduler gates every start of Run and every ReconcileEvent
	// (sched.Direct, the default when nil, lets each go at once).
	Scheduler sched.Scheduler
}

// Runner runs one Controller. Run is called once; the other methods are
// safe for concurrent use at any time.
type Runner struct {
	cfg    Config
	logger *zap.Logger // the controller's, with its name
	// elog logs the Runtime's own messages about the controller, without
	// automatic stack traces (see outcome.EngineLogger).
	elog   *zap.Logger
	rt     *runtime
	status status.Status
	passes passes
	// eventCh is the unbuffered channel behind EventCh; only the forwarder
	// sends on it.
	eventCh chan controller.ReconcileEvent

	boMu sync.Mutex
	// bo is the restart backoff and attempt the crashes since it was
	// last reset; protected by boMu.
	bo      *retry.Sequence
	attempt int

	// raising is the change of a shared snapshot being raised in Run's
	// goroutine (see checkSnapshots).
	raising raised
	// deferred counts the wake-ups promised by DeferWakeUp and not sent
	// or given up yet.
	deferred atomic.Int32
}

// New returns the runner of a Controller; it starts nothing.
func New(cfg Config) *Runner {
	cfg.Scheduler = sched.Or(cfg.Scheduler)
	logger := cfg.Logger.With(zap.String("controller", cfg.Name))
	c := &Runner{
		cfg:     cfg,
		logger:  logger,
		elog:    outcome.EngineLogger(logger),
		eventCh: make(chan controller.ReconcileEvent),
		bo:      cfg.Restart.Sequence(),
	}
	c.rt = &runtime{Adapter: cfg.Adapter, runner: c}
	return c
}

// Run runs the controller until ctx is done: a Run that returns an error
// or panics is restarted after the backoff; a Run that returns nil before
// ctx is done is not restarted (the controller stopped on purpose). The
// start event comes once every input kind is watched live, so that what the
// controller reads then is followed by every later change.
func (c *Runner) Run(ctx context.Context) {
	defer c.setState(status.Stopped, time.Time{})
	c.status.SetState(status.Starting, time.Time{}) // Run may run again (a new leadership term)
	c.passes.ended.Store(false)                     // which catches up again
	snaps := c.cfg.Adapter.Snapshots()
	snaps.Start()
	defer snaps.Stop()
	if !c.cfg.Bootstrap.WaitBootstrapped(ctx, c.cfg.Inputs()) {
		return
	}
	for {
		o := c.runOnce(ctx)
		if ctx.Err() != nil {
			if o.Class == outcome.Panicked {
				c.elog.Error("controller panicked while the Runtime stopped", zap.String("panic", o.Msg), outcome.StackField(o.Panic))
			}
			return
		}
		d := outcome.Decide(outcome.Run, o)
		if d.Action == outcome.Done {
			c.status.Recover(nil)
			outcome.Log(c.elog, outcome.Run, o, d, 0)
			return
		}
		if !c.waitRestart(ctx, o, d) {
			return
		}
	}
}

// waitRestart waits, after Run failed with o (decided as d), until it is
// to run again: after the restart backoff, or, for an access denial (a
// programming error no restart can fix, rule C3), until one of its inputs
// changes (a wake-up since its last pass began). It returns false when
// ctx is done first.
func (c *Runner) waitRestart(ctx context.Context, o outcome.Outcome, d outcome.Decision) bool {
	c.status.Failed(o.Text("Run"))
	delay, attempt := c.nextBackoff()
	if d.Action == outcome.Park {
		delay = 0
	}
	c.cfg.Telemetry.Crashed(o, d, delay, attempt)
	outcome.Log(c.elog, outcome.Run, o, d, delay)
	if d.Action == outcome.Park {
		c.setState(status.Parked, time.Time{})
		select {
		case <-c.cfg.Wake.C():
		case <-ctx.Done():
			return false
		}
	} else {
		c.setState(status.Backoff, time.Now().Add(delay))
		if !retry.Wait(ctx, delay) {
			return false
		}
	}
	c.cfg.Telemetry.Restarted(attempt)
	return true
}

// setState records the state the controller enters after a Run returned
// (stopped, parked, restart backoff) and tells the quiescence check: until
// then a Run that returned in a pass counts as in it (busy), so that the
// check must look again once the state says what follows.
func (c *Runner) setState(state observe.Lifecycle, backoffUntil time.Time) {
	c.status.SetState(state, backoffUntil)
	c.cfg.Idle.Ping()
}

// nextBackoff returns the next restart delay and the crashes it counts.
func (c *Runner) nextBackoff() (time.Duration, int) {
	c.boMu.Lock()
	defer c.boMu.Unlock()
	c.attempt++
	return c.bo.Next(), c.attempt
}

func (c *Runner) resetBackoff() {
	c.boMu.Lock()
	defer c.boMu.Unlock()
	c.bo.Reset()
	c.attempt = 0
}

// runOnce runs Run once, with a fresh forwarder that delivers the start
// event, and returns its outcome. Run's context carries the controller's
// item retry policy.
func (c *Runner) runOnce(ctx context.Context) outcome.Outcome {
	if !c.cfg.Scheduler.Gate(ctx, sched.Gate{Kind: sched.GateStart, Controller: c.cfg.Name}) {
		return outcome.Success() // the Runtime stops
	}
	actx, cancel := context.WithCancel(retry.NewContext(ctx, c.cfg.Items))
	defer cancel()

	// A wake-up left from before is covered by the start event, and the
	// first pass of a Run reads every input.
	c.drainWake()
	if l := c.cfg.Changes; l != nil {
		l.MarkFull()
	}
	c.passes.restart()
	c.cfg.Telemetry.RunStarted()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.forward(actx)
	}()
	c.status.SetState(status.Running, time.Time{})

	o := c.call(actx)
	cancel()
	<-done
	return o
}

// call calls Run and returns its outcome as plain data: the error's text,
// a typed-nil error or a panic (with its stack) are rendered inside the
// recovery, so nothing later calls a method of the error (rule C6).
func (c *Runner) call(ctx context.Context) (o outcome.Outcome) {
	defer func() {
		v := recover()
		if v != nil && c.raising.is(v) {
			panic(v) // a changed snapshot raised in the pass: the test sees it
		}
		if p := usercode.Recovered(v); p != nil {
			o = outcome.OfPanic(p)
		}
	}()
	if err := c.cfg.Ctrl.Run(ctx, c.rt, c.logger); err != nil {
		return outcome.OfError("Run", err)
	}
	return outcome.Success()
}

// forward delivers one ReconcileEvent at start and one after wake-ups;
// wake-ups that arrive while an event waits to be taken coalesce into it
// (rule C2). It returns when ctx is done.
func (c *Runner) forward(ctx context.Context) {
	wake := c.cfg.Wake.C()
	pending := true
	for {
		if !pending {
			select {
			case <-wake:
				pending = true
				c.passes.consumed++
			case <-ctx.Done():
				return
			}
			continue
		}
		if !c.cfg.Scheduler.Gate(ctx, sched.Gate{Kind: sched.GatePass, Controller: c.cfg.Name}) {
			return
		}
		// Wake-ups that arrived before the event is taken are covered by
		// it: the controller reads the state after taking it.
		c.drainWake()
		// Offer the event at once: taken now means the controller was
		// waiting for it.
		select {
		case c.eventCh <- controller.ReconcileEvent{}:
			c.taken(false)
			pending = false
			continue
		case <-ctx.Done():
			return
		default:
		}
		for pending {
			c.drainWake()
			select {
			case c.eventCh <- controller.ReconcileEvent{}:
				c.taken(true)
				pending = false
			case <-wake: // coalesces into the pending event
				c.passes.consumed++
			case <-ctx.Done():
				return
			}
		}
	}
}

// drainWake drops a pending wake-up.
func (c *Runner) drainWake() {
	select {
	case <-c.cfg.Wake.C():
		c.passes.consumed++
	default:
	}
}

// taken accounts a delivered event: a pass starts. waited tells whether the
// event had to wait for the controller.
func (c *Runner) taken(waited bool) {
	c.cfg.Telemetry.EventTaken(waited)
	c.passes.taken()
	c.cfg.Idle.Ping()
}

// WakeUp sends the controller a coalescing wake-up.
func (c *Runner) WakeUp() { c.cfg.Wake.Send() }

// DeferWakeUp promises a wake-up that the caller sends later from another
// goroutine (once new inputs are watched live, say) by calling the
// returned function once: with true it sends the wake-up, with false it
// gives it up. Until then the controller counts as busy in its activity,
// so that a quiescence check cannot see it idle between the cause of the
// wake-up and its send.
func (c *Runner) DeferWakeUp() (send func(wake bool)) {
	c.deferred.Add(1)
	var once sync.Once
	return func(wake bool) {
		once.Do(func() {
			if wake {
				c.WakeUp() // counted as sent before the promise is dropped
			}
			c.deferred.Add(-1)
			c.cfg.Idle.Ping()
		})
	}
}

// SetAccess replaces the controller's access scope (its dynamic inputs
// changed).
func (c *Runner) SetAccess(a *adapter.Access) { c.cfg.Adapter.SetAccess(a) }

// Status returns the controller's status.
func (c *Runner) Status() status.Snapshot { return c.status.Snapshot() }

// Activity reports what the controller is busy with.
func (c *Runner) Activity() status.Activity {
	var a status.Activity
	switch st := c.status.Snapshot(); st.State {
	case status.Starting:
		a.Busy, a.Why = true, "starting: waiting for its inputs' first bootstrap"
	case status.Backoff:
		a.Why, a.NextDue = "restarting after its backoff", st.BackoffUntil
	case status.Parked:
		a.Why = "parked until an input changes: " + st.LastError
	case status.Running:
		// The promise first: a wake-up is counted as sent before its
		// promise is dropped (see DeferWakeUp).
		deferred := c.deferred.Load() > 0
		a.Busy, a.Why = c.passes.busy(c.cfg.Wake.Sent())
		if deferred {
			a.Busy, a.Why = true, joinWhy(a.Why, "a wake-up waits for its new inputs' first bootstrap")
		}
	}
	return a
}

// Health says why the controller is not ready and why it is not live ("" when
// it is), at now, with bound the longest a pass may last (see
// observe.Health): not ready while it starts or until its first pass
// ended; not live while it is in one pass for longer than bound.
func (c *Runner) Health(now time.Time, bound time.Duration) (notReady, notLive string) {
	st := c.status.Snapshot()
	switch {
	case st.State == status.Starting:
		notReady = "starting: waiting for the first listing of its inputs"
	case st.State != status.Stopped && !c.passes.ended.Load():
		notReady = "its first pass has not ended"
		if st.State == status.Backoff {
			notReady += "; its Run failed (" + st.LastError + "), restarting"
		}
	}
	if in, since := c.passes.inPass(); in && now.Sub(since) > bound {
		notLive = "stuck in one pass for " + now.Sub(since).Round(time.Millisecond).String() + " (the health bound is " + bound.String() + ")"
	}
	return notReady, notLive
}
