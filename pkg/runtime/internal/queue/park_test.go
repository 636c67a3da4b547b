package queue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/internal/retry"
)

// The retry policy of issue 13: a key is parked after Policy.MaxAttempts
// consecutive failed runs and comes back on its next Add; ChangeAbandonsRetry
// makes an Add abandon a key's retry. Every test runs in virtual time.

var parkOpts = retry.Policy{Backoff: retry.Backoff{Initial: 100 * time.Millisecond, Max: time.Second}, MaxAttempts: 3}

// failTo runs a (due now or after want) to a failure, asserting the wait.
func failTo(t *testing.T, q *Queue[string, none], wait time.Duration) Completion {
	t.Helper()
	getAfter(t, q, "a", wait)
	return q.Complete("a", Failure().WithError("boom"))
}

func TestRetryPolicy_ParkedAfterMaxAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](parkOpts)
		q.Add("a")
		assert.Equal(t, Completion{Delay: 100 * time.Millisecond, Attempts: 1}, failTo(t, q, 0))
		assert.Equal(t, Completion{Delay: 200 * time.Millisecond, Attempts: 2}, failTo(t, q, 100*time.Millisecond))
		parkedAt := time.Now().Add(200 * time.Millisecond)
		assert.Equal(t, Completion{Parked: true, Attempts: 3}, failTo(t, q, 200*time.Millisecond))

		assertNothingDue(t, q) // never retried by itself
		assert.Equal(t, 0, q.Len(), "a parked key is not waiting")
		assert.Equal(t, 1, q.Failing(), "a parked key is failing")
		parked, total := q.Parked(-1)
		assert.Equal(t, 1, total)
		assert.Equal(t, []Parked[string]{{Key: "a", Attempts: 3, Err: "boom", At: parkedAt}}, parked)
		assert.Equal(t, 0, q.Stats(8).Due+q.Stats(8).Delayed)
	})
}

// TestDenied_ParksAtOnce: a Denied result parks the key at its first run,
// whatever the policy's MaxAttempts (none here), with its error; a key
// added while that run was in flight is due again instead.
func TestDenied_ParksAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](retry.Policy{})
		q.Add("a")
		getAfter(t, q, "a", 0)
		assert.Equal(t, Completion{Parked: true, Attempts: 1}, q.Complete("a", Denied().WithError("denied")))
		assertNothingDue(t, q)
		parked, total := q.Parked(-1)
		require.Equal(t, 1, total)
		assert.Equal(t, "denied", parked[0].Err)
		assert.Equal(t, 1, q.Failing())

		q.Add("a")
		getAfter(t, q, "a", 0)
		q.Add("a") // changed while it ran
		c := q.Complete("a", Denied().WithError("denied"))
		assert.False(t, c.Parked, "a change newer than the run: due again")
		getAfter(t, q, "a", 0)
		q.Done("a", Success())
	})
}

func TestRetryPolicy_ParkedKeyRetriedOnItsNextAddAsAFreshKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](parkOpts)
		q.Add("a")
		failTo(t, q, 0)
		failTo(t, q, 100*time.Millisecond)
		require.True(t, failTo(t, q, 200*time.Millisecond).Parked)

		q.Add("a")
		_, total := q.Parked(-1)
		assert.Equal(t, 0, total, "added again: no longer parked")
		assert.Equal(t, 1, q.Failing(), "still failing until a run succeeds")
		// Counts start over: three more attempts, backoff from the initial delay.
		assert.Equal(t, Completion{Delay: 100 * time.Millisecond, Attempts: 1}, failTo(t, q, 0))
		assert.Equal(t, Completion{Delay: 200 * time.Millisecond, Attempts: 2}, failTo(t, q, 100*time.Millisecond))
		getAfter(t, q, "a", 200*time.Millisecond)
		q.Done("a", Success())
		assert.Equal(t, 0, q.Failing())
		assertNothingDue(t, q)
	})
}

func TestRetryPolicy_SuccessOrPlainRequeueResetsAttempts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reset Result
	}{
		{"success", Success()},
		{"requeue without failure", RequeueAfter(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New[string, none](parkOpts)
				q.Add("a")
				failTo(t, q, 0)
				failTo(t, q, 100*time.Millisecond)
				getAfter(t, q, "a", 200*time.Millisecond)
				q.Done("a", tc.reset)
				q.Add("a")
				assert.False(t, failTo(t, q, 0).Parked, "attempts start over after a run that did not fail")
			})
		})
	}
}

