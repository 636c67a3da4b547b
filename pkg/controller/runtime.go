package controller

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// ReconcileEvent wakes a Controller up: something it depends on may have
// changed, so it should reconcile everything.
type ReconcileEvent struct{}

// Runtime is what the Runtime gives a Controller's Run.
type Runtime interface {
	// EventCh delivers one ReconcileEvent at start and one after any
	// change to an input; changes that arrive while the controller is busy
	// coalesce into one wake-up (rule C2).
	EventCh() <-chan ReconcileEvent
	// QueueReconcile queues a ReconcileEvent (coalescing like any other).
	QueueReconcile()
	// ResetRestartBackoff resets the restart backoff, typically after a
	// successful reconcile (rule C6).
	ResetRestartBackoff()
	// UpdateInputs replaces the controller's dynamic inputs; changes of
	// the new inputs wake it without a restart (rule C7). The declared
	// (static) inputs stay.
	UpdateInputs(inputs []Input) error

	Reader
	UncachedReader
	Writer
	OutputTracker
}

// QRuntime is what the Runtime gives a QController's Reconcile and MapInput.
//
// The QRuntime the Runtime hands out also implements [UncachedReader] (the
// contract fixes QRuntime as a ReaderWriter):
//
//	r.(controller.UncachedReader).GetUncached(ctx, ptr)
type QRuntime interface {
	ReaderWriter
}

// UncachedReader reads inputs through to the state, bypassing the
// Runtime's cache (a Controller's Runtime has it; a QController's QRuntime
// implements it) (runtime.WithCachedResource): for a read that must see
// the state itself — a cleanup that must never act on a cache miss. Only
// inputs declared with [Input.Uncached] may be read so (so that the
// dependency graph, and the access rules, say which controllers read
// around the cache): GetUncached of a resource, or ListUncached of a kind,
// that no such input covers is an invalid-class error
// (state.IsInvalidError) naming the controller, the call and the fix;
// nothing is read. Otherwise the calls behave as Reader's Get and List,
// options and errors included; for a kind that is not cached they are
// Get and List.
type UncachedReader interface {
	GetUncached(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error)
	ListUncached(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error)
}

// Reader reads resources through the controller's access scope (rule C3):
// declared inputs and the controller's own outputs. A Reader is safe for
// concurrent use (a Run may read from several goroutines; a QController's
// Reconcile calls run in parallel up to its concurrency).
//
// Errors are classified, and the predicates see through wrapping:
//   - [IsAccessDeniedError]: the resource or kind is outside the scope
//     (an undeclared input, a List of an input declared with an ID);
//   - state.IsNotFoundError: Get of a resource that does not exist;
//   - state.IsInvalidError: a nil or empty pointer or kind;
//   - the context's error when ctx is done; otherwise the state's error.
type Reader interface {
	// Get returns a private copy of the resource (a shared read-only
	// snapshot with state.WithReadOnlyGet, rule S7).
	Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error)
	// List returns the resources of the kind sorted by ID (copies, or
	// snapshots with state.WithReadOnlyList).
	List(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error)
	// ContextWithTeardown returns a context canceled when the resource
	// starts tearing down or is destroyed (rule S4).
	ContextWithTeardown(ctx context.Context, ptr resource.Pointer) (context.Context, error)
}

// Writer writes resources through the controller's access scope (rules
// C3–C5): declared outputs, owned by the controller, plus finalizers on
// strong and primary inputs. A Writer is safe for concurrent use. A
// refused or failed call writes nothing.
//
// Errors are classified, and the predicates see through wrapping:
//   - [IsAccessDeniedError]: a write to a type that is not a declared
//     output, or a finalizer change on a resource that is neither a strong
//     input, a QController primary input nor one of the controller's own
//     outputs (rules C3, C5);
//   - state.IsConflictError: Create of a resource that exists, Update from
//     a stale version; with state.IsOwnerConflictError when the resource is
//     owned by another controller (rule C4), state.IsPhaseConflictError
//     when it is not in the expected phase, state.IsPendingFinalizersError
//     for Destroy while finalizers remain (rules S1–S3);
//   - state.IsNotFoundError: Update, Teardown, Destroy or a finalizer change
//     of a resource that does not exist;
//   - state.IsInvalidError: a nil or empty resource, pointer or finalizer,
//     or a resource the state cannot store;
//   - the context's error when ctx is done; otherwise the state's error.
type Writer interface {
	Create(ctx context.Context, r resource.Resource, opts ...CreateOption) error
	Update(ctx context.Context, r resource.Resource) error
	Modify(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...ModifyOption) error
	ModifyWithResult(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...ModifyOption) (resource.Resource, error)
	Teardown(ctx context.Context, ptr resource.Pointer, opts ...RemoveOption) (bool, error)
	Destroy(ctx context.Context, ptr resource.Pointer, opts ...RemoveOption) error
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
	// are gone. An output left tearing down is not revived by a later
	// write: Modify refuses it (a phase conflict) until it is destroyed.
	CleanupOutputs(ctx context.Context, outputs ...resource.Kind) error
}
