package qrunner

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
)

// runHook runs the controller's RunHook (controller.QRunHook), if it has
// one, until it returns nil or ctx ends; a failure (an error or a panic)
// is logged and the hook called again after the item backoff, which
// starts over once a call ran for longer than its maximum. Every call
// waits at the scheduler's gate first (a simulator orders it). A
// controller that says it has no hook to run (a HasRunHook method
// returning false, as a generic QController built without one) is not
// called, and adds no gate.
func (c *Runner) runHook(ctx context.Context) {
	if !c.hasRunHook() {
		return
	}
	h := c.cfg.Ctrl.(controller.QRunHook)
	b := c.cfg.Retry.Backoff.OrDefault()
	var failures uint32
	for ctx.Err() == nil {
		if !c.cfg.Scheduler.Gate(ctx, sched.Gate{Kind: sched.GateHook, Controller: c.cfg.Name}) {
			return
		}
		start := time.Now()
		var err error
		p := usercode.Call(func() { err = h.RunHook(ctx, c.logger, c.cfg.Adapter) })
		if ctx.Err() != nil || (p == nil && err == nil) {
			return
		}
		if time.Since(start) > b.Max {
			failures = 0
		}
		delay := b.Delay(failures)
		failures++
		if p != nil {
			c.elog.Error("RunHook panicked; calling it again after backoff", zap.String("panic", usercode.Sprint(p.Value)),
				zap.Duration("backoff", delay), outcome.StackField(p))
		} else {
			c.elog.Warn("RunHook failed; calling it again after backoff", zap.String("error", usercode.ErrorText(err)), zap.Duration("backoff", delay))
		}
		if !retry.Wait(ctx, delay) {
			return
		}
	}
}

// hasRunHook reports whether the controller has a RunHook to run: it
// implements controller.QRunHook and does not say it has none (a
// HasRunHook method returning false, as a generic QController built
// without one).
func (c *Runner) hasRunHook() bool {
	h, ok := c.cfg.Ctrl.(controller.QRunHook)
	if !ok {
		return false
	}
	if p, ok := h.(interface{ HasRunHook() bool }); ok {
		has := true // a panic of the user's method: call RunHook as any other
		usercode.Call(func() { has = p.HasRunHook() })
		return has
	}
	return true
}

// shutdownHook calls the controller's ShutdownHook
// (controller.QShutdownHook), if it has one; a panic is logged.
func (c *Runner) shutdownHook() {
	h, ok := c.cfg.Ctrl.(controller.QShutdownHook)
	if !ok {
		return
	}
	if p := usercode.Call(func() { h.ShutdownHook(c.logger) }); p != nil {
		c.elog.Error("ShutdownHook panicked", zap.String("panic", usercode.Sprint(p.Value)), outcome.StackField(p))
	}
}