func TestRetryPolicy_RequeueAfterFailureIsAFailedAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](parkOpts)
		q.Add("a")
		for range 2 {
			getNow(t, q, "a")
			assert.False(t, q.Complete("a", RequeueAfterFailure(0)).Parked)
		}
		getNow(t, q, "a")
		assert.Equal(t, Completion{Parked: true, Attempts: 3}, q.Complete("a", RequeueAfterFailure(0).WithError("x")))
		assertNothingDue(t, q)
	})
}

func TestRetryPolicy_ChangeDuringTheLastAttemptRunsItAgainFresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](parkOpts)
		q.Add("a")
		failTo(t, q, 0)
		failTo(t, q, 100*time.Millisecond)
		getAfter(t, q, "a", 200*time.Millisecond)
		q.Add("a") // a change while the last attempt runs: newer than the run
		assert.Equal(t, Completion{Attempts: 3}, q.Complete("a", Failure()), "not parked: due now")
		_, total := q.Parked(-1)
		assert.Equal(t, 0, total)
		assert.Equal(t, Completion{Delay: 100 * time.Millisecond, Attempts: 1}, failTo(t, q, 0), "counts started over")
	})
}

func TestRetryPolicy_NoMaxAttemptsNeverParks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		for range 50 {
			assert.False(t, q.Complete("a", Failure()).Parked)
			get(t, q)
		}
		_, total := q.Parked(-1)
		assert.Equal(t, 0, total)
	})
}

// By default a change to a key waiting out its backoff runs it now and its
// failures keep counting; with ChangeAbandonsRetry the change abandons the retry: the
// key runs now with its failure (backoff) and attempt counts at zero.
func TestRetryPolicy_AddResetsAbandonsTheRetry(t *testing.T) {
	for _, tc := range []struct {
		name       string
		addResets  bool
		nextDelay  time.Duration
		thirdParks bool
	}{
		{"default keeps counting", false, 400 * time.Millisecond, true},
		{"ChangeAbandonsRetry starts over", true, 100 * time.Millisecond, false},
	} {
		t.Run(tc.name+"/while delayed", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := parkOpts
				opts.ChangeAbandonsRetry = tc.addResets
				q := New[string, none](opts)
				q.Add("a")
				failTo(t, q, 0)
				failTo(t, q, 100*time.Millisecond)
				time.Sleep(10 * time.Millisecond) // a waits out its 200ms backoff
				q.Add("a")
				getNow(t, q, "a")
				c := q.Complete("a", Failure())
				assert.Equal(t, tc.thirdParks, c.Parked)
				if !tc.thirdParks {
					assert.Equal(t, tc.nextDelay, c.Delay)
				}
			})
		})
		t.Run(tc.name+"/while in flight", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := testOpts
				opts.ChangeAbandonsRetry = tc.addResets
				q := New[string, none](opts)
				q.Add("a")
				failTo(t, q, 0)
				getAfter(t, q, "a", 100*time.Millisecond)
				q.Add("a")
				q.Done("a", Failure()) // second failure; the change runs a now
				getNow(t, q, "a")
				want := 400 * time.Millisecond // third failure
				if tc.addResets {
					want = 100 * time.Millisecond
				}
				assert.Equal(t, want, q.Complete("a", Failure()).Delay)
			})
		})
	}
}

func TestRetryPolicy_ParkedLimitAndShutDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[int, none](retry.Policy{MaxAttempts: 1})
		q.AddBatch([]int{1, 2, 3})
		for range 3 {
			k, ok := q.Get(t.Context())
			require.True(t, ok)
			require.True(t, q.Complete(k, Failure()).Parked)
		}
		keys, total := q.Parked(2)
		assert.Len(t, keys, 2)
		assert.Equal(t, 3, total)
		q.ShutDown()
		assert.Equal(t, 3, q.Failing(), "after ShutDown: the keys failing when it shut down")
		q.Add(1)
		_, total = q.Parked(-1)
		assert.Equal(t, 3, total, "Add after ShutDown does nothing")
	})
}
