package runtimetest

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/resgraph/resgraph/pkg/runtime"
)

// Settle waits until rt is idle — every kind watch has routed every change
// the state committed, no Controller is in a pass or has an event to take,
// no QController item is due or in flight — and fails the test after
// [DefaultTimeout] with what is still busy. Items waiting out a backoff or
// a requeue interval are not due: Settle does not wait for them (use
// [Await] for the state they lead to). rt may be any engine, started by
// [Start] or not. See runtime.Runtime.WaitIdle for the exact guarantee;
// inside a synctest bubble, Settle first waits until every goroutine of
// the bubble is blocked, so that no controller is caught between two steps.
func Settle(tb testing.TB, rt *runtime.Runtime) {
	tb.Helper()
	settle(tb, rt, DefaultTimeout)
}

func settle(tb testing.TB, rt *runtime.Runtime, timeout time.Duration) {
	tb.Helper()
	bubbleWait()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if a, err := rt.WaitIdle(ctx); err != nil {
		tb.Fatalf("runtimetest: the engine did not settle within %s; still busy:\n%s", timeout, a)
	}
}

// bubbleWait calls synctest.Wait when the caller runs in a synctest
// bubble; outside one, synctest.Wait panics, which is recovered: that is
// how a bubble is told apart.
func bubbleWait() {
	defer func() { _ = recover() }()
	synctest.Wait()
}
