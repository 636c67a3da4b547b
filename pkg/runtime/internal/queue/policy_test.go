package queue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/internal/retry"
)

// TestPolicy_BackoffThatCannotWorkPanics: New refuses a policy whose
// backoff does not validate (its callers validate user input first).
func TestPolicy_BackoffThatCannotWorkPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    retry.Backoff
		ok   bool
	}{
		{"zero value", retry.Backoff{}, true},
		{"explicit", retry.Backoff{Initial: time.Second, Max: time.Second}, true},
		{"negative initial", retry.Backoff{Initial: -1}, false},
		{"max below initial", retry.Backoff{Initial: 2 * time.Second, Max: time.Second}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := retry.Policy{Backoff: tc.b}
			if tc.ok {
				assert.NotPanics(t, func() { New[int, none](p) })
			} else {
				assert.Panics(t, func() { New[int, none](p) })
			}
		})
	}
}

// TestPolicy_ZeroValueUsesDefaultBackoff: a zero policy backs off from
// retry.DefaultInitial, doubling, to retry.DefaultMax.
func TestPolicy_ZeroValueUsesDefaultBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](retry.Policy{})
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", Failure())
		getAfter(t, q, "a", retry.DefaultInitial)
		q.Done("a", Failure())
		getAfter(t, q, "a", 2*retry.DefaultInitial)
		for range 20 {
			q.Done("a", Failure())
			_, _ = get(t, q)
		}
		q.Done("a", Failure())
		getAfter(t, q, "a", retry.DefaultMax)
	})
}

func TestResult_String(t *testing.T) {
	assert.Equal(t, "success", Success().String())
	assert.Equal(t, "success", Result{}.String(), "the zero Result is Success")
	assert.Equal(t, "failure", Failure().String())
	assert.Equal(t, "requeue after 1s", RequeueAfter(time.Second).String())
	assert.Equal(t, "failure, requeue after 1s", RequeueAfterFailure(time.Second).String())
}
