package conformance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// QFailingController is a QController whose Reconcile fails for a pointer
// as many times as [QFailingController.AddFailures] asked for its ID, and
// succeeds otherwise. It records when every Reconcile started and how many
// succeeded, per ID (rule Q3).
//
// Inputs: IntResources in InputNamespace (primary). Outputs: none.
type QFailingController struct {
	// ControllerName is the controller's name (default
	// "QFailingController").
	ControllerName string
	// InputNamespace holds the IntResources (default [DefaultNamespace]).
	InputNamespace resource.Namespace
	// RequeueInterval, when positive, makes each injected outcome a
	// controller.NewRequeueInterval(RequeueInterval) (a requeue that is
	// not a failure) instead of an error wrapping [ErrInjected].
	RequeueInterval time.Duration

	mu        sync.Mutex
	remaining map[resource.ID]int         // guarded by mu: failures still to inject per ID
	attempts  map[resource.ID][]time.Time // guarded by mu: start of every Reconcile per ID
	successes map[resource.ID]int         // guarded by mu: successful Reconciles per ID
}

// Name implements controller.QController.
func (c *QFailingController) Name() string {
	return orDefault(c.ControllerName, "QFailingController")
}

// Settings implements controller.QController.
func (c *QFailingController) Settings() controller.QSettings {
	return controller.QSettings{Inputs: []controller.Input{{
		Namespace: orDefault(c.InputNamespace, DefaultNamespace), Type: IntResourceType, Kind: controller.InputQPrimary,
	}}}
}

func (c *QFailingController) init() {
	if c.remaining == nil {
		c.remaining = map[resource.ID]int{}
		c.attempts = map[resource.ID][]time.Time{}
		c.successes = map[resource.ID]int{}
	}
}

// AddFailures makes the next n Reconciles of id fail (in addition to the
// failures still pending). It may be called before or during Run.
func (c *QFailingController) AddFailures(id resource.ID, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	c.remaining[id] += n
}

// Reconcile fails while failures are pending for ptr's ID.
func (c *QFailingController) Reconcile(_ context.Context, _ *zap.Logger, _ controller.QRuntime, ptr resource.Pointer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	id := ptr.ID()
	c.attempts[id] = append(c.attempts[id], time.Now())
	if c.remaining[id] > 0 {
		c.remaining[id]--
		if c.RequeueInterval > 0 {
			return controller.NewRequeueInterval(c.RequeueInterval)
		}
		return fmt.Errorf("reconcile %d of %s: %w", len(c.attempts[id]), resource.PointerString(ptr), ErrInjected)
	}
	c.successes[id]++
	return nil
}

// MapInput maps nothing (the controller has no mapped inputs).
func (c *QFailingController) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// Attempts returns when each Reconcile of id started, in order.
func (c *QFailingController) Attempts(id resource.ID) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.attempts[id])
}

// Successes returns how many Reconciles of id succeeded.
func (c *QFailingController) Successes(id resource.ID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.successes[id]
}

// QPanickingController is a QController whose Reconcile panics on the first
// call for each pointer whose ID is in PanicIDs, and whose MapInput panics
// on the first call for each mapped pointer whose ID is in PanicIDs; every
// other call succeeds (rule Q5: a panic fails that item only).
//
// Inputs: IntResources in InputNamespace (primary), StrResources in
// MappedNamespace (mapped: a StrResource maps to the IntResource with the
// same ID). Outputs: none.
type QPanickingController struct {
	// ControllerName is the controller's name (default
	// "QPanickingController").
	ControllerName string
	// InputNamespace holds the IntResources (default [DefaultNamespace]).
	InputNamespace resource.Namespace
	// MappedNamespace holds the mapped StrResources (default
	// [MappedNamespace]).
	MappedNamespace resource.Namespace
	// PanicIDs are the IDs whose first Reconcile and first MapInput panic.
	PanicIDs []resource.ID

	reconciles callCounts[resource.ID] // Reconcile calls per ID
	successes  callCounts[resource.ID] // Reconcile calls that returned per ID
	mapCalls   callCounts[resource.ID] // MapInput calls per mapped ID
}

// Name implements controller.QController.
func (c *QPanickingController) Name() string {
	return orDefault(c.ControllerName, "QPanickingController")
}

func (c *QPanickingController) inNS() resource.Namespace {
	return orDefault(c.InputNamespace, DefaultNamespace)
}

// Settings implements controller.QController.
func (c *QPanickingController) Settings() controller.QSettings {
	return controller.QSettings{Inputs: []controller.Input{
		{Namespace: c.inNS(), Type: IntResourceType, Kind: controller.InputQPrimary},
		{Namespace: orDefault(c.MappedNamespace, MappedNamespace), Type: StrResourceType, Kind: controller.InputQMapped},
	}}
}

