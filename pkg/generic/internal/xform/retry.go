package xform

import (
	"errors"
	"time"

	"github.com/resgraph/resgraph/pkg/controller"
)

// Bounds of the per-item retry backoff of the Controllers that retry their
// failing items themselves: the first retry waits RetryBackoffInitial,
// each further consecutive failure twice as long, up to RetryBackoffMax.
// (The engine's defaults for QController items are the same.)
const (
	RetryBackoffInitial = 100 * time.Millisecond
	RetryBackoffMax     = time.Minute
)

// Retries is the retry schedule of the failing items of a Controller's
// Run, keyed by K: per item, the count of consecutive failures and when
// the item is due again. Only the Run goroutine uses it.
type Retries[K comparable] struct {
	items map[K]retry
}

type retry struct {
	due      time.Time
	failures int
}

// NewRetries returns an empty schedule.
func NewRetries[K comparable]() *Retries[K] {
	return &Retries[K]{items: map[K]retry{}}
}

// Failed schedules the retry of k, which failed at now with err, and
// returns the delay and the count of consecutive failures. A
// controller.RequeueError sets the delay to its interval; one that wraps
// no error is not a failure (failures is 0: nothing to report).
func (r *Retries[K]) Failed(k K, now time.Time, err error) (delay time.Duration, failures int) {
	it := r.items[k]
	if rq := requeueOf(err); rq != nil {
		delay = rq.Interval()
		if rq.Err() == nil {
			it.failures = 0
		} else {
			it.failures++
		}
	} else {
		it.failures++
		delay = Backoff(it.failures)
	}
	it.due = now.Add(delay)
	r.items[k] = it
	return delay, it.failures
}

// Backoff returns the delay before the retry after the given count of
// consecutive failures (at least 1).
func Backoff(failures int) time.Duration {
	d := RetryBackoffInitial
	for i := 1; i < failures && d < RetryBackoffMax; i++ {
		d *= 2
	}
	return min(d, RetryBackoffMax)
}

// Done forgets k: it succeeded, or is gone.
func (r *Retries[K]) Done(k K) { delete(r.items, k) }

// Waiting reports whether k is scheduled for a retry, and whether it is
// due at now.
func (r *Retries[K]) Waiting(k K, now time.Time) (waiting, due bool) {
	it, ok := r.items[k]
	return ok, ok && !it.due.After(now)
}

// Len returns the count of scheduled items.
func (r *Retries[K]) Len() int { return len(r.items) }

// Next returns when the earliest retry is due; false when none is
// scheduled.
func (r *Retries[K]) Next() (time.Time, bool) {
	var next time.Time
	for _, it := range r.items {
		if next.IsZero() || it.due.Before(next) {
			next = it.due
		}
	}
	return next, !next.IsZero()
}

// requeueOf returns the RequeueError with a non-negative interval in err's
// chain, nil when there is none. The chain's methods are user code: a
// panic in them counts as no RequeueError.
func requeueOf(err error) (rq *controller.RequeueError) {
	defer func() {
		if recover() != nil {
			rq = nil
		}
	}()
	if !errors.As(err, &rq) || rq == nil || rq.Interval() < 0 {
		return nil
	}
	return rq
}
