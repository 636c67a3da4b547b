package runtimetest

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/internal/testhook"
)

// Settle waits until rt is idle and returns what it saw then
// (rt.Observe().Activity's report); after the test's timeout
// ([SetTimeout], [Within]) it fails the test with what is still busy. It
// is the one way to wait for quiet. rt may be any Runtime, started by
// [Start] or not; one whose Run has not started yet is not idle (its
// controllers are starting and its input kinds are not watched yet),
// whatever [Except] names.
//
// Idle means: every kind watch has routed every change (with a state that
// implements state.KindHeadReporter, every change the state committed;
// otherwise every change the state delivered to the watch), no Controller
// is busy and no QController item is due or in flight (see
// observe.ControllerActivity.Busy) — checked so that no work can move
// between the parts checked: the kinds are checked before and after the
// controllers and must not have routed anything in between. Items waiting
// out a backoff or a requeue interval, and a Controller waiting out its
// restart backoff, are not due: Settle does not wait for them (assert the
// state they lead to). It waits for the Runtime's own notifications, never
// by polling. Inside a synctest bubble, Settle first waits until every
// goroutine of the bubble is blocked, so that no controller is caught
// halfway through its work.
//
// A Controller is seen idle from the moment it calls EventCh after taking
// its last ReconcileEvent, which a Run loop that selects on r.EventCh() in
// every iteration does before it waits again. A Controller that keeps the
// channel from one EventCh call is seen busy after its first wake-up; one
// that hands its wake-ups to another goroutine is seen idle once the
// handing-over loop calls EventCh again, whether or not the other goroutine
// is done. A Controller whose dynamic inputs gained a kind (UpdateInputs)
// is busy until the wake-up that follows that kind's first bootstrap is
// sent. A state whose whole-kind watches may coalesce changes into
// nothing (inmem does, for a resource created and destroyed while a watch
// that fell far behind catches up) leaves that kind seen behind until its
// next change.
//
// The controllers named by [Except] count as idle whatever they do, and
// the rest of the Runtime must be idle as above; a held controller must
// not be doing anything but waiting, or the wait means nothing. The
// Activity returned shows every controller as it is.
func Settle(tb testing.TB, rt *runtime.Runtime, opts ...WaitOption) observe.Activity {
	tb.Helper()
	c := waitOptions(tb, "", opts)
	bubbleWait()
	ctx, cancel := context.WithTimeout(waitContext(tb), c.timeout)
	defer cancel()
	a, err := testhook.Of(rt).WaitIdle(ctx, c.except)
	if err != nil {
		if err := stopCause(ctx); err != nil {
			tb.Fatalf("runtimetest: settle: %v", err)
		}
		tb.Fatalf("runtimetest: the Runtime did not settle within %s; still busy:\n%s%s", c.timeout, a, failingText(tb))
	}
	return a
}

// bubbleWait calls synctest.Wait when the caller runs in a synctest
// bubble; outside one, synctest.Wait panics, which is recovered: that is
// how a bubble is told apart.
func bubbleWait() {
	defer func() { _ = recover() }()
	synctest.Wait()
}

// RealTimeWaitIdle is conformance.RealTime.WaitIdle for resgraph's Runtime
// (rt is a *runtime.Runtime): it waits as [Settle] does, but returns
// an error saying what is still busy instead of failing a test, since the
// conformance suite calls it from goroutines of its own. Tests wait with
// Settle.
func RealTimeWaitIdle(ctx context.Context, rt controller.Engine, held ...string) error {
	r, ok := rt.(*runtime.Runtime)
	if !ok {
		return fmt.Errorf("runtimetest: RealTimeWaitIdle needs a *runtime.Runtime, not a %T", rt)
	}
	a, err := testhook.Of(r).WaitIdle(ctx, held)
	if err != nil {
		return fmt.Errorf("%w; still busy:\n%s", err, a)
	}
	return nil
}
