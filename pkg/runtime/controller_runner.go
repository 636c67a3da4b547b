package runtime

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/internal/usercode"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
)

// controllerRunner runs one Controller: its Run loop with restarts (rule
// C6) and the forwarder that turns coalesced wake-ups into ReconcileEvents
// (rule C2).
type controllerRunner struct {
	rt     *Runtime
	ctrl   controller.Controller
	sub    *subscriber
	m      *controllerMetrics
	logger *zap.Logger
	// elog logs the engine's own messages about the controller, without
	// automatic stack traces (see engineLogger).
	elog    *zap.Logger
	adapter *controllerAdapter
	// eventCh is the unbuffered channel behind EventCh; only the forwarder
	// sends on it.
	eventCh chan controller.ReconcileEvent
	name    string
	static  []controller.Input
	outputs []controller.Output

	boMu sync.Mutex
	// bo is the restart backoff; protected by boMu.
	bo *backoff.ExponentialBackOff

	// act tells whether the controller is in a pass (see activity.go).
	act passTracker

	// eventChCalls counts the EventCh calls of the current Run, and
	// failedInPass is set by a failure reported since the last one: a
	// Run loop calls EventCh once per pass, before it waits, so an EventCh
	// call after the first ends a pass, which the controller's status
	// counts as a recovery when no failure was reported in it (see
	// ControllerStatus.Recovered).
	eventChCalls atomic.Uint64
	failedInPass atomic.Bool
}

func newControllerRunner(rt *Runtime, ctrl controller.Controller, name string, static []controller.Input, outputs []controller.Output) *controllerRunner {
	m := newControllerMetrics()
	c := &controllerRunner{
		rt:      rt,
		ctrl:    ctrl,
		name:    name,
		static:  static,
		outputs: outputs,
		m:       m,
		sub:     &subscriber{name: name, wake: make(chan struct{}, 1), m: m},
		logger:  rt.logger.With(zap.String("controller", name)),
		elog:    engineLogger(rt.logger.With(zap.String("controller", name))),
		eventCh: make(chan controller.ReconcileEvent),
		bo:      newRestartBackoff(rt.opts),
	}
	rw := newRWAdapter(rt, name, newAccessSet(static, nil, outputs), m, &outputTracker{})
	c.adapter = &controllerAdapter{rwAdapter: rw, runner: c}
	return c
}

// newRestartBackoff returns the restart backoff of rule C6.
func newRestartBackoff(o Options) *backoff.ExponentialBackOff {
	return newBackoff(o.RestartBackoffInitial, o.RestartBackoffMax)
}

// newBackoff returns a deterministic doubling backoff from initial to
// maxDelay that never gives up.
func newBackoff(initial, maxDelay time.Duration) *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(initial),
		backoff.WithMaxInterval(maxDelay),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0),
	)
}

// sleepCtx waits for d; false when ctx is done first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (c *controllerRunner) inputKeys() []dependency.Key {
	static, dynamic := c.rt.db.Inputs(c.name)
	keys := make([]dependency.Key, 0, len(static)+len(dynamic))
	for _, in := range slices.Concat(static, dynamic) {
		keys = append(keys, dependency.Key{Namespace: in.Namespace, Type: in.Type})
	}
	return keys
}

func (c *controllerRunner) status() ControllerStatus {
	st := ControllerStatus{Name: c.name, Kind: KindController}
	c.m.fill(&st)
	return st
}

// run runs the controller until ctx is done: a Run that returns an error
// or panics is restarted after the backoff; a Run that returns nil before
// ctx is done is not restarted (the controller stopped on purpose).
func (c *controllerRunner) run(ctx context.Context, _ []dependency.Key) {
	defer c.m.setState(StateStopped, time.Time{})

	// The start event comes once every input kind is watched live, so that
	// what the controller reads then is followed by every later change.
	c.rt.mu.Lock()
	ready := c.rt.router.bootstrappedLocked(c.inputKeys())
	c.rt.mu.Unlock()
	if !waitAll(ctx, ready) {
		return
	}
	for {
		f := c.runOnce(ctx)
		if ctx.Err() != nil {
			if f != nil && f.panic != nil {
				c.elog.Error("controller panicked while the engine stopped", zap.String("panic", f.msg), stackField(f.panic))
			}
			return
		}
		if f == nil {
			c.m.recovered()
			c.elog.Info("controller returned before the engine stopped; not restarting it")
			return
		}
		if c.rt.metrics {
			c.m.crashes.Add(1)
		}
		c.m.failed(f.text("Run"))
		delay := c.nextBackoff()
		c.m.setState(StateBackoff, time.Now().Add(delay))
		// A failure is retried: WARN, without a stack; a panic is a bug:
		// ERROR, with the stack of the panicking goroutine.
		if f.panic != nil {
			c.elog.Error("controller panicked; restarting after backoff", zap.String("panic", f.msg),
				zap.Duration("backoff", delay), stackField(f.panic))
		} else {
			c.elog.Warn("controller failed; restarting after backoff", zap.String("error", f.msg), zap.Duration("backoff", delay))
		}
		if !sleepCtx(ctx, delay) {
			return
		}
		if c.rt.metrics {
			c.m.restarts.Add(1)
		}
	}
}

func (c *controllerRunner) nextBackoff() time.Duration {
	c.boMu.Lock()
	defer c.boMu.Unlock()
	return c.bo.NextBackOff()
}

func (c *controllerRunner) resetBackoff() {
	c.boMu.Lock()
	defer c.boMu.Unlock()
	c.bo.Reset()
}

