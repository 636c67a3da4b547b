package qtransform_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// TestWithRetryPolicy_ParksAnInputThatKeepsFailing: the policy of
// WithRetryPolicy reaches the Runtime (controller.RetryPolicyProvider): an
// input whose transform keeps failing is parked after MaxAttempts; without
// the option the controller has the zero policy (the Runtime's defaults).
func TestWithRetryPolicy_ParksAnInputThatKeepsFailing(t *testing.T) {
	assert.Equal(t, controller.RetryPolicy{}, aToB("plain").RetryPolicy())
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		s := settings("AtoB")
		var calls atomic.Int32
		s.TransformFunc = func(context.Context, controller.Reader, *zap.Logger, *A, *B) error {
			calls.Add(1)
			return errors.New("no")
		}
		policy := controller.RetryPolicy{MaxAttempts: 3, BackoffInitial: time.Second, BackoffMax: time.Second}
		q := qtransform.NewQController(s, qtransform.WithRetryPolicy(policy))
		require.Equal(t, policy, q.RetryPolicy())
		e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(q), runtimetest.WithLogger(zap.NewNop()))
		runtimetest.Create(t, st, newA("a1", 1))
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.EqualValues(t, 3, calls.Load())
		var parked int
		for _, cs := range e.Runtime.Observe().Controllers() {
			if cs.Name == "AtoB" {
				parked = cs.ParkedItems
			}
		}
		assert.Equal(t, 1, parked)
	})
}