// Reconcile panics on the first call for an ID in PanicIDs.
func (c *QPanickingController) Reconcile(_ context.Context, _ *zap.Logger, _ controller.QRuntime, ptr resource.Pointer) error {
	if n := c.reconciles.add(ptr.ID()); n == 1 && slices.Contains(c.PanicIDs, ptr.ID()) {
		panic("conformance: injected panic in Reconcile of " + resource.PointerString(ptr))
	}
	c.successes.add(ptr.ID())
	return nil
}

// MapInput maps a StrResource to the IntResource with the same ID; it
// panics on the first call for an ID in PanicIDs.
func (c *QPanickingController) MapInput(_ context.Context, _ *zap.Logger, _ controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	if n := c.mapCalls.add(ptr.ID()); n == 1 && slices.Contains(c.PanicIDs, ptr.ID()) {
		panic("conformance: injected panic in MapInput of " + resource.PointerString(ptr))
	}
	return []resource.Pointer{resource.NewPointer(c.inNS(), IntResourceType, ptr.ID())}, nil
}

// Reconciles returns how many times Reconcile was called for id.
func (c *QPanickingController) Reconciles(id resource.ID) int { return c.reconciles.get(id) }

// Successes returns how many Reconciles of id returned without panicking.
func (c *QPanickingController) Successes(id resource.ID) int { return c.successes.get(id) }

// MapCalls returns how many times MapInput was called for the mapped id.
func (c *QPanickingController) MapCalls(id resource.ID) int { return c.mapCalls.get(id) }

// QMappedController is a QController with mapped inputs (rule Q4): a
// StrResource in MappedNamespace, or one of its own StrResource outputs in
// Namespace that is tearing down with no finalizers, maps to the
// IntResource with the same ID in Namespace. The first MapFailures calls
// of MapInput for each mapped pointer fail with an error wrapping
// [ErrInjected]. It records MapInput calls per mapped pointer and
// Reconcile calls per ID; Reconcile does nothing else.
//
// Inputs: IntResources in Namespace (primary), StrResources in
// MappedNamespace (mapped), StrResources in Namespace (mapped
// destroy-ready). Outputs: StrResources (exclusive).
type QMappedController struct {
	// ControllerName is the controller's name (default
	// "QMappedController").
	ControllerName string
	// Namespace holds the primary IntResources and the StrResource
	// outputs (default [DefaultNamespace]).
	Namespace resource.Namespace
	// MappedNamespace holds the mapped StrResources (default
	// [MappedNamespace]); it must differ from Namespace.
	MappedNamespace resource.Namespace
	// MapFailures is the number of MapInput calls that fail per mapped
	// pointer.
	MapFailures int

	mapCalls   callCounts[resource.Pointer] // MapInput calls per mapped pointer
	reconciles callCounts[resource.ID]      // Reconcile calls per ID
}

// Name implements controller.QController.
func (c *QMappedController) Name() string { return orDefault(c.ControllerName, "QMappedController") }

func (c *QMappedController) ns() resource.Namespace { return orDefault(c.Namespace, DefaultNamespace) }

// Settings implements controller.QController.
func (c *QMappedController) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs: []controller.Input{
			{Namespace: c.ns(), Type: IntResourceType, Kind: controller.InputQPrimary},
			{Namespace: orDefault(c.MappedNamespace, MappedNamespace), Type: StrResourceType, Kind: controller.InputQMapped},
			{Namespace: c.ns(), Type: StrResourceType, Kind: controller.InputQMappedDestroyReady},
		},
		Outputs: []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}},
	}
}

// Reconcile counts the call.
func (c *QMappedController) Reconcile(_ context.Context, _ *zap.Logger, _ controller.QRuntime, ptr resource.Pointer) error {
	c.reconciles.add(ptr.ID())
	return nil
}

// MapInput maps a StrResource to the IntResource with the same ID in
// Namespace, after failing MapFailures times for it.
func (c *QMappedController) MapInput(_ context.Context, _ *zap.Logger, _ controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	if n := c.mapCalls.add(resource.PointerOf(ptr)); n <= c.MapFailures {
		return nil, fmt.Errorf("map %s, call %d: %w", resource.PointerString(ptr), n, ErrInjected)
	}
	return []resource.Pointer{resource.NewPointer(c.ns(), IntResourceType, ptr.ID())}, nil
}

// MapCalls returns how many times MapInput was called for the mapped
// pointer ns/StrResourceType/id.
func (c *QMappedController) MapCalls(ns resource.Namespace, id resource.ID) int {
	return c.mapCalls.get(resource.NewPointer(ns, StrResourceType, id))
}

// Reconciles returns how many times Reconcile was called for id.
func (c *QMappedController) Reconciles(id resource.ID) int { return c.reconciles.get(id) }

var (
	_ controller.QController = (*QFailingController)(nil)
	_ controller.QController = (*QPanickingController)(nil)
	_ controller.QController = (*QMappedController)(nil)
)
