package controller

// ErrorReporter is an optional interface of a [Runtime]; the Runtime's
// Runtime implements it. A Controller that handles a failure by itself —
// it retries one failing item on its own schedule instead of failing Run,
// as the generic transform controller does — reports the failure with
// ReportError, so that it shows in the controller's status (its last error
// and when it happened) as a failed Run would. Reporting neither logs nor
// restarts anything: logging the failure is the controller's business.
// ReportError ignores a nil error and is safe for concurrent use.
type ErrorReporter interface {
	ReportError(err error)
}
