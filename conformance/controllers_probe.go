package conformance

import (
	"context"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Access is one call a probe controller makes through its runtime.
type Access struct {
	// Name describes the access in reports, e.g. "Get undeclared kind".
	Name string
	// Do makes the call through the controller's scoped reader and writer
	// and returns its error.
	Do func(ctx context.Context, rw controller.ReaderWriter) error
}

// AccessResult is the outcome of an [Access].
type AccessResult struct {
	// Name is the access's name.
	Name string
	// Err is the error Do returned.
	Err error
}

// accessProbe runs a list of accesses once and records their results.
type accessProbe struct {
	mu      sync.Mutex
	started bool           // guarded by mu: the accesses were started
	done    bool           // guarded by mu: every access returned
	results []AccessResult // guarded by mu: in the order of the accesses
}

// runOnce runs the accesses, in order, the first time it is called.
func (p *accessProbe) runOnce(ctx context.Context, rw controller.ReaderWriter, accesses []Access) {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return
	}
	p.started = true
	p.mu.Unlock()

	results := make([]AccessResult, 0, len(accesses))
	for _, a := range accesses {
		results = append(results, AccessResult{Name: a.Name, Err: a.Do(ctx, rw)})
	}

	p.mu.Lock()
	p.results, p.done = results, true
	p.mu.Unlock()
}

// get returns the results and whether every access returned.
func (p *accessProbe) get() ([]AccessResult, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.results), p.done
}

// AccessProbeController is a Controller that makes a list of accesses
// through its runtime when it handles its first ReconcileEvent and records
// their errors, allowed and refused alike (rules C3, C4, C5). It then waits
// for its context to end.
type AccessProbeController struct {
	// ControllerName is the controller's name (default
	// "AccessProbeController").
	ControllerName string
	// ControllerInputs are the declared inputs.
	ControllerInputs []controller.Input
	// ControllerOutputs are the declared outputs.
	ControllerOutputs []controller.Output
	// Accesses are made in order, once.
	Accesses []Access

	probe accessProbe
}

// Name implements controller.Controller.
func (c *AccessProbeController) Name() string {
	return orDefault(c.ControllerName, "AccessProbeController")
}

// Inputs implements controller.Controller.
func (c *AccessProbeController) Inputs() []controller.Input { return slices.Clone(c.ControllerInputs) }

// Outputs implements controller.Controller.
func (c *AccessProbeController) Outputs() []controller.Output {
	return slices.Clone(c.ControllerOutputs)
}

// Run makes the accesses on the first ReconcileEvent and returns nil when
// ctx is canceled.
func (c *AccessProbeController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		c.probe.runOnce(ctx, r, c.Accesses)
	}
}

// Results returns the results of the accesses, in order, and whether all
// of them returned.
func (c *AccessProbeController) Results() ([]AccessResult, bool) { return c.probe.get() }

// AccessProbeQController is a QController that makes a list of accesses
// through its QRuntime in its first Reconcile and records their errors
// (rule Q5 applied to C3, C4, C5). Its Settings must declare at least one
// InputQPrimary input with a resource in it, so that Reconcile runs.
// MapInput maps nothing.
type AccessProbeQController struct {
	// ControllerName is the controller's name (default
	// "AccessProbeQController").
	ControllerName string
	// ControllerInputs are the declared inputs.
	ControllerInputs []controller.Input
	// ControllerOutputs are the declared outputs.
	ControllerOutputs []controller.Output
	// Accesses are made in order, once.
	Accesses []Access

	probe accessProbe
}

// Name implements controller.QController.
func (c *AccessProbeQController) Name() string {
	return orDefault(c.ControllerName, "AccessProbeQController")
}

// Settings implements controller.QController.
func (c *AccessProbeQController) Settings() controller.QSettings {
	return controller.QSettings{Inputs: slices.Clone(c.ControllerInputs), Outputs: slices.Clone(c.ControllerOutputs)}
}

// Reconcile makes the accesses the first time it is called.
func (c *AccessProbeQController) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, _ resource.Pointer) error {
	c.probe.runOnce(ctx, r, c.Accesses)
	return nil
}

// MapInput maps nothing.
func (c *AccessProbeQController) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// Results returns the results of the accesses, in order, and whether all
// of them returned.
func (c *AccessProbeQController) Results() ([]AccessResult, bool) { return c.probe.get() }

var (
	_ controller.Controller  = (*AccessProbeController)(nil)
	_ controller.QController = (*AccessProbeQController)(nil)
)
