// Package outcome is how the Runtime judges what a call of user code came to
// — a Controller's Run, a QController's Reconcile or MapInput, the initial
// list of a QController's input — for Controllers and QControllers alike:
// the call is classified once, inside the recovery that made it, into an
// [Outcome] (plain data: no user method is called afterwards), and one
// switch, [Decide], turns the outcome into everything the Runtime does about
// it: the retry (none, after the backoff, after the requeue interval), the
// log level, the metric label, and whether it counts as a failure and as a
// crash. [Log] writes the one log line the decision calls for.
package outcome

import (
	"time"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/requeue"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
)

// Class is what a call came to.
type Class uint8

// Classes of outcome.
const (
	// OK: the call succeeded (a Run returned nil, an item succeeded), or
	// it failed while the Runtime stops, which is the cancel's doing.
	OK Class = iota
	// Requeued: a RequeueError without an error asked for the item to run
	// again after Interval.
	Requeued
	// RequeuedWithError: a RequeueError wrapping an error; a failure that
	// runs again after Interval.
	RequeuedWithError
	// Failed: the call returned an error (Msg), a typed-nil error
	// included, or its result was unusable.
	Failed
	// Panicked: the call panicked (Panic, Msg).
	Panicked
	// Denied: the call failed with an access denial in its error chain
	// (rule C3: a write to an undeclared output, a read outside its
	// inputs), a programming error no retry can fix (Msg).
	Denied
)

// Outcome is what a call of user code came to, as plain data, built inside
// the recovery that made the call: logs, metrics and statuses carry Msg,
// never the error, whose Error, Unwrap or As could panic.
type Outcome struct {
	// Panic is set when the call panicked.
	Panic *usercode.Panic
	// Msg describes a failure without naming what failed (the log line
	// and the status do): the error's text, or the panic's value.
	Msg string
	// Interval is when a requeued item runs again.
	Interval time.Duration
	Class    Class
	// Logged is set for a failure that was logged already (a MapInput
	// returning pointers of undeclared kinds is logged once per kind).
	Logged bool
}

// Success is the outcome of a call that succeeded.
func Success() Outcome { return Outcome{} }

// Failure is the outcome of a call that failed with msg.
func Failure(msg string) Outcome { return Outcome{Class: Failed, Msg: msg} }

// OfError is the outcome of call (e.g. "Run") returning err, which is not
// nil. A typed-nil error (a nil pointer in a non-nil error interface) is a
// failure too, described as such: it is almost always a bug (`var e
// *MyError; return e`), and treating it as success would hide it.
//
// An error chain holding an access denial is Denied. The error's methods
// are user code: a chain whose walk panics (a typed nil in it) is a plain
// failure.
func OfError(call string, err error) Outcome {
	if usercode.IsNil(err) {
		return Failure(call + " returned a " + usercode.TypedNilText(err))
	}
	var denied bool
	if p := usercode.Call(func() { denied = controller.IsAccessDeniedError(err) }); p != nil {
		denied = false // a chain that cannot be walked (a typed nil in it): a plain failure
	}
	if denied {
		return Outcome{Class: Denied, Msg: usercode.ErrorText(err)}
	}
	return Failure(usercode.ErrorText(err))
}

// OfPanic is the outcome of a call that panicked.
func OfPanic(p *usercode.Panic) Outcome {
	return Outcome{Class: Panicked, Msg: usercode.Sprint(p.Value), Panic: p}
}

// Stopping is o for a call made while the Runtime stops: a failure then is
// the cancel's doing and counts as success; a panic stays a panic (a bug).
func (o Outcome) Stopping() Outcome {
	if o.Class == Panicked {
		return o
	}
	return Success()
}

// OfItemError classifies the error of a QController item's user code as
// the one reading of an item's error does (package requeue, rule Q3): nil
// succeeds; a RequeueError with a non-negative interval requeues after it
// (a failure only when it wraps an error); anything else is a failure
// retried with the item's backoff. Call it inside the recovery of the call
// that returned err.
func OfItemError(err error) Outcome {
	v := requeue.Of(err)
	switch v.Result {
	case retry.Succeeded:
		return Success()
	case retry.Requeued:
		return Outcome{Class: Requeued, Interval: v.Interval}
	case retry.Denied:
		return Outcome{Class: Denied, Msg: v.Msg}
	case retry.RequeuedFailing:
		return Outcome{Class: RequeuedWithError, Msg: v.Msg, Interval: v.Interval}
	default:
		return Failure(v.Msg)
	}
}

// Text is the failure as a controller status shows it, naming what failed
// once: "Run panicked: v", "Reconcile T(ns/id): msg", or msg alone for a
// Controller's Run error (what == "Run"), whose text is the controller's.
func (o Outcome) Text(what string) string {
	switch {
	case o.Class == Panicked:
		return what + " panicked: " + o.Msg
	case what == "Run":
		return o.Msg
	default:
		return what + ": " + o.Msg
	}
}
