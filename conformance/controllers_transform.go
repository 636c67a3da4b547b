package conformance

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// IntToStrController is a Controller that keeps, for every [IntResource] in
// InputNamespace, a [StrResource] with the same ID in OutputNamespace whose
// value is the int formatted in decimal. Each pass tracks its outputs and
// cleans up the StrResources of OutputNamespace it owns whose IntResource
// is gone (rule C8); outputs with finalizers are torn down first and
// destroyed once the finalizers are gone, which the controller learns
// through a destroy-ready input on its outputs (rule C9).
//
// Inputs: IntResources in InputNamespace (weak), StrResources in
// OutputNamespace (destroy-ready). Outputs: StrResources (exclusive). A pass
// that fails makes Run return the error (rule C6); a pass that succeeds
// resets the restart backoff.
type IntToStrController struct {
	// ControllerName is the controller's name (default
	// "IntToStrController").
	ControllerName string
	// InputNamespace holds the IntResources (default [DefaultNamespace]).
	InputNamespace resource.Namespace
	// OutputNamespace holds the StrResources (default [DefaultNamespace]).
	OutputNamespace resource.Namespace

	mu         sync.Mutex
	reconciles int   // guarded by mu: passes that succeeded
	lastErr    error // guarded by mu: the error of the last pass
}

// Name implements controller.Controller.
func (c *IntToStrController) Name() string { return orDefault(c.ControllerName, "IntToStrController") }

func (c *IntToStrController) inNS() resource.Namespace {
	return orDefault(c.InputNamespace, DefaultNamespace)
}

func (c *IntToStrController) outNS() resource.Namespace {
	return orDefault(c.OutputNamespace, DefaultNamespace)
}

// Inputs implements controller.Controller.
func (c *IntToStrController) Inputs() []controller.Input {
	return []controller.Input{
		{Namespace: c.inNS(), Type: IntResourceType, Kind: controller.InputWeak},
		{Namespace: c.outNS(), Type: StrResourceType, Kind: controller.InputDestroyReady},
	}
}

// Outputs implements controller.Controller.
func (c *IntToStrController) Outputs() []controller.Output {
	return []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}}
}

// Run reconciles on every ReconcileEvent until ctx is canceled.
func (c *IntToStrController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		err := c.reconcile(ctx, r)
		c.mu.Lock()
		c.lastErr = err
		if err == nil {
			c.reconciles++
		}
		c.mu.Unlock()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		r.ResetRestartBackoff()
	}
}

func (c *IntToStrController) reconcile(ctx context.Context, r controller.Runtime) error {
	r.StartTrackingOutputs()
	list, err := r.List(ctx, resource.NewKind(c.inNS(), IntResourceType))
	if err != nil {
		return fmt.Errorf("list inputs: %w", err)
	}
	for _, item := range list.Items {
		in, err := as[*IntResource](item)
		if err != nil {
			return err
		}
		value := strconv.Itoa(in.TypedSpec().Value)
		out := NewStrResource(c.outNS(), in.Metadata().ID(), "")
		if err := r.Modify(ctx, out, func(res resource.Resource) error {
			s, err := as[*StrResource](res)
			if err != nil {
				return err
			}
			s.TypedSpec().Value = value
			return nil
		}); err != nil {
			return fmt.Errorf("write %s: %w", resource.String(out), err)
		}
	}
	if err := r.CleanupOutputs(ctx, resource.NewKind(c.outNS(), StrResourceType)); err != nil {
		return fmt.Errorf("cleanup outputs: %w", err)
	}
	return nil
}

// Reconciles returns how many passes succeeded.
func (c *IntToStrController) Reconciles() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconciles
}

// Err returns the error of the last pass (nil if it succeeded).
func (c *IntToStrController) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// SumID is the ID of the IntResource [SumController] writes.
const SumID resource.ID = "sum"

// SumController is a Controller that sums the values of every
// [IntResource] in InputNamespace into the IntResource [SumID] in
// OutputNamespace.
//
// Inputs: IntResources in InputNamespace (weak). Outputs: IntResources
// (exclusive). The namespaces must differ (Run fails otherwise, as the sum
// would count itself).
type SumController struct {
	// ControllerName is the controller's name (default "SumController").
	ControllerName string
	// InputNamespace holds the summed IntResources (default
	// [DefaultNamespace]).
	InputNamespace resource.Namespace
	// OutputNamespace holds the sum (default [SumNamespace]).
	OutputNamespace resource.Namespace

	mu         sync.Mutex
	reconciles int // guarded by mu: passes that succeeded
}

// Name implements controller.Controller.
func (c *SumController) Name() string { return orDefault(c.ControllerName, "SumController") }

func (c *SumController) inNS() resource.Namespace {
	return orDefault(c.InputNamespace, DefaultNamespace)
}

func (c *SumController) outNS() resource.Namespace {
	return orDefault(c.OutputNamespace, SumNamespace)
}

// Inputs implements controller.Controller.
func (c *SumController) Inputs() []controller.Input {
	return []controller.Input{{Namespace: c.inNS(), Type: IntResourceType, Kind: controller.InputWeak}}
}

// Outputs implements controller.Controller.
func (c *SumController) Outputs() []controller.Output {
	return []controller.Output{{Type: IntResourceType, Kind: controller.OutputExclusive}}
}

// Run writes the sum on every ReconcileEvent until ctx is canceled.
func (c *SumController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	if c.inNS() == c.outNS() {
		return fmt.Errorf("SumController %s: input and output namespace are both %q", c.Name(), c.inNS())
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		if err := c.reconcile(ctx, r); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		c.mu.Lock()
		c.reconciles++
		c.mu.Unlock()
		r.ResetRestartBackoff()
	}
}

func (c *SumController) reconcile(ctx context.Context, r controller.Runtime) error {
	list, err := r.List(ctx, resource.NewKind(c.inNS(), IntResourceType))
	if err != nil {
		return fmt.Errorf("list inputs: %w", err)
	}
	sum := 0
	for _, item := range list.Items {
		in, err := as[*IntResource](item)
		if err != nil {
			return err
		}
		sum += in.TypedSpec().Value
	}
	return r.Modify(ctx, NewIntResource(c.outNS(), SumID, 0), func(res resource.Resource) error {
		out, err := as[*IntResource](res)
		if err != nil {
			return err
		}
		out.TypedSpec().Value = sum
		return nil
	})
}

// Reconciles returns how many passes succeeded.
func (c *SumController) Reconciles() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconciles
}

// as converts r to T, or returns an error naming both types.
func as[T resource.Resource](r resource.Resource) (T, error) {
	t, ok := r.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("resource %s is a %T, not a %T", resource.String(r), r, zero)
	}
	return t, nil
}

var (
	_ controller.Controller = (*IntToStrController)(nil)
	_ controller.Controller = (*SumController)(nil)
)
