package conformance

import (
	"context"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
)

// RealTime is the real-time mode of [RuntimeSuite], for a Runtime or a
// state that cannot run in a synctest bubble: a state on a network store
// (goroutines blocked on sockets are never durably blocked, so that
// synctest.Wait cannot tell when nothing more happens). In this mode every
// test runs on the wall clock:
//
//   - "nothing more happens" is checked by WaitIdle, which waits for the
//     Runtime's own notifications, never by sleeping;
//   - waits for a condition poll it until [RuntimeWaitDeadline] (real
//     time), as in a bubble;
//   - backoffs and requeue intervals are spent for real, so the Runtime's
//     backoffs must be short (see Backoff), and the checks of the rules
//     about them (C6, Q3) use bounds derived from Backoff instead of the
//     exact virtual times of a bubble: a restart or retry still waits a
//     backoff that grows, a reset still brings back the initial delay, a
//     change to an item waiting out its backoff still runs it before that
//     backoff could have ended, a requeue waits its interval, not twice it.
//
// No test is skipped in this mode.
type RealTime struct {
	// WaitIdle waits until the running Runtime has done all the work that
	// what happened so far causes — every change to its inputs routed,
	// every Controller back waiting for a wake-up, no QController item due
	// or in flight — leaving out the controllers named in held, which the
	// test holds on purpose (a pass or a reconcile blocked on the test's
	// gate). It returns an error that says what is still busy when ctx
	// is done first. Before Run has started the Runtime's controllers, the
	// Runtime is not idle, whatever held names (their input kinds are not
	// watched yet: a change made then would reach no controller). The Runtime is the one NewEngine returned. For
	// resgraph's Runtime (runtime.Runtime) this is runtimetest.RealTimeWaitIdle, exact
	// over a state that implements state.KindHeadReporter.
	WaitIdle func(ctx context.Context, engine controller.Engine, held ...string) error
	// Backoff is the initial delay of the Runtime's restart backoff (C6)
	// and per-item backoff (Q3); the suite assumes the same growth and
	// jitter as in a bubble (see [RuntimeSuite]) and a maximum of at least
	// four times Backoff. The tests of those rules spend about fifteen
	// times the maximum's share of it each: keep it short (tens of
	// milliseconds), yet well above the Runtime's scheduling delays under
	// load, which the checks must tell apart from a backoff.
	Backoff time.Duration
	// MaxBackoff is the maximum of both backoffs: at least four times
	// Backoff (zero means four times). The check that a change runs an
	// item waiting out its backoff at once (Q3) waits for the backoff to
	// reach it, and the longer it is, the more of a loaded machine's
	// scheduling delay that check tells apart from a backoff.
	MaxBackoff time.Duration
}

// inRealTime runs body on the wall clock with a fresh Runtime, and stops
// the Runtime (if body started it) when body returns or fails.
func (s *RuntimeSuite) inRealTime(body func(e *runtimeEnv)) {
	t := s.T()
	rt := s.RealTime
	require.NotNil(t, rt.WaitIdle, "RuntimeSuite.RealTime.WaitIdle is not set")
	require.Positive(t, rt.Backoff, "RuntimeSuite.RealTime.Backoff is not set")
	eng, st := s.NewEngine(t)
	require.NotNil(t, eng, "NewEngine returned a nil Runtime")
	require.NotNil(t, st, "NewEngine returned a nil state")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	e := &runtimeEnv{
		t: t, require: require.New(t), assert: assert.New(t),
		engine: eng, state: st, ctx: ctx, rt: rt,
		runDone: make(chan error, 1),
	}
	defer e.stop()
	body(e)
}

// hold names controllers that the test holds at its gate from now on:
// settle (in real time) does not wait for them. Without a name, it
// releases every hold. In a bubble it does nothing: synctest.Wait sees a
// controller blocked on a gate as blocked.
func (e *runtimeEnv) hold(names ...string) {
	if len(names) == 0 {
		e.held = nil
		return
	}
	e.held = append(e.held, names...)
}

// waitIdle waits, in real time, until the Runtime is idle but for the held
// controllers, or fails the test after RuntimeWaitDeadline.
func (e *runtimeEnv) waitIdle() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, RuntimeWaitDeadline)
	defer cancel()
	if err := e.rt.WaitIdle(ctx, e.engine, e.held...); err != nil {
		e.t.Fatalf("the Runtime did not settle within %s (held: %v): %v", RuntimeWaitDeadline, e.held, err)
	}
}

// release lets one reconcile pass waiting on gate through: the pass must
// be waiting on it (in real time: come to wait on it within
// RuntimeWaitDeadline). It reports whether one was.
func (e *runtimeEnv) release(gate chan<- struct{}) bool {
	e.t.Helper()
	e.settle()
	if e.rt == nil {
		select {
		case gate <- struct{}{}:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(RuntimeWaitDeadline)
	defer t.Stop()
	select {
	case gate <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

// releaseIfWaiting lets one pass waiting on gate through if one waits now,
// after settling with no hold; it reports whether one was waiting.
func (e *runtimeEnv) releaseIfWaiting(gate chan<- struct{}) bool {
	e.t.Helper()
	e.hold()
	e.settle()
	select {
	case gate <- struct{}{}:
		return true
	default:
		return false
	}
}

// drainGateRealTime lets every reconcile waiting on gate through until the
// Runtime is idle with no hold; it fails the test after limit passes. A
// reconcile waiting on the gate keeps the Runtime busy, so "idle" and "a
// reconcile takes the gate" exclude each other: whichever comes first
// decides, with no race.
func (e *runtimeEnv) drainGateRealTime(gate chan<- struct{}, limit int) {
	e.t.Helper()
	e.hold()
	for range limit {
		ctx, cancel := context.WithTimeout(e.ctx, RuntimeWaitDeadline)
		idle := make(chan error, 1)
		go func() { idle <- e.rt.WaitIdle(ctx, e.engine) }()
		select {
		case gate <- struct{}{}:
			cancel()
			<-idle
		case err := <-idle:
			cancel()
			if err != nil {
				e.t.Fatalf("the Runtime neither took the gate nor settled within %s: %v", RuntimeWaitDeadline, err)
			}
			return
		}
	}
	e.t.Fatalf("reconciles still waiting on the gate after %d passes", limit)
}

// maxBackoff is the maximum of the Runtime's backoffs (see MaxBackoff).
func (rt *RealTime) maxBackoff() time.Duration {
	return max(rt.MaxBackoff, 4*rt.Backoff)
}

// failuresToMax is the number of consecutive failures after which the
// Runtime's backoff has surely reached its maximum (growth of at least 1.5
// per failure).
func (rt *RealTime) failuresToMax() int {
	n := 1
	for d := float64(rt.Backoff); d < float64(rt.maxBackoff()); d *= 1.5 {
		n++
	}
	return n
}