// runOnce runs Run once, with a fresh forwarder that delivers the start
// event, and returns its failure (nil when Run returned nil).
func (c *controllerRunner) runOnce(ctx context.Context) *failure {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()

	// A wake-up left from before is covered by the start event.
	c.drainWake()
	c.eventChCalls.Store(0)
	c.failedInPass.Store(false)
	c.act.restart()
	defer c.rt.idleNotify.ping() // a pass that ended with Run is not busy
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.forward(actx)
	}()
	c.m.setState(StateRunning, time.Time{})

	f := c.safeRun(actx)
	cancel()
	<-done
	return f
}

// safeRun calls Run and returns its failure as plain data: the error's
// text, a typed-nil error or a panic (with its stack) are rendered inside
// the recovery, so nothing later calls a method of the error (rule C6).
func (c *controllerRunner) safeRun(ctx context.Context) (f *failure) {
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			f = panicFailure(p)
		}
	}()
	if err := c.ctrl.Run(ctx, c.adapter, c.logger); err != nil {
		return errorFailure("Run", err)
	}
	return nil
}

// forward delivers one ReconcileEvent at start and one after wake-ups;
// wake-ups that arrive while an event waits to be taken coalesce into it
// (rule C2). It returns when ctx is done.
func (c *controllerRunner) forward(ctx context.Context) {
	pending := true
	delivered := time.Duration(-1)
	for {
		if !pending {
			select {
			case <-c.sub.wake:
				pending = true
				c.act.consumed++
			case <-ctx.Done():
				return
			}
			continue
		}
		// Wake-ups that arrived before the event is taken are covered by
		// it: the controller reads the state after taking it.
		c.drainWake()
		// Offer the event at once: taken now means the controller was
		// waiting for it.
		select {
		case c.eventCh <- controller.ReconcileEvent{}:
			c.delivered(&delivered, false)
			pending = false
			c.act.taken(c.rt)
			continue
		case <-ctx.Done():
			return
		default:
		}
		for pending {
			c.drainWake()
			select {
			case c.eventCh <- controller.ReconcileEvent{}:
				c.delivered(&delivered, true)
				pending = false
				c.act.taken(c.rt)
			case <-c.sub.wake: // coalesces into the pending event
				c.act.consumed++
			case <-ctx.Done():
				return
			}
		}
	}
}

// drainWake drops a pending wake-up.
func (c *controllerRunner) drainWake() {
	select {
	case <-c.sub.wake:
		c.act.consumed++
	default:
	}
}

// delivered accounts one delivered event: the busy time of the previous
// pass (see ControllerStatus.BusyTime) and the reconcile count.
func (c *controllerRunner) delivered(prev *time.Duration, waited bool) {
	if !c.rt.metrics {
		return
	}
	now := c.rt.now()
	if *prev >= 0 {
		var busy time.Duration
		if waited {
			busy = now - *prev
		} else if last := time.Duration(c.m.lastCall.Load()); last > *prev {
			busy = last - *prev
		}
		c.m.busy.Add(int64(busy))
	}
	*prev = now
	c.m.reconciles.Add(1)
}

// controllerAdapter is the [controller.Runtime] of one Controller.
type controllerAdapter struct {
	*rwAdapter
	runner *controllerRunner
}

var _ controller.Runtime = (*controllerAdapter)(nil)

// EventCh delivers the controller's ReconcileEvents (rule C2).
func (a *controllerAdapter) EventCh() <-chan controller.ReconcileEvent {
	a.runner.act.eventCh(a.rt)
	a.runner.passEnd()
	return a.runner.eventCh
}

// passEnd counts an EventCh call: the end of a reconcile pass (but for a
// Run's first call), a recovery when the pass reported no failure.
func (c *controllerRunner) passEnd() {
	n := c.eventChCalls.Add(1)
	if failed := c.failedInPass.Swap(false); n > 1 && !failed {
		c.m.recovered()
	}
}

// reportFailure records a failure the controller reported while it goes
// on (controller.ErrorReporter): its last error, and no recovery at the end
// of this pass.
func (c *controllerRunner) reportFailure(text string) {
	c.failedInPass.Store(true)
	c.m.failed(text)
}

// QueueReconcile queues a ReconcileEvent, coalescing with pending ones.
func (a *controllerAdapter) QueueReconcile() { a.runner.wakeUp() }

// wakeUp sends the controller a coalescing wake-up.
func (c *controllerRunner) wakeUp() { c.sub.wakeUp() }

// ResetRestartBackoff resets the restart backoff (rule C6). The controller
// says it is healthy: a recovery, unless it reported a failure in this
// pass.
func (a *controllerAdapter) ResetRestartBackoff() {
	a.runner.resetBackoff()
	if !a.runner.failedInPass.Load() {
		a.runner.m.recovered()
	}
}

// UpdateInputs replaces the dynamic inputs (rule C7).
func (a *controllerAdapter) UpdateInputs(inputs []controller.Input) error {
	return a.rt.updateInputs(a.runner, inputs)
}

// StartTrackingOutputs starts a tracking pass (rule C8).
func (a *controllerAdapter) StartTrackingOutputs() { a.tracker.start() }

// CleanupOutputs destroys the outputs not written in the tracking pass
// (rule C8).
func (a *controllerAdapter) CleanupOutputs(ctx context.Context, outputs ...resource.Kind) error {
	return a.cleanupOutputs(ctx, outputs)
}
