package conformance

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// The example controllers of this package are small, deterministic
// Controllers and QControllers that [RuntimeSuite] drives to check the C, Q
// and E rules; they are exported so that other Runtimes' tests and users'
// examples can use them too. Every controller is used through a pointer,
// is configured by its exported fields before it is registered (fields
// must not change afterwards), and reports what it observed through
// methods that are safe for concurrent use. A zero ControllerName means the
// controller's type name.

// ErrInjected is wrapped by every error the example controllers return on
// purpose (FailingController, QFailingController, QMappedController).
var ErrInjected = errors.New("conformance: injected failure")

// Namespaces the example controllers use by default besides
// [DefaultNamespace].
const (
	// SumNamespace is where [SumController] writes its sum by default.
	SumNamespace resource.Namespace = "sum"
	// MappedNamespace is where [QMappedController] and
	// [QPanickingController] read their mapped StrResources by default.
	MappedNamespace resource.Namespace = "mapped"
)

// orDefault returns v, or def when v is the zero value.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// WakeCounterController is a Controller with the inputs and outputs it is
// given that does nothing but count its runs and the ReconcileEvents it
// receives. With a Gate it stays busy after each wake-up until the test lets
// it go, which makes coalescing observable (rule C2).
type WakeCounterController struct {
	// ControllerName is the controller's name (default
	// "WakeCounterController").
	ControllerName string
	// ControllerInputs are the declared inputs.
	ControllerInputs []controller.Input
	// ControllerOutputs are the declared outputs.
	ControllerOutputs []controller.Output
	// Gate, when set, is received from once after every ReconcileEvent:
	// the controller is busy handling the wake-up until something is sent
	// on Gate (or its context ends).
	Gate <-chan struct{}

	runs   atomic.Int64 // calls of Run
	active atomic.Int64 // calls of Run not yet returned
	wakes  atomic.Int64 // ReconcileEvents received
}

// Name implements controller.Controller.
func (c *WakeCounterController) Name() string {
	return orDefault(c.ControllerName, "WakeCounterController")
}

// Inputs implements controller.Controller.
func (c *WakeCounterController) Inputs() []controller.Input { return slices.Clone(c.ControllerInputs) }

// Outputs implements controller.Controller.
func (c *WakeCounterController) Outputs() []controller.Output {
	return slices.Clone(c.ControllerOutputs)
}

// Run counts every ReconcileEvent until ctx is canceled; it returns nil.
func (c *WakeCounterController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	c.runs.Add(1)
	c.active.Add(1)
	defer c.active.Add(-1)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		c.wakes.Add(1)
		if c.Gate != nil {
			select {
			case <-ctx.Done():
				return nil
			case <-c.Gate:
			}
		}
	}
}

// Runs returns how many times Run was called.
func (c *WakeCounterController) Runs() int { return int(c.runs.Load()) }

// Active returns how many calls of Run have not returned yet.
func (c *WakeCounterController) Active() int { return int(c.active.Load()) }

// Wakes returns how many ReconcileEvents Run received.
func (c *WakeCounterController) Wakes() int { return int(c.wakes.Load()) }

var _ controller.Controller = (*WakeCounterController)(nil)
