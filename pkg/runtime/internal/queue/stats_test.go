package queue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestStatsCountsDueInFlightAndDelayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		defer q.ShutDown()
		assert.Equal(t, Stats[string]{}, q.Stats(4), "empty")

		q.AddBatch([]string{"a", "b", "c"})
		k, _ := get(t, q) // a in flight
		assert.Equal(t, "a", k)
		st := q.Stats(4)
		assert.Equal(t, 2, st.Due)
		assert.Equal(t, 1, st.InFlight)
		assert.Equal(t, 0, st.Delayed)
		assert.Equal(t, 1, st.SampleInFlight)
		assert.Equal(t, "a", st.Sample[0], "in flight first")
		assert.ElementsMatch(t, []string{"a", "b", "c"}, st.Sample)

		q.Done("a", Failure()) // a waits 100ms
		st = q.Stats(1)
		assert.Equal(t, 2, st.Due)
		assert.Equal(t, 1, st.Delayed)
		assert.Equal(t, time.Now().Add(100*time.Millisecond), st.NextDue)
		assert.Len(t, st.Sample, 1, "sample bounded")

		time.Sleep(100 * time.Millisecond)
		st = q.Stats(4)
		assert.Equal(t, 3, st.Due, "a delayed key whose time has come is due")
		assert.Zero(t, st.Delayed)
		assert.True(t, st.NextDue.IsZero())
	})
}
