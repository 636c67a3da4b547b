package conformance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// DynamicInputsController is a Controller that replaces its dynamic inputs
// at run time with UpdateInputs (rule C7). [DynamicInputsController.SetDynamicInputs]
// stores a set of inputs; the controller applies it when it next handles a
// ReconcileEvent, and on every wake-up it lists each of its dynamic inputs
// (declared without an ID), which must be allowed (rule C3). It counts
// runs, wake-ups and applied updates and records every error.
type DynamicInputsController struct {
	// ControllerName is the controller's name (default
	// "DynamicInputsController").
	ControllerName string
	// StaticInputs are the declared inputs.
	StaticInputs []controller.Input

	mu      sync.Mutex
	pending []controller.Input // guarded by mu: inputs to apply at the next event
	hasPend bool               // guarded by mu: pending is set
	current []controller.Input // guarded by mu: the dynamic inputs applied last
	errs    []error            // guarded by mu: errors of UpdateInputs and of the lists

	runs    atomic.Int64 // calls of Run
	wakes   atomic.Int64 // ReconcileEvents received
	applied atomic.Int64 // successful UpdateInputs calls
}

// Name implements controller.Controller.
func (c *DynamicInputsController) Name() string {
	return orDefault(c.ControllerName, "DynamicInputsController")
}

// Inputs implements controller.Controller.
func (c *DynamicInputsController) Inputs() []controller.Input { return slices.Clone(c.StaticInputs) }

// Outputs implements controller.Controller: none.
func (c *DynamicInputsController) Outputs() []controller.Output { return nil }

// SetDynamicInputs makes the controller call UpdateInputs(inputs) when it
// handles its next ReconcileEvent. It may be called before or during Run.
func (c *DynamicInputsController) SetDynamicInputs(inputs []controller.Input) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = slices.Clone(inputs)
	c.hasPend = true
}

// Run applies pending inputs and lists the dynamic inputs on every
// ReconcileEvent until ctx is canceled.
func (c *DynamicInputsController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	c.runs.Add(1)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		c.wakes.Add(1)
		c.mu.Lock()
		pending, has := c.pending, c.hasPend
		c.hasPend = false
		c.mu.Unlock()

		if has {
			err := r.UpdateInputs(pending)
			c.mu.Lock()
			if err != nil {
				c.errs = append(c.errs, fmt.Errorf("UpdateInputs: %w", err))
			} else {
				c.current = pending
				c.applied.Add(1)
			}
			c.mu.Unlock()
		}

		c.mu.Lock()
		current := c.current
		c.mu.Unlock()
		for _, in := range current {
			if _, ok := in.ID.Get(); ok {
				continue
			}
			if _, err := r.List(ctx, resource.NewKind(in.Namespace, in.Type)); err != nil && ctx.Err() == nil {
				c.mu.Lock()
				c.errs = append(c.errs, fmt.Errorf("list %s(%s): %w", in.Type, in.Namespace, err))
				c.mu.Unlock()
			}
		}
	}
}

// Runs returns how many times Run was called.
func (c *DynamicInputsController) Runs() int { return int(c.runs.Load()) }

// Wakes returns how many ReconcileEvents Run received.
func (c *DynamicInputsController) Wakes() int { return int(c.wakes.Load()) }

// Applied returns how many UpdateInputs calls succeeded.
func (c *DynamicInputsController) Applied() int { return int(c.applied.Load()) }

// Errors returns every error of UpdateInputs and of the lists so far.
func (c *DynamicInputsController) Errors() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.errs)
}

var _ controller.Controller = (*DynamicInputsController)(nil)
