package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
)

// loopRuntime is the part of a controller.Runtime that runLoop uses; any
// other method panics (the embedded interface is nil).
type loopRuntime struct {
	controller.Runtime
	events chan controller.ReconcileEvent
	resets chan struct{}
}

func newLoopRuntime() *loopRuntime {
	return &loopRuntime{events: make(chan controller.ReconcileEvent), resets: make(chan struct{}, 16)}
}

func (r *loopRuntime) EventCh() <-chan controller.ReconcileEvent { return r.events }
func (r *loopRuntime) ResetRestartBackoff()                      { r.resets <- struct{}{} }

const loopWait = 10 * time.Second

// startLoop runs runLoop in a goroutine; the returned channel gets its
// result. Each reconcile call is announced on calls and answered from
// results.
func startLoop(ctx context.Context, r *loopRuntime, extra <-chan struct{}) (calls chan struct{}, results chan error, done chan error) {
	calls, results, done = make(chan struct{}), make(chan error), make(chan error, 1)
	go func() {
		done <- runLoop(ctx, r, extra, func(context.Context, controller.Runtime) error {
			calls <- struct{}{}
			return <-results
		})
	}()
	return calls, results, done
}

func send[T any](t *testing.T, ch chan<- T, v T, what string) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(loopWait):
		require.FailNow(t, "timed out sending "+what)
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(loopWait):
		require.FailNow(t, "timed out waiting for "+what)
		var zero T
		return zero
	}
}

func TestL1_ReconcileOnEveryWakeUpThenResetBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r := newLoopRuntime()
	extra := make(chan struct{})
	calls, results, done := startLoop(ctx, r, extra)

	for _, wake := range []func(){
		func() { send(t, r.events, controller.ReconcileEvent{}, "Runtime wake-up") },
		func() { send(t, extra, struct{}{}, "extra wake-up") },
	} {
		wake()
		recv(t, calls, "reconcile")
		assert.Empty(t, r.resets, "no reset before reconcile returns")
		send(t, results, nil, "reconcile result")
		recv(t, r.resets, "backoff reset")
	}

	cancel()
	assert.NoError(t, recv(t, done, "loop exit"), "cancellation is a clean stop")
	assert.Empty(t, r.resets)
}

func TestReconcileErrorEndsLoopWithoutReset(t *testing.T) {
	r := newLoopRuntime()
	calls, results, done := startLoop(t.Context(), r, nil)

	errFail := errors.New("fail")
	send(t, r.events, controller.ReconcileEvent{}, "Runtime wake-up")
	recv(t, calls, "reconcile")
	send(t, results, errFail, "reconcile result")
	assert.ErrorIs(t, recv(t, done, "loop exit"), errFail)
	assert.Empty(t, r.resets, "a failed reconcile does not reset the backoff")
}

func TestNoReconcileWithoutWakeUp(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	r := newLoopRuntime()
	_, _, done := startLoop(ctx, r, nil)

	// A reconcile would block on the unanswered calls channel, so the loop
	// exits only if it waited for a wake-up.
	cancel()
	assert.NoError(t, recv(t, done, "loop exit"))
}
