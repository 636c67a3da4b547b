package transform

import "github.com/resgraph/resgraph/pkg/controller"

// WithRetryPolicy sets how the controller retries its failing inputs (see
// controller.RetryPolicy: the backoff bounds, a maximum number of attempts
// after which an input waits for its next change, whether a change starts
// the input's backoff over). An output that cannot be destroyed is retried
// with the policy's backoff until it goes. Without it the Runtime's
// per-item backoff applies (runtime.WithQueueBackoff). The Runtime refuses a
// policy that cannot work at registration.
func WithRetryPolicy(p controller.RetryPolicy) ControllerOption {
	return func(o *ControllerOptions) { o.retry = p }
}

// RetryPolicy returns the policy set with [WithRetryPolicy], or the zero
// policy (the Runtime's defaults); it makes the controller a
// controller.RetryPolicyProvider.
func (c *Controller[I, O]) RetryPolicy() controller.RetryPolicy { return c.opts.retry }
