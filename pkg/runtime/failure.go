package runtime

import (
	"errors"
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/resgraph/resgraph/internal/usercode"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
)

// failure is a failure of user code as plain data. It is built inside the
// recovery that called the user code, so that the engine never calls a user
// method afterwards: logs, metrics and statuses carry msg, never the error
// (whose Error, Unwrap or As could panic, and would then run under the
// metrics lock or inside a log call).
type failure struct {
	// panic is set when the user code panicked.
	panic *usercode.Panic
	// msg describes the failure without naming what failed (the log line
	// and the status do): the error's text, or the panic's value.
	msg string
}

// text is the failure as a controller status shows it, naming what failed
// once: "Run panicked: v", "Reconcile T(ns/id): msg", or msg alone for a
// Controller's Run error (what == "Run"), whose text is the controller's.
func (f *failure) text(what string) string {
	switch {
	case f.panic != nil:
		return what + " panicked: " + f.msg
	case what == "Run":
		return f.msg
	default:
		return what + ": " + f.msg
	}
}

// errorFailure is the failure of what (e.g. "Run") returning err, which is
// not nil. A typed-nil error (a nil pointer in a non-nil error interface)
// is a failure too, described as such: it is almost always a bug (`var e
// *MyError; return e`), and treating it as success would hide it.
func errorFailure(what string, err error) *failure {
	if usercode.IsNil(err) {
		return &failure{msg: what + " returned a " + usercode.TypedNilText(err)}
	}
	return &failure{msg: usercode.ErrorText(err)}
}

// panicFailure is the failure of user code panicking.
func panicFailure(p *usercode.Panic) *failure {
	return &failure{msg: usercode.Sprint(p.Value), panic: p}
}

// noStack makes a logger attach no stack trace of its own at any level.
// The engine logs its retries (WARN) through it, so that zap's development
// preset, which adds stacks from WARN up, does not make a retry look like a
// crash; panics carry the stack of the panicking goroutine as a field.
var noStack = zap.AddStacktrace(zap.LevelEnablerFunc(func(zapcore.Level) bool { return false }))

// engineLogger returns the logger of the engine's own messages about a
// controller or a kind: l without automatic stack traces.
func engineLogger(l *zap.Logger) *zap.Logger { return l.WithOptions(noStack) }

// stackField is the field that carries a panic's stack.
func stackField(p *usercode.Panic) zap.Field { return zap.ByteString("stack", p.Stack) }

// itemOutcome is what processing a QController item came to, as plain data
// (see failure): the queue result, and the failure if any.
type itemOutcome struct {
	fail   *failure
	result queue.Result
	// requeue is set when a RequeueError chose the result.
	requeue bool
	// logged is set for a failure that was logged already (a MapInput
	// returning pointers of undeclared kinds is logged once per kind).
	logged bool
}

// op names the user method an item calls.
func (k qkey) op() string {
	if k.mapped {
		return "MapInput"
	}
	return "Reconcile"
}

// failedMsg is the start of the log message of a failed item.
func (k qkey) failedMsg() string {
	if k.mapped {
		return "MapInput failed"
	}
	return "reconcile failed"
}

// target names the item's pointer, without the "map " prefix of String.
func (k qkey) target() string { return k.typ + "(" + k.ns + "/" + k.id + ")" }

// what names the call an item makes, for its status text:
// "Reconcile T(ns/id)" or "MapInput T(ns/id)".
func (k qkey) what() string { return k.op() + " " + k.target() }

// itemFailure is the outcome of item k failing with msg, retried with the
// item's backoff.
func itemFailure(msg string) itemOutcome {
	return itemOutcome{result: queue.Failure(), fail: &failure{msg: msg}}
}

// classifyItemError maps the error of an item's user code to its outcome
// (rule Q3): nil succeeds; a RequeueError with a non-negative interval
// requeues after it (a failure only when it wraps an error); anything else
// — a typed-nil error, a negative interval, a chain holding a typed-nil
// RequeueError — is a failure retried with the item's backoff. The error's
// methods (Error, Unwrap, As) are user code: a panic in them is a failure
// of the item too.
func classifyItemError(err error) (o itemOutcome) {
	if err == nil {
		return itemOutcome{result: queue.Success()}
	}
	if bad, ok := err.(*badKindError); ok {
		o = itemFailure(bad.text())
		o.logged = true
		return o
	}
	if usercode.IsNil(err) {
		return itemFailure("returned a " + usercode.TypedNilText(err))
	}
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			o = itemFailure(fmt.Sprintf("returned an error of type %T whose methods panicked: %s", err, usercode.Sprint(p.Value)))
		}
	}()
	var rq *controller.RequeueError
	if !errors.As(err, &rq) {
		return itemFailure(usercode.ErrorText(err))
	}
	if rq == nil {
		return itemFailure("returned an error chain holding a typed-nil *controller.RequeueError: " + usercode.ErrorText(err))
	}
	iv := rq.Interval()
	if iv < 0 {
		return itemFailure("negative requeue interval: " + usercode.ErrorText(err))
	}
	o = itemOutcome{result: queue.RequeueAfter(iv), requeue: true}
	if rq.Err() != nil {
		o.fail = &failure{msg: usercode.ErrorText(err)}
	}
	return o
}
