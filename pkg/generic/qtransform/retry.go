package qtransform

import "github.com/resgraph/resgraph/pkg/controller"

// WithRetryPolicy sets how the Runtime retries the controller's failed
// items (see controller.RetryPolicy: a maximum number of attempts after
// which an item waits for its next change, whether a change abandons a
// retry, the backoff bounds). Without it the Runtime's defaults apply.
func WithRetryPolicy(p controller.RetryPolicy) ControllerOption {
	return func(o *ControllerOptions) { o.retry = p }
}

// RetryPolicy returns the policy set with [WithRetryPolicy], or the zero
// policy (the Runtime's defaults); it makes the controller a
// controller.RetryPolicyProvider.
func (c *QController[I, O]) RetryPolicy() controller.RetryPolicy { return c.opts.retry }
