package retry

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestBackoff_Delays: initial, doubling per consecutive failure, capped at
// the maximum, never overflowing (rules C6, Q3).
func TestBackoff_Delays(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Minute}
	want := []time.Duration{
		100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
		1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond, 12800 * time.Millisecond,
		25600 * time.Millisecond, 51200 * time.Millisecond, time.Minute, time.Minute,
	}
	for n, w := range want {
		assert.Equal(t, w, b.Delay(uint32(n+1)), "failure %d", n+1)
	}
	assert.Equal(t, b.Initial, b.Delay(0), "0 counts as the first failure")
	assert.Equal(t, time.Minute, b.Delay(math.MaxUint32))

	huge := Backoff{Initial: 3, Max: math.MaxInt64}
	require.NoError(t, huge.Validate())
	prev := time.Duration(0)
	for n := uint32(1); n < 100; n++ {
		d := huge.Delay(n)
		assert.GreaterOrEqual(t, d, prev, "the backoff never overflows or shrinks (n=%d)", n)
		prev = d
	}
	assert.Equal(t, time.Duration(math.MaxInt64), prev)

	assert.Equal(t, DefaultInitial, Backoff{}.Delay(1), "zero fields are the defaults")
	assert.Equal(t, DefaultMax, Backoff{}.Delay(30))
}

// TestBackoff_DelayIsTheSequence: the n-th delay an item's count gives is
// the n-th delay of the cenkalti sequence the same backoff configures (one
// backoff, two ways to walk it), and Reset starts the sequence over.
func TestBackoff_DelayIsTheSequence(t *testing.T) {
	for _, b := range []Backoff{
		{},
		{Initial: 100 * time.Millisecond, Max: time.Minute},
		{Initial: 50 * time.Millisecond, Max: 10 * time.Second},
		{Initial: 3, Max: 5},
		{Initial: 2, Max: 5},
		{Initial: 2, Max: 8},
		{Initial: time.Second, Max: time.Second},
		{Initial: 7 * time.Millisecond, Max: 1000 * time.Millisecond},
		{Initial: 1, Max: math.MaxInt64},
	} {
		s := b.Sequence()
		for n := uint32(1); n <= 70; n++ {
			require.Equal(t, b.Delay(n), s.Next(), "%+v: delay %d", b, n)
		}
		s.Reset()
		assert.Equal(t, b.Delay(1), s.Next(), "%+v: after Reset", b)
		assert.Equal(t, b.Delay(2), s.Next(), "%+v: after Reset", b)
	}
}

func TestBackoff_Validate(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    Backoff
		ok   bool
	}{
		{"zero value", Backoff{}, true},
		{"explicit", Backoff{Initial: time.Second, Max: time.Second}, true},
		{"only initial", Backoff{Initial: 10 * time.Second}, true},
		{"negative initial", Backoff{Initial: -1}, false},
		{"negative max", Backoff{Max: -1}, false},
		{"max below initial", Backoff{Initial: 2 * time.Second, Max: time.Second}, false},
		{"max below default initial", Backoff{Max: time.Millisecond}, false},
		{"initial above default max", Backoff{Initial: 2 * time.Minute}, false},
	} {
		if err := tc.b.Validate(); tc.ok {
			assert.NoError(t, err, tc.name)
		} else {
			assert.Error(t, err, tc.name)
		}
	}
}

// TestItem_Counts: how each result of a run moves an item's backoff and
// its attempts (rule Q3, controller.RetryPolicy): a failure doubles the
// next delay and counts a failed run; a requeue leaves the backoff where
// it is, counting a failed run only when it fails; a success starts both
// over.
func TestItem_Counts(t *testing.T) {
	p := Policy{Backoff: Backoff{Initial: time.Second, Max: time.Hour}}
	var it Item
	step := func(r Result, delay time.Duration, attempts uint32) {
		t.Helper()
		assert.False(t, it.Ran(p, r), "no MaxAttempts: never exhausted")
		assert.Equal(t, attempts, it.Attempts(), "attempts after %v", r)
		assert.Equal(t, delay, it.Delay(p), "backoff after %v", r)
	}
	step(Failed, time.Second, 1)
	step(Failed, 2*time.Second, 2)
	step(RequeuedFailing, 2*time.Second, 3)
	step(Failed, 4*time.Second, 4)
	step(Requeued, 4*time.Second, 0)
	step(Failed, 8*time.Second, 1)
	step(Succeeded, time.Second, 0)

	assert.True(t, Failed.Failure())
	assert.True(t, RequeuedFailing.Failure())
	assert.False(t, Requeued.Failure())
	assert.False(t, Succeeded.Failure())
}

// TestItem_MaxAttemptsAndChanges: the MaxAttempts-th consecutive failed
// run exhausts the item, a run that does not fail starts the count over;
// a change keeps the counts by default and starts them over with
// ChangeAbandonsRetry.
func TestItem_MaxAttemptsAndChanges(t *testing.T) {
	p := Policy{MaxAttempts: 3}
	var it Item
	assert.False(t, it.Ran(p, Failed))
	assert.False(t, it.Ran(p, RequeuedFailing))
	assert.False(t, it.Ran(p, Requeued), "a plain requeue is not a failed run")
	assert.False(t, it.Ran(p, Failed))
	assert.False(t, it.Ran(p, Failed))
	assert.True(t, it.Ran(p, Failed), "the third failed run in a row")

	it.Changed(p)
	assert.Equal(t, uint32(3), it.Attempts(), "a change keeps the counts by default")
	assert.Equal(t, 8*DefaultInitial, it.Delay(p), "four failures")

	p.ChangeAbandonsRetry = true
	it.Changed(p)
	assert.Equal(t, Item{}, it, "ChangeAbandonsRetry: a change starts over")
}

// TestItem_DeniedExhaustsAtOnce: a denied run (an access denial, rule C3)
// exhausts the item at once, with or without MaxAttempts, and counts as a
// failure.
func TestItem_DeniedExhaustsAtOnce(t *testing.T) {
	for _, p := range []Policy{{}, {MaxAttempts: 5}} {
		var it Item
		assert.True(t, Denied.Failure())
		assert.True(t, it.Ran(p, Denied), "%+v", p)
		assert.Equal(t, uint32(1), it.Attempts())
		assert.Equal(t, DefaultInitial, it.Delay(p), "one failure")
	}
}

func TestContext_CarriesThePolicy(t *testing.T) {
	_, ok := FromContext(context.Background())
	assert.False(t, ok)
	p := Policy{Backoff: Backoff{Initial: time.Second, Max: 2 * time.Second}, MaxAttempts: 4, ChangeAbandonsRetry: true}
	ctx, cancel := context.WithCancel(NewContext(context.Background(), p))
	defer cancel()
	got, ok := FromContext(ctx)
	assert.True(t, ok)
	assert.Equal(t, p, got)
}

func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		assert.True(t, Wait(t.Context(), time.Second))
		assert.Equal(t, time.Second, time.Since(start))

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.False(t, Wait(ctx, time.Minute), "the context ended first")
		assert.Equal(t, 2*time.Second, time.Since(start))
	})
}
