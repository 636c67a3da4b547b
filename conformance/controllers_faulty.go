package conformance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
)

// faultyRuns records the runs of a controller that fails or panics in its
// first runs, and runs a counting event loop afterwards.
type faultyRuns struct {
	mu     sync.Mutex
	starts []time.Time // guarded by mu: when each call of Run started
	wakes  int         // guarded by mu: ReconcileEvents received by working runs
}

// start records a run and returns its number (1 for the first).
func (f *faultyRuns) start() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts = append(f.starts, time.Now())
	return len(f.starts)
}

// work counts ReconcileEvents until ctx is canceled, resetting the restart
// backoff after each.
func (f *faultyRuns) work(ctx context.Context, r controller.Runtime) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		f.mu.Lock()
		f.wakes++
		f.mu.Unlock()
		r.ResetRestartBackoff()
	}
}

func (f *faultyRuns) runStarts() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.starts)
}

func (f *faultyRuns) wakeCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wakes
}

// FailingController is a Controller whose first Failures runs return an
// error wrapping [ErrInjected] at once; later runs count ReconcileEvents
// until their context is canceled, resetting the restart backoff after
// each (rule C6).
type FailingController struct {
	// ControllerName is the controller's name (default
	// "FailingController").
	ControllerName string
	// ControllerInputs are the declared inputs (none by default).
	ControllerInputs []controller.Input
	// Failures is the number of runs that fail.
	Failures int
	// ResetBackoff makes each failing run call ResetRestartBackoff before
	// it fails, so that every restart waits the initial backoff.
	ResetBackoff bool

	runs faultyRuns
}

// Name implements controller.Controller.
func (c *FailingController) Name() string { return orDefault(c.ControllerName, "FailingController") }

// Inputs implements controller.Controller.
func (c *FailingController) Inputs() []controller.Input { return slices.Clone(c.ControllerInputs) }

// Outputs implements controller.Controller: none.
func (c *FailingController) Outputs() []controller.Output { return nil }

// Run fails during the first Failures runs, then counts wake-ups.
func (c *FailingController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	if n := c.runs.start(); n <= c.Failures {
		if c.ResetBackoff {
			r.ResetRestartBackoff()
		}
		return fmt.Errorf("run %d of %s: %w", n, c.Name(), ErrInjected)
	}
	return c.runs.work(ctx, r)
}

// RunStarts returns when each call of Run started, in order.
func (c *FailingController) RunStarts() []time.Time { return c.runs.runStarts() }

// Wakes returns how many ReconcileEvents the working runs received.
func (c *FailingController) Wakes() int { return c.runs.wakeCount() }

// PanickingController is a Controller whose first Panics runs (default 1:
// zero means one) panic at once; later runs count ReconcileEvents until
// their context is canceled (rule C6).
type PanickingController struct {
	// ControllerName is the controller's name (default
	// "PanickingController").
	ControllerName string
	// ControllerInputs are the declared inputs (none by default).
	ControllerInputs []controller.Input
	// Panics is the number of runs that panic (zero means 1).
	Panics int

	runs faultyRuns
}

// Name implements controller.Controller.
func (c *PanickingController) Name() string {
	return orDefault(c.ControllerName, "PanickingController")
}

// Inputs implements controller.Controller.
func (c *PanickingController) Inputs() []controller.Input { return slices.Clone(c.ControllerInputs) }

// Outputs implements controller.Controller: none.
func (c *PanickingController) Outputs() []controller.Output { return nil }

// Run panics during the first Panics runs, then counts wake-ups.
func (c *PanickingController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	if n := c.runs.start(); n <= orDefault(c.Panics, 1) {
		panic(fmt.Sprintf("conformance: injected panic in run %d of %s", n, c.Name()))
	}
	return c.runs.work(ctx, r)
}

// RunStarts returns when each call of Run started, in order.
func (c *PanickingController) RunStarts() []time.Time { return c.runs.runStarts() }

// Wakes returns how many ReconcileEvents the working runs received.
func (c *PanickingController) Wakes() int { return c.runs.wakeCount() }

var (
	_ controller.Controller = (*FailingController)(nil)
	_ controller.Controller = (*PanickingController)(nil)
)
