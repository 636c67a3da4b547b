package xform

import (
	"context"
	"time"

	"github.com/resgraph/resgraph/pkg/internal/requeue"
	"github.com/resgraph/resgraph/pkg/internal/retry"
)

// Retries is the retry schedule of the failing items of a Controller's
// Run, keyed by K, under the controller's retry policy: the Runtime's (its
// item backoff, runtime.WithQueueBackoff, or the controller's own
// controller.RetryPolicy), which the Run context carries, or the default
// policy for a Run the Runtime did not start. Per item it keeps the retry
// counts (retry.Item) and when the item is due again. Only the Run
// goroutine uses it.
type Retries[K comparable] struct {
	policy retry.Policy
	items  map[K]scheduled
}

// scheduled is one failing item.
type scheduled struct {
	due    time.Time
	counts retry.Item
	// parked: its failed runs reached the policy's MaxAttempts; it is not
	// retried until it changes.
	parked bool
}

// NewRetries returns an empty schedule with the retry policy ctx, a Run
// context, carries.
func NewRetries[K comparable](ctx context.Context) *Retries[K] {
	p, _ := retry.FromContext(ctx)
	return &Retries[K]{policy: p, items: map[K]scheduled{}}
}

// Retry is what becomes of an item that failed.
type Retry struct {
	// Delay is when it is retried ([Retries.Next]); 0 when parked.
	Delay time.Duration
	// Failure is set for a failed run; not for a plain requeue (a
	// controller.RequeueError wrapping no error).
	Failure bool
	// Attempts counts its consecutive failed runs.
	Attempts uint32
	// Parked is set when its failed runs reached the policy's
	// MaxAttempts, or it was denied: it waits for its next change
	// ([Retries.Changed]).
	Parked bool
	// Denied is set when its user code was denied access (rule C3): a
	// programming error, parked at once when it can be.
	Denied bool
}

// Failed schedules the retry of k, whose run failed at now with err, as
// the one reading of an item's error has it (package requeue): a
// controller.RequeueError runs it again after its interval (a failure
// only when it wraps an error), anything else after its backoff. With
// canPark, a failed run that reaches the policy's MaxAttempts parks it
// instead, and so does an access denial (rule C3) at once.
func (r *Retries[K]) Failed(k K, now time.Time, err error, canPark bool) Retry {
	v := requeue.Of(err)
	it := r.items[k]
	exhausted := it.counts.Ran(r.policy, v.Result) && canPark
	out := Retry{Failure: v.Result.Failure(), Attempts: it.counts.Attempts(), Denied: v.Result == retry.Denied}
	switch {
	case exhausted:
		it.parked, out.Parked = true, true
	case v.Result == retry.Failed || v.Result == retry.Denied:
		out.Delay = it.counts.Delay(r.policy)
	default:
		out.Delay = v.Interval
	}
	it.due = now.Add(out.Delay)
	r.items[k] = it
	return out
}

// Changed applies a change of k to its retry: a parked item comes back as
// a fresh one; with the policy's ChangeAbandonsRetry a failing item starts
// its counts over; by default they keep counting. The caller runs the
// item now.
func (r *Retries[K]) Changed(k K) {
	it, ok := r.items[k]
	switch {
	case !ok:
	case it.parked:
		delete(r.items, k)
	default:
		it.counts.Changed(r.policy)
		r.items[k] = it
	}
}

// Done forgets k: it succeeded, or is gone.
func (r *Retries[K]) Done(k K) { delete(r.items, k) }

// Waiting reports whether k is failing (scheduled for a retry, or parked),
// and whether it is due at now (a parked item never is).
func (r *Retries[K]) Waiting(k K, now time.Time) (waiting, due bool) {
	it, ok := r.items[k]
	return ok, ok && !it.parked && !it.due.After(now)
}

// Len returns the count of failing items.
func (r *Retries[K]) Len() int { return len(r.items) }

// Next returns when the earliest retry is due; false when none is
// scheduled.
func (r *Retries[K]) Next() (time.Time, bool) {
	var next time.Time
	for _, it := range r.items {
		if !it.parked && (next.IsZero() || it.due.Before(next)) {
			next = it.due
		}
	}
	return next, !next.IsZero()
}
