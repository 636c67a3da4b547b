package queue

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOptions_Validate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		ok   bool
	}{
		{"zero value", Options{}, true},
		{"explicit", Options{BackoffInitial: time.Second, BackoffMax: time.Second}, true},
		{"only initial", Options{BackoffInitial: 10 * time.Second}, true},
		{"negative initial", Options{BackoffInitial: -1}, false},
		{"negative max", Options{BackoffMax: -1}, false},
		{"max below initial", Options{BackoffInitial: 2 * time.Second, BackoffMax: time.Second}, false},
		{"max below default initial", Options{BackoffMax: time.Millisecond}, false},
		{"initial above default max", Options{BackoffInitial: 2 * time.Minute}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if tc.ok {
				assert.NoError(t, err)
				assert.NotPanics(t, func() { New[int](tc.opts) })
			} else {
				assert.Error(t, err)
				assert.Panics(t, func() { New[int](tc.opts) })
			}
		})
	}
}

func TestOptions_ZeroValueUsesDefaultBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Options{})
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", Failure())
		getAfter(t, q, "a", DefaultBackoffInitial)
		for range 20 {
			q.Done("a", Failure())
			_, _ = get(t, q)
		}
		q.Done("a", Failure())
		getAfter(t, q, "a", DefaultBackoffMax)
	})
}

func TestOptions_BackoffSequence(t *testing.T) {
	o := Options{BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Minute}
	want := []time.Duration{
		100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
		1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond, 12800 * time.Millisecond,
		25600 * time.Millisecond, 51200 * time.Millisecond, time.Minute, time.Minute,
	}
	for n, w := range want {
		assert.Equal(t, w, o.backoff(uint32(n+1)), "failure %d", n+1)
	}
	assert.Equal(t, time.Minute, o.backoff(math.MaxUint32))

	huge := Options{BackoffInitial: 3, BackoffMax: math.MaxInt64}
	require.NoError(t, huge.Validate())
	prev := time.Duration(0)
	for n := uint32(1); n < 100; n++ {
		d := huge.backoff(n)
		assert.GreaterOrEqual(t, d, prev, "backoff never overflows or shrinks (n=%d)", n)
		prev = d
	}
	assert.Equal(t, time.Duration(math.MaxInt64), prev)
}

func TestResult_String(t *testing.T) {
	assert.Equal(t, "success", Success().String())
	assert.Equal(t, "success", Result{}.String(), "the zero Result is Success")
	assert.Equal(t, "failure", Failure().String())
	assert.Equal(t, "requeue after 1s", RequeueAfter(time.Second).String())
}
