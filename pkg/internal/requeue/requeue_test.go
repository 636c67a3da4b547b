package requeue

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/retry"
)

type typedNilError struct{}

func (*typedNilError) Error() string { return "typed nil" }

// panickyError's Unwrap panics: user code that errors.As calls.
type panickyError struct{}

func (panickyError) Error() string { return "panicky" }
func (panickyError) Unwrap() error { panic("unwrap") }

// TestOf: the one reading of an item's error (rule Q3), for the Runtime's
// QController items and the generic Controllers' inputs alike.
func TestOf(t *testing.T) {
	var typedNil *typedNilError
	var nilRequeue *controller.RequeueError
	for _, tc := range []struct {
		name     string
		err      error
		result   retry.Result
		msg      string
		interval time.Duration
	}{
		{"nil", nil, retry.Succeeded, "", 0},
		{"an error", errors.New("boom"), retry.Failed, "boom", 0},
		{"a typed nil", typedNil, retry.Failed, "returned a typed-nil error (*requeue.typedNilError)", 0},
		{"a requeue", controller.NewRequeueInterval(time.Second), retry.Requeued, "", time.Second},
		{"a wrapped requeue", fmt.Errorf("ctx: %w", controller.NewRequeueInterval(time.Second)), retry.Requeued, "", time.Second},
		{"a requeue wrapping an error", controller.NewRequeueError(errors.New("boom"), time.Second), retry.RequeuedFailing, "boom", time.Second},
		{"a zero interval", controller.NewRequeueInterval(0), retry.Requeued, "", 0},
		{"a negative interval", controller.NewRequeueInterval(-time.Second), retry.Failed, "negative requeue interval: ", 0},
		{"a chain with a typed-nil requeue", errors.Join(errors.New("x"), nilRequeue), retry.Failed, "typed-nil *controller.RequeueError", 0},
		{"methods that panic", panickyError{}, retry.Failed, "whose methods panicked: unwrap", 0},
		{"an access denial", controller.NewAccessDeniedError("c", "Modify", "T(ns/id)", "not a declared output"), retry.Denied, "not a declared output", 0},
		{"a wrapped access denial", fmt.Errorf("ctx: %w", controller.NewAccessDeniedError("c", "Get", "T(ns/id)", "x")), retry.Denied, "ctx: ", 0},
		{"a denial inside a requeue", controller.NewRequeueError(controller.NewAccessDeniedError("c", "Get", "T(ns/id)", "x"), time.Second), retry.Denied, "denied", 0},
	} {
		v := Of(tc.err)
		assert.Equal(t, tc.result, v.Result, tc.name)
		assert.Equal(t, tc.interval, v.Interval, tc.name)
		if tc.msg != "" {
			assert.Contains(t, v.Msg, tc.msg, tc.name)
		} else {
			assert.Empty(t, v.Msg, tc.name)
		}
	}
}
