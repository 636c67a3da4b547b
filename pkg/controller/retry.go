package controller

import "time"

// RetryPolicy is how the failed items of one controller are retried: a
// QController's Reconcile or MapInput that returns an error (other than a
// RequeueError without one) or panics, and the failing inputs that a
// Controller retries inside its Run (the generic transform and cleanup
// controllers, which receive the policy from the Runtime). The zero value
// is the Runtime's default behaviour (rule Q3): retry forever with the
// Runtime's per-item backoff, and a new change to an item waiting out a
// retry runs it at once, its failures still counting.
//
// A controller gets a policy by implementing [RetryPolicyProvider].
type RetryPolicy struct {
	// MaxAttempts, when not zero, parks an item after that many consecutive
	// failed runs: it is not retried again until its next change, which
	// queues it as a fresh item (attempts and backoff start over). A run
	// that does not fail (a success, a RequeueError without an error)
	// starts the count over; a RequeueError wrapping an error is a failed
	// run. A parked item is failing: it is reported in the controller's
	// status (FailingItems, ParkedItems and the parked items with their
	// last error) until it runs again without a failure. A change that
	// arrives while the last attempt runs is newer than that run: the item
	// is not parked but runs again as a fresh item.
	MaxAttempts uint
	// ChangeAbandonsRetry makes a new change to an item that is failing —
	// waiting out its backoff, or running — abandon its retry: the item
	// runs now (after the current run, if one is in flight) as a fresh one,
	// with its attempts and backoff started over. By default (false) the
	// change runs the item now too, but its failures keep counting, so an
	// item that fails on every change still backs off and, with
	// MaxAttempts, is parked.
	ChangeAbandonsRetry bool
	// BackoffInitial and BackoffMax bound this controller's per-item
	// backoff: the delay after an item's first consecutive failure, doubling
	// per further failure, capped at BackoffMax. Zero means the Runtime's
	// bound (runtime.WithQueueBackoff); a negative value, or a BackoffMax
	// below the resulting initial delay, is refused at registration.
	BackoffInitial, BackoffMax time.Duration
}

// RetryPolicyProvider is an optional interface of a [QController] or a
// [Controller] that sets its own [RetryPolicy]. The Runtime calls
// RetryPolicy once, at registration, after Validate (see [Validator]); a
// policy that
// cannot work (a negative duration, a maximum below the initial delay), or
// a RetryPolicy that panics, refuses the registration with an invalid-class
// error naming the controller. A controller without it gets the zero
// RetryPolicy: the Runtime's defaults. A controller that wraps another
// forwards RetryPolicy to the inner one, or the policy is lost.
type RetryPolicyProvider interface {
	RetryPolicy() RetryPolicy
}
