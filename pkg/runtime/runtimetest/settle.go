package runtimetest

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/internal/testhook"
)

// WaitIdle waits until rt is idle and returns the Activity it saw then
// (rt.Observe().Activity's report), or the Activity now with ctx's error
// when ctx is done first. rt may be any Runtime, started by [Start] or not.
//
// Idle means: every kind watch has routed every change (with a state that
// implements state.KindHeadReporter, every change the state committed;
// otherwise every change the state delivered to the watch), no Controller
// is busy and no QController item is due or in flight (see
// observe.ControllerActivity.Busy) — checked so that no work can move
// between the parts checked: the kinds are checked before and after the
// controllers and must not have routed anything in between. Items waiting
// out a backoff or a requeue interval, and a Controller waiting out its
// restart backoff, are not due: WaitIdle does not wait for them. It waits
// for the Runtime's own notifications, never by polling; a Runtime whose Run
// has not started yet is not idle (its controllers are starting).
//
// A Controller is seen idle from the moment it calls EventCh after taking
// its last ReconcileEvent, which a Run loop that selects on r.EventCh() in
// every iteration does before it waits again. A Controller that keeps the
// channel from one EventCh call is seen busy after its first event; one
// that hands its events to another goroutine is seen idle once the
// handing-over loop calls EventCh again, whether or not the other goroutine
// is done. A state whose whole-kind watches may coalesce changes into
// nothing (inmem does, for a resource created and destroyed while a watch
// that fell far behind catches up) leaves that kind seen behind until its
// next change.
//
// The controllers named in except count as idle whatever they do, and the
// rest of the Runtime must be idle as above. That is for a test that holds
// some controllers on purpose — a pass or a reconcile blocked until the
// test lets it go — while it waits for the rest (every change routed, the
// other controllers done); a held controller must not be doing anything but
// waiting, or the wait means nothing. The Activity returned shows every
// controller as it is.
func WaitIdle(ctx context.Context, rt *runtime.Runtime, except ...string) (observe.Activity, error) {
	return testhook.Of(rt).WaitIdle(ctx, except)
}

// Settle waits until rt is idle (see [WaitIdle]) and fails the test after
// [DefaultTimeout] with what is still busy. Items waiting out a backoff or
// a requeue interval are not due: Settle does not wait for them (use
// [Await] for the state they lead to). rt may be any Runtime, started by
// [Start] or not. Inside a synctest bubble, Settle first waits until every
// goroutine of the bubble is blocked, so that no controller is caught
// between two steps.
func Settle(tb testing.TB, rt *runtime.Runtime) {
	tb.Helper()
	settle(tb, rt, DefaultTimeout)
}

func settle(tb testing.TB, rt *runtime.Runtime, timeout time.Duration) {
	tb.Helper()
	bubbleWait()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if a, err := WaitIdle(ctx, rt); err != nil {
		tb.Fatalf("runtimetest: the Runtime did not settle within %s; still busy:\n%s", timeout, a)
	}
}

// bubbleWait calls synctest.Wait when the caller runs in a synctest
// bubble; outside one, synctest.Wait panics, which is recovered: that is
// how a bubble is told apart.
func bubbleWait() {
	defer func() { _ = recover() }()
	synctest.Wait()
}
