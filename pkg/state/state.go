package state

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
)

// CoreState is the core of a state: the operations every backend implements.
// [WrapCore] builds the rest of [State] on top of any CoreState.
//
// All methods are safe for concurrent use (rule S14). A resource passed to
// Create or Update is copied before it is stored, and every resource a read
// or a watch returns is a copy the caller owns (rule S7).
type CoreState interface {
	// Get returns the resource ptr points to, or a not-found error.
	Get(ctx context.Context, ptr resource.Pointer, opts ...GetOption) (resource.Resource, error)
	// List returns the resources of a kind that match the options, sorted
	// by ID (rule S12a).
	List(ctx context.Context, kind resource.Kind, opts ...ListOption) (resource.List, error)
	// Create stores a new resource (rule S1).
	Create(ctx context.Context, r resource.Resource, opts ...CreateOption) error
	// Update replaces a stored resource (rule S2).
	Update(ctx context.Context, r resource.Resource, opts ...UpdateOption) error
	// Destroy removes a resource (rule S3).
	Destroy(ctx context.Context, ptr resource.Pointer, opts ...DestroyOption) error
	// Watch streams the changes of one resource to ch until ctx is
	// canceled (rules S8, S11, S12, S13). It returns once the watch is set
	// up; events are delivered by goroutines that exit when ctx is done.
	Watch(ctx context.Context, ptr resource.Pointer, ch chan<- Event, opts ...WatchOption) error
	// WatchKind streams the changes of a kind to ch until ctx is canceled
	// (rules S9–S13).
	WatchKind(ctx context.Context, kind resource.Kind, ch chan<- Event, opts ...WatchKindOption) error
	// WatchKindAggregated is WatchKind delivering events in batches: each
	// batch holds the events that were available at once, in order.
	WatchKindAggregated(ctx context.Context, kind resource.Kind, ch chan<- []Event, opts ...WatchKindOption) error
}

// UpdaterFunc modifies a resource in place; an error aborts the update.
type UpdaterFunc func(resource.Resource) error

// State is a [CoreState] plus the helpers built on it. [WrapCore] provides
// them for any CoreState.
type State interface {
	CoreState

	// UpdateWithConflicts reads the resource, applies updater to it and
	// writes it back, retrying on version conflicts. When the updater
	// leaves the resource equal nothing is written (rule S6) and the
	// current resource is returned.
	UpdateWithConflicts(ctx context.Context, ptr resource.Pointer, updater UpdaterFunc, opts ...UpdateOption) (resource.Resource, error)
	// WatchFor blocks until the resource satisfies every condition and
	// returns it, or until ctx is done.
	WatchFor(ctx context.Context, ptr resource.Pointer, conds ...WatchForConditionFunc) (resource.Resource, error)
	// Teardown moves the resource to the tearing-down phase and reports
	// whether its finalizers are empty (rule S4).
	Teardown(ctx context.Context, ptr resource.Pointer, opts ...TeardownOption) (bool, error)
	// TeardownAndDestroy tears the resource down, waits until its
	// finalizers are empty and destroys it (rule S4). It is idempotent: it
	// returns nil once the resource is gone, whoever destroyed it, and a
	// not-found error only when the resource did not exist at any moment
	// of the call.
	TeardownAndDestroy(ctx context.Context, ptr resource.Pointer, opts ...TeardownAndDestroyOption) error
	// AddFinalizer adds finalizers, in any phase, keeping the owner
	// (rule S5).
	AddFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error
	// RemoveFinalizer removes finalizers, in any phase, keeping the owner
	// (rule S5).
	RemoveFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error
	// ContextWithTeardown returns a context canceled when the resource
	// starts tearing down or is destroyed (rule S4).
	ContextWithTeardown(ctx context.Context, ptr resource.Pointer) (context.Context, error)
	// Modify creates emptyResource after applying fn to it when the
	// resource is absent, or applies fn to the stored resource and writes
	// it back when it changed (rule S6). fn is handed a private copy; the
	// state stores a copy of it (rule S7).
	Modify(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...UpdateOption) error
	// ModifyWithResult is Modify returning the resource as stored after
	// the call.
	ModifyWithResult(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...UpdateOption) (resource.Resource, error)
}
