package controller

import (
	"context"

	"go.uber.org/zap"
)

// QRunHook is an optional interface of a QController: the Runtime calls
// RunHook once the controller starts serving (each time it does: at Run,
// and at each new leadership term), on a goroutine of its own, beside
// its workers, with the controller's QRuntime and a context that ends
// when the controller stops. It is where long-running work that is not
// one item's lives — a poller, a per-input task runner
// (pkg/controller/task) — reading the controller's inputs and writing its
// outputs like Reconcile. RunHook returning nil ends it; an error or a
// panic is logged, and RunHook is called again after the controller's
// item backoff (its retry policy, or runtime.WithQueueBackoff), the
// backoff growing with each failure in a row and starting over once a
// call ran for longer than the backoff's maximum.
type QRunHook interface {
	RunHook(ctx context.Context, logger *zap.Logger, r QRuntime) error
}

// QShutdownHook is an optional interface of a QController: the Runtime
// calls ShutdownHook once the controller stopped serving — after every
// worker and the RunHook have returned — to stop what the controller
// started outside its items (the tasks of a task runner). A panic is
// logged.
type QShutdownHook interface {
	ShutdownHook(logger *zap.Logger)
}
