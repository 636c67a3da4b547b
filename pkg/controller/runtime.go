package controller

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// ReconcileEvent wakes a Controller up: something it depends on may have
// changed, so it should reconcile everything.
type ReconcileEvent struct{}

// Runtime is what the engine gives a Controller's Run.
type Runtime interface {
	// EventCh delivers one ReconcileEvent at start and one after any
	// change to an input; events that arrive while the controller is busy
	// coalesce into one (rule C2).
	EventCh() <-chan ReconcileEvent
	// QueueReconcile queues a ReconcileEvent (coalescing like any other).
	QueueReconcile()
	// ResetRestartBackoff resets the restart backoff, typically after a
	// successful reconcile (rule C6).
	ResetRestartBackoff()
	// UpdateInputs replaces the controller's dynamic inputs; events for
	// the new inputs flow without a restart (rule C7). The declared
	// (static) inputs stay.
	UpdateInputs(inputs []Input) error

	Reader
	Writer
	OutputTracker
}

// QRuntime is what the engine gives a QController's Reconcile and MapInput.
type QRuntime interface {
	ReaderWriter
}

// Reader reads resources through the controller's access scope (rule C3):
// declared inputs and the controller's own outputs.
type Reader interface {
	Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error)
	List(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error)
	ContextWithTeardown(ctx context.Context, ptr resource.Pointer) (context.Context, error)
}

// Writer writes resources through the controller's access scope (rules
// C3–C5): declared outputs, owned by the controller, plus finalizers on
// strong and primary inputs.
type Writer interface {
	Create(ctx context.Context, r resource.Resource, opts ...CreateOption) error
	Update(ctx context.Context, r resource.Resource) error
	Modify(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...ModifyOption) error
	ModifyWithResult(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...ModifyOption) (resource.Resource, error)
	Teardown(ctx context.Context, ptr resource.Pointer, opts ...DeleteOption) (bool, error)
	Destroy(ctx context.Context, ptr resource.Pointer, opts ...DeleteOption) error
	AddFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error
	RemoveFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error
}

// ReaderWriter reads and writes.
type ReaderWriter interface {
	Reader
	Writer
}

// OutputTracker destroys the outputs a reconcile pass did not write (rule
// C8).
type OutputTracker interface {
	// StartTrackingOutputs starts recording which outputs are written.
	StartTrackingOutputs()
	// CleanupOutputs destroys every output of the given kinds, owned by
	// the controller, not written since StartTrackingOutputs (a Modify
	// that left the output unchanged counts as written). Outputs with
	// finalizers are torn down first and destroyed once the finalizers
	// are gone.
	CleanupOutputs(ctx context.Context, outputs ...resource.Kind) error
}
