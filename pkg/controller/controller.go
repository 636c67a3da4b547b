package controller

import (
	"context"

	"github.com/siderolabs/gen/optional"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/resource"
)

// Controller reconciles all its inputs whenever any of them changes.
//
// Run is called by the Runtime with a [Runtime] scoped to this controller.
// It should loop: wait on [Runtime.EventCh] (or ctx.Done), then reconcile
// everything. Run returns nil when ctx is canceled; an error (or a panic)
// makes the Runtime restart it with exponential backoff (rule C6).
type Controller interface {
	// Name is unique among the controllers of a Runtime and is the owner
	// of every resource the controller writes.
	Name() string
	// Inputs are the resources the controller reads and is woken up for.
	Inputs() []Input
	// Outputs are the resource types the controller writes.
	Outputs() []Output
	// Run is the controller's loop.
	Run(ctx context.Context, r Runtime, logger *zap.Logger) error
}

// QController reconciles one resource pointer at a time from a queue.
//
// Reconcile and MapInput may be called concurrently for different pointers
// (up to Settings().Concurrency at once), never concurrently for the same
// pointer (rule Q2).
type QController interface {
	// Name is unique among the controllers of a Runtime and is the owner
	// of every resource the controller writes.
	Name() string
	// Settings declares inputs, outputs and concurrency; it is read once at
	// registration.
	Settings() QSettings
	// Reconcile reconciles one pointer of a primary input (which may no
	// longer exist). An error requeues the pointer with backoff; a
	// [RequeueError] requeues it after its interval (rule Q3).
	Reconcile(ctx context.Context, logger *zap.Logger, r QRuntime, ptr resource.Pointer) error
	// MapInput maps a changed pointer of a mapped input to the primary
	// pointers to reconcile (rule Q4). A mapped input that was destroyed
	// is passed as a [*DestroyedInput] carrying its last stored version
	// (see [AsDestroyed]).
	MapInput(ctx context.Context, logger *zap.Logger, r QRuntime, ptr resource.Pointer) ([]resource.Pointer, error)
}

// QSettings are a QController's declarations.
type QSettings struct {
	// Inputs: at least one of kind InputQPrimary; InputQMapped and
	// InputQMappedDestroyReady inputs go through MapInput.
	Inputs []Input
	// Outputs are the resource types the controller writes.
	Outputs []Output
	// Concurrency is the number of pointers reconciled in parallel;
	// default 1. Some(0) is a registration error.
	Concurrency optional.Optional[uint]
}

// Engine is the interface of a Runtime: what registers controllers and
// runs them. [github.com/resgraph/resgraph/pkg/runtime.Runtime] implements it, and conformance.RuntimeSuite
// checks any implementation. Engine is the contract's name for it, kept
// as the one exception to the glossary (docs/glossary.md): everywhere else
// the thing that runs controllers is called the Runtime.
type Engine interface {
	// RegisterController registers a Controller (rule C1); it may be
	// called before or during Run (rule E3).
	RegisterController(Controller) error
	// RegisterQController registers a QController (rule C1, Q5).
	RegisterQController(QController) error
	// Run runs every controller until ctx is canceled and returns after all
	// of them stopped (rule E1).
	Run(ctx context.Context) error
}
