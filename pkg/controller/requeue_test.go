package controller_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
)

var errBoom = errors.New("boom")

func TestRequeueError_Wrapping(t *testing.T) {
	re := controller.NewRequeueError(errBoom, 5*time.Second)

	assert.Same(t, errBoom, re.Err())
	assert.Same(t, errBoom, re.Unwrap())
	assert.Equal(t, 5*time.Second, re.Interval())
	assert.Equal(t, "requeue in 5s: boom", re.Error())
	assert.ErrorIs(t, re, errBoom)
}

func TestRequeueError_NilErrIsPlainRequeue(t *testing.T) {
	re := controller.NewRequeueError(nil, time.Second)

	assert.NoError(t, re.Err())
	assert.NoError(t, re.Unwrap())
	assert.Equal(t, time.Second, re.Interval())
	assert.Equal(t, "requeue in 1s", re.Error())
	assert.NotErrorIs(t, re, errBoom)
}

func TestRequeueErrorf_FormatsAndWraps(t *testing.T) {
	re := controller.NewRequeueErrorf(1500*time.Millisecond, "item %d: %w", 7, errBoom)

	require.Error(t, re.Err())
	assert.Equal(t, "item 7: boom", re.Err().Error())
	assert.Equal(t, "requeue in 1.5s: item 7: boom", re.Error())
	assert.Equal(t, 1500*time.Millisecond, re.Interval())
	assert.ErrorIs(t, re, errBoom, "the %w verb keeps the chain")
	assert.Equal(t, re.Err(), re.Unwrap())
}

func TestRequeueErrorf_WithoutWrapVerb(t *testing.T) {
	re := controller.NewRequeueErrorf(time.Minute, "not ready: %s", "link eth0")

	assert.Equal(t, "not ready: link eth0", re.Err().Error())
	assert.Equal(t, "requeue in 1m0s: not ready: link eth0", re.Error())
	assert.NotErrorIs(t, re, errBoom)
}

func TestRequeueInterval_IsNotAFailure(t *testing.T) {
	for name, tc := range map[string]struct {
		interval time.Duration
		text     string
	}{
		"zero":     {0, "requeue in 0s"},
		"positive": {250 * time.Millisecond, "requeue in 250ms"},
		"negative": {-time.Second, "requeue in -1s"},
	} {
		t.Run(name, func(t *testing.T) {
			re := controller.NewRequeueInterval(tc.interval)

			assert.NoError(t, re.Err())
			assert.NoError(t, re.Unwrap())
			assert.Equal(t, tc.interval, re.Interval(), "Interval returns what was given")
			assert.Equal(t, tc.text, re.Error())
		})
	}
}

// TestRequeueError_FoundThroughWrapping: a Runtime finds the RequeueError
// (and a user finds the cause) however deeply the controller wrapped it.
func TestRequeueError_FoundThroughWrapping(t *testing.T) {
	for name, re := range map[string]*controller.RequeueError{
		"NewRequeueError":  controller.NewRequeueError(errBoom, 3*time.Second),
		"NewRequeueErrorf": controller.NewRequeueErrorf(3*time.Second, "ctx: %w", errBoom),
	} {
		t.Run(name, func(t *testing.T) {
			wrapped := fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", re))

			var got *controller.RequeueError
			require.ErrorAs(t, wrapped, &got)
			assert.Same(t, re, got)
			assert.Equal(t, 3*time.Second, got.Interval())
			assert.ErrorIs(t, wrapped, errBoom, "cause reachable through the requeue error")
			assert.ErrorIs(t, wrapped, re)
		})
	}

	t.Run("NewRequeueInterval", func(t *testing.T) {
		re := controller.NewRequeueInterval(time.Second)
		wrapped := fmt.Errorf("outer: %w", re)

		var got *controller.RequeueError
		require.ErrorAs(t, wrapped, &got)
		assert.Same(t, re, got)
		assert.Equal(t, "outer: requeue in 1s", wrapped.Error())
		assert.NotErrorIs(t, wrapped, errBoom)
	})

	t.Run("absent", func(t *testing.T) {
		var got *controller.RequeueError
		assert.False(t, errors.As(fmt.Errorf("outer: %w", errBoom), &got))
	})
}
