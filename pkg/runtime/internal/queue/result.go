package queue

import (
	"time"

	"github.com/resgraph/resgraph/pkg/internal/retry"
)

// Result is the outcome of processing a key, reported with [Queue.Done]:
// how the run counts for the key's retry (retry.Result), with its requeue
// interval. The zero value is [Success].
type Result struct {
	after time.Duration // requeue interval, for the requeue results only
	run   retry.Result
	// err describes a failure, for a key parked by it (see WithError).
	err string
}

// Success reports that the key was processed: its backoff is reset and it
// leaves the queue unless it was added again while in flight.
func Success() Result { return Result{run: retry.Succeeded} }

// Failure reports that processing the key failed: it is retried after its
// next exponential backoff delay.
func Failure() Result { return Result{run: retry.Failed} }

// Denied reports that processing the key failed in a way no retry can fix
// (an access denial, rule C3): the key is parked at once (see
// [Queue.Parked]) until it is added again, whatever the policy's
// MaxAttempts.
func Denied() Result { return Result{run: retry.Denied} }

// RequeueAfter asks for the key to be processed again after d (d <= 0: now).
// It neither counts as a failure nor resets the key's failure count.
func RequeueAfter(d time.Duration) Result { return Result{run: retry.Requeued, after: d} }

// RequeueAfterFailure is [RequeueAfter] for a failure that the caller
// retries after an interval of its own instead of the key's backoff: the
// key counts as failing ([Queue.Failing]), and its failure count is left
// as it is.
func RequeueAfterFailure(d time.Duration) Result {
	return Result{run: retry.RequeuedFailing, after: d}
}

// WithError returns r describing its failure with msg, which
// [Queue.Parked] reports when the failure parks the key.
func (r Result) WithError(msg string) Result {
	r.err = msg
	return r
}

// failed reports whether the result reports a failure.
func (r Result) failed() bool { return r.run.Failure() }

// String describes the result, e.g. "requeue after 1s".
func (r Result) String() string {
	switch r.run {
	case retry.Failed:
		return "failure"
	case retry.Denied:
		return "denied"
	case retry.RequeuedFailing:
		return "failure, requeue after " + r.after.String()
	case retry.Requeued:
		return "requeue after " + r.after.String()
	default:
		return "success"
	}
}
