// Package requeue is the one reading of the error that an item's user code
// returned (rule Q3), for everything that retries items: the Runtime's
// QController workers and the generic Controllers that retry their own
// inputs. nil succeeds; a controller.RequeueError with a non-negative
// interval runs the item again after that interval, as a failure only when
// it wraps an error; anything else is a failure retried after the item's
// backoff.
package requeue

import (
	"errors"
	"fmt"
	"time"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
)

// Verdict is what an item's error comes to.
type Verdict struct {
	// Result is how the run counts for the item's retry.
	Result retry.Result
	// Interval is when a requeued item runs again (Requeued,
	// RequeuedFailing).
	Interval time.Duration
	// Msg describes a failure (Failed, RequeuedFailing): the error's
	// text, or what is wrong with the error.
	Msg string
}

// Of returns the verdict on err, the error of an item's user code: nil
// succeeds; an error chain holding an access denial
// (controller.IsAccessDeniedError, rule C3) is denied, even inside a
// RequeueError; a RequeueError with a non-negative interval is requeued after
// it (failing when it wraps an error); anything else — a typed-nil error,
// a negative interval, a chain holding a typed-nil RequeueError — failed.
// The error's methods (Error, Unwrap, As) are user code: a panic in them
// is a failure too, and Of never lets it out. Msg is rendered here, so
// that nothing later calls the error's methods again.
func Of(err error) (v Verdict) {
	if err == nil {
		return Verdict{Result: retry.Succeeded}
	}
	if usercode.IsNil(err) {
		return failed("returned a " + usercode.TypedNilText(err))
	}
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			v = failed(fmt.Sprintf("returned an error of type %T whose methods panicked: %s", err, usercode.Sprint(p.Value)))
		}
	}()
	var rq *controller.RequeueError
	found := errors.As(err, &rq)
	if found && rq == nil {
		return failed("returned an error chain holding a typed-nil *controller.RequeueError: " + usercode.ErrorText(err))
	}
	if controller.IsAccessDeniedError(err) {
		// A programming error no retry can fix (rule C3): parked.
		return Verdict{Result: retry.Denied, Msg: usercode.ErrorText(err)}
	}
	if !found {
		return failed(usercode.ErrorText(err))
	}
	iv := rq.Interval()
	if iv < 0 {
		return failed("negative requeue interval: " + usercode.ErrorText(err))
	}
	if rq.Err() != nil {
		return Verdict{Result: retry.RequeuedFailing, Interval: iv, Msg: usercode.ErrorText(err)}
	}
	return Verdict{Result: retry.Requeued, Interval: iv}
}

func failed(msg string) Verdict { return Verdict{Result: retry.Failed, Msg: msg} }
