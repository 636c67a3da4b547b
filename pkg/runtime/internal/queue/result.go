package queue

import "time"

// resultKind is the outcome class of a [Result].
type resultKind uint8

const (
	resultSuccess resultKind = iota
	resultFailure
	resultRequeue
)

// Result is the outcome of processing a key, reported with [Queue.Done].
// The zero value is [Success].
type Result struct {
	after time.Duration // requeue interval, for resultRequeue only
	kind  resultKind
}

// Success reports that the key was processed: its backoff is reset and it
// leaves the queue unless it was added again while in flight.
func Success() Result { return Result{kind: resultSuccess} }

// Failure reports that processing the key failed: it is retried after its
// next exponential backoff delay.
func Failure() Result { return Result{kind: resultFailure} }

// RequeueAfter asks for the key to be processed again after d (d <= 0: now).
// It neither counts as a failure nor resets the key's failure count.
func RequeueAfter(d time.Duration) Result { return Result{kind: resultRequeue, after: d} }

// String describes the result, e.g. "requeue after 1s".
func (r Result) String() string {
	switch r.kind {
	case resultFailure:
		return "failure"
	case resultRequeue:
		return "requeue after " + r.after.String()
	default:
		return "success"
	}
}
