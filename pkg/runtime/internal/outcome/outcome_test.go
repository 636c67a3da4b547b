package outcome

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
	"go.uber.org/zap/zapcore"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDecide is the table of the one outcome switch: for every class of
// outcome and every call, the action, the log level, the metric label,
// and whether it is a failure and a crash (rules C6, Q3, Q5).
func TestDecide(t *testing.T) {
	const none = zapcore.InvalidLevel // not logged
	type want struct {
		action         Action
		level          zapcore.Level
		label          string
		failure, crash bool
	}
	for _, tc := range []struct {
		name string
		call Call
		o    Outcome
		want want
	}{
		{"Run returned nil", Run, Success(), want{Done, zapcore.InfoLevel, LabelOK, false, false}},
		{"Run failed", Run, Failure("x"), want{Retry, zapcore.WarnLevel, LabelError, true, true}},
		{"Run panicked", Run, OfPanic(&usercode.Panic{Value: "p"}), want{Retry, zapcore.ErrorLevel, LabelPanic, true, true}},
		{"Reconcile succeeded", Reconcile, Success(), want{Done, none, LabelOK, false, false}},
		{"Reconcile failed", Reconcile, Failure("x"), want{Retry, zapcore.WarnLevel, LabelError, true, false}},
		{"Reconcile panicked", Reconcile, OfPanic(&usercode.Panic{Value: "p"}), want{Retry, zapcore.ErrorLevel, LabelPanic, true, true}},
		{"Reconcile requeued", Reconcile, Outcome{Class: Requeued, Interval: time.Second}, want{Requeue, none, LabelRequeue, false, false}},
		{"Reconcile requeued with an error", Reconcile, Outcome{Class: RequeuedWithError, Msg: "x", Interval: time.Second}, want{Requeue, zapcore.WarnLevel, LabelRequeue, true, false}},
		{"MapInput failed", MapInput, Failure("x"), want{Retry, zapcore.WarnLevel, LabelError, true, false}},
		{"MapInput bad pointers (logged already)", MapInput, Outcome{Class: Failed, Msg: "x", Logged: true}, want{Retry, none, LabelError, true, false}},
		{"initial list failed", InitialList, Failure("x"), want{Retry, zapcore.WarnLevel, LabelError, true, false}},
		{"a failure while stopping", Reconcile, Failure("x").Stopping(), want{Done, none, LabelOK, false, false}},
		{"a panic while stopping", Reconcile, OfPanic(&usercode.Panic{Value: "p"}).Stopping(), want{Retry, zapcore.ErrorLevel, LabelPanic, true, true}},
		{"Reconcile denied", Reconcile, Outcome{Class: Denied, Msg: "x"}, want{Park, zapcore.ErrorLevel, LabelError, true, false}},
		{"Run denied", Run, OfError("Run", controller.NewAccessDeniedError("c", "Modify", "T(ns/id)", "not a declared output")), want{Park, zapcore.ErrorLevel, LabelError, true, true}},
	} {
		d := Decide(tc.call, tc.o)
		level := none
		if d.Log {
			level = d.Level
		}
		assert.Equal(t, tc.want, want{d.Action, level, d.Label, d.Failure, d.Crash}, tc.name)
	}
}

type typedNilError struct{}

func (*typedNilError) Error() string { return "typed nil" }

// TestOfItemError: how the error of a QController item is classified
// (rule Q3).
func TestOfItemError(t *testing.T) {
	var typedNil *typedNilError
	var nilRequeue *controller.RequeueError
	for _, tc := range []struct {
		name     string
		err      error
		class    Class
		msg      string
		interval time.Duration
	}{
		{"nil", nil, OK, "", 0},
		{"an error", errors.New("boom"), Failed, "boom", 0},
		{"a typed nil", typedNil, Failed, "returned a typed-nil error (*outcome.typedNilError)", 0},
		{"a requeue", controller.NewRequeueInterval(time.Second), Requeued, "", time.Second},
		{"a requeue wrapping an error", controller.NewRequeueError(errors.New("boom"), time.Second), RequeuedWithError, "boom", time.Second},
		{"a negative interval", controller.NewRequeueInterval(-time.Second), Failed, "negative requeue interval: ", 0},
		{"a chain with a typed-nil requeue", errors.Join(errors.New("x"), nilRequeue), Failed, "", 0},
	} {
		o := OfItemError(tc.err)
		assert.Equal(t, tc.class, o.Class, tc.name)
		assert.Equal(t, tc.interval, o.Interval, tc.name)
		if tc.msg != "" {
			assert.Contains(t, o.Msg, tc.msg, tc.name)
		}
	}
	assert.Equal(t, "Reconcile T(ns/id): boom", Failure("boom").Text("Reconcile T(ns/id)"))
	assert.Equal(t, "Run panicked: p", OfPanic(&usercode.Panic{Value: "p"}).Text("Run"))
	assert.Equal(t, "boom", Failure("boom").Text("Run"), "a Run error is the controller's own text")
}
