package controller

import (
	"fmt"
	"time"
)

// RequeueError asks a QController's queue to reconcile the item again after
// Interval (rule Q3). It is logged as a failure only when it wraps an error.
type RequeueError struct {
	err      error
	interval time.Duration
}

// NewRequeueError returns a RequeueError wrapping err (nil for a plain
// requeue).
func NewRequeueError(err error, interval time.Duration) *RequeueError {
	return &RequeueError{err: err, interval: interval}
}

// NewRequeueErrorf returns a RequeueError wrapping a formatted error.
func NewRequeueErrorf(interval time.Duration, format string, args ...any) *RequeueError {
	return &RequeueError{err: fmt.Errorf(format, args...), interval: interval}
}

// NewRequeueInterval returns a RequeueError that is not a failure: requeue
// after interval.
func NewRequeueInterval(interval time.Duration) *RequeueError {
	return &RequeueError{interval: interval}
}

// Err returns the wrapped error (nil for a plain requeue).
func (e *RequeueError) Err() error { return e.err }

// Error describes the requeue.
func (e *RequeueError) Error() string {
	if e.err == nil {
		return "requeue in " + e.interval.String()
	}
	return "requeue in " + e.interval.String() + ": " + e.err.Error()
}

// Unwrap returns the wrapped error.
func (e *RequeueError) Unwrap() error { return e.err }

// Interval returns how long to wait before the next reconcile. A negative
// interval is invalid: the Runtime treats it as a failure of the item.
func (e *RequeueError) Interval() time.Duration { return e.interval }
