package outcome

import (
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
)

// Call is the user code an outcome is of. It decides the words of the log
// line and whether a failure is a crash (a Controller's Run failing is; a
// QController item failing is not: only its panics are).
type Call uint8

// Calls of user code the Runtime judges.
const (
	// Run is a Controller's Run.
	Run Call = iota
	// Reconcile is a QController's Reconcile of an item.
	Reconcile
	// MapInput is a QController's MapInput of an item.
	MapInput
	// InitialList is the List that fills a QController's queue with an
	// input kind's existing resources (the state's code, which may be
	// foreign).
	InitialList
)

// Action is what the Runtime does next about the call.
type Action uint8

// Actions.
const (
	// Done: nothing more — an item leaves the queue; a Run that returned
	// nil before the Runtime stopped is not restarted.
	Done Action = iota
	// Retry: again after the backoff — an item's next per-item backoff
	// delay, a Controller's restart backoff.
	Retry
	// Requeue: an item runs again after the outcome's Interval.
	Requeue
	// Park: not again until it changes — an item until its next change, a
	// Controller until one of its inputs changes (a denial, rule C3).
	Park
)

// Metric labels of outcomes (the names of pkg/observe/trace's outcomes).
const (
	LabelOK      = "ok"
	LabelError   = "error"
	LabelRequeue = "requeue"
	LabelPanic   = "panic"
)

// Decision is everything the Runtime does about an outcome.
type Decision struct {
	Action Action
	// Log is set when the outcome is logged, at Level.
	Log   bool
	Level zapcore.Level
	// Label is the outcome's metric label (Label* constants).
	Label string
	// Failure is set when the outcome is recorded as the controller's last
	// error (and the controller is failing until it recovers).
	Failure bool
	// Crash is set when the outcome counts as a crash
	// (ControllerStatus.Crashes).
	Crash bool
}

// Decide is the one switch from an outcome of call to what the Runtime
// does: an access denial is a programming error no retry can fix (parked
// until what it ran on changes, ERROR; a crash for a Controller's Run); a
// panic is a bug (retried, ERROR with the stack, a crash); a
// failure is retried after the backoff (WARN without a stack; a crash for
// a Controller's Run); a requeue runs again after its interval (WARN only
// when it wraps an error, which is then a failure); success is done (a Run
// that returned nil before the Runtime stopped is logged at INFO, since the
// controller will not run again).
func Decide(call Call, o Outcome) Decision {
	switch o.Class {
	case Denied:
		return Decision{Action: Park, Log: true, Level: zapcore.ErrorLevel, Label: LabelError, Failure: true, Crash: call == Run}
	case Panicked:
		return Decision{Action: Retry, Log: true, Level: zapcore.ErrorLevel, Label: LabelPanic, Failure: true, Crash: true}
	case Failed:
		return Decision{Action: Retry, Log: !o.Logged, Level: zapcore.WarnLevel, Label: LabelError, Failure: true, Crash: call == Run}
	case RequeuedWithError:
		return Decision{Action: Requeue, Log: true, Level: zapcore.WarnLevel, Label: LabelRequeue, Failure: true}
	case Requeued:
		return Decision{Action: Requeue, Label: LabelRequeue}
	default:
		return Decision{Action: Done, Log: call == Run, Level: zapcore.InfoLevel, Label: LabelOK}
	}
}

// callWords are the words of the log lines about a call.
var callWords = [...]struct{ failed, panicked, denied, retry string }{
	Run:         {"controller failed", "controller panicked", "controller was denied access", "; restarting after backoff"},
	Reconcile:   {"reconcile failed", "Reconcile panicked", "reconcile was denied access", "; retrying after backoff"},
	MapInput:    {"MapInput failed", "MapInput panicked", "MapInput was denied access", "; retrying after backoff"},
	InitialList: {"initial list of an input failed", "initial list of an input panicked", "initial list of an input was denied access", "; retrying after backoff"},
}

// Log writes the log line d calls for about the outcome o of call, on
// logger (an [EngineLogger]) with the fields naming what was called,
// after which it runs again in delay: "<call> failed; retrying after
// backoff" (error, backoff), "...; requeued after the interval" (error,
// interval), "<call> panicked; ..." (panic, backoff, stack), or, for a Run
// that returned nil, "controller returned before the Runtime stopped; not
// restarting it", or, for a Controller parked by an access denial,
// "controller was denied access; parked until an input changes" (error).
func Log(logger *zap.Logger, call Call, o Outcome, d Decision, delay time.Duration, fields ...zap.Field) {
	if !d.Log {
		return
	}
	w := callWords[call]
	var msg string
	switch {
	case d.Action == Done:
		msg = "controller returned before the Runtime stopped; not restarting it"
	case d.Action == Park:
		msg = w.denied + "; parked until an input changes"
		fields = append(fields, zap.String("error", o.Msg))
	case o.Class == Panicked:
		msg = w.panicked + w.retry
		fields = append(fields, zap.String("panic", o.Msg), zap.Duration("backoff", delay), StackField(o.Panic))
	case d.Action == Requeue:
		msg = w.failed + "; requeued after the interval"
		fields = append(fields, zap.String("error", o.Msg), zap.Duration("interval", delay))
	default:
		msg = w.failed + w.retry
		fields = append(fields, zap.String("error", o.Msg), zap.Duration("backoff", delay))
	}
	if ce := logger.Check(d.Level, msg); ce != nil {
		ce.Write(fields...)
	}
}

// noStack makes a logger attach no stack trace of its own at any level.
// The Runtime logs its retries (WARN) through it, so that zap's development
// preset, which adds stacks from WARN up, does not make a retry look like a
// crash; panics carry the stack of the panicking goroutine as a field.
var noStack = zap.AddStacktrace(zap.LevelEnablerFunc(func(zapcore.Level) bool { return false }))

// EngineLogger returns the logger of the Runtime's own messages about a
// controller or a kind: l without automatic stack traces.
func EngineLogger(l *zap.Logger) *zap.Logger { return l.WithOptions(noStack) }

// StackField is the field that carries a panic's stack.
func StackField(p *usercode.Panic) zap.Field { return zap.ByteString("stack", p.Stack) }
