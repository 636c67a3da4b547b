package controller

// Validator is an optional interface of a [Controller] or [QController]
// that can tell, before it ever runs, that its configuration cannot work:
// a required function missing, options that contradict each other.
//
// The Runtime calls Validate once, at RegisterController or
// RegisterQController, after the declaration methods (Name, Inputs,
// Outputs, Settings). A non-nil error refuses the registration: the Runtime
// returns an error of the invalid class (state.IsInvalidError) that names
// the controller and wraps Validate's error, which names the setting at
// fault; nothing is registered, and the controller never runs. A Validate
// that panics is a refused registration too. A static misconfiguration thus
// fails once, at startup, instead of becoming a Run (or Reconcile) that
// fails and is retried forever.
//
// Validate must be cheap, must not block, and must return the same answer
// every time: it checks the controller's own configuration, never the
// state. Failures that depend on the resources (a bad input, a refused
// write) belong to Run and Reconcile.
//
// A controller that wraps another (a decorator embedding it) forwards
// Validate to the inner one, or the check is lost.
type Validator interface {
	Validate() error
}
