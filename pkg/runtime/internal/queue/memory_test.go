package queue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storage returns the sizes of q's internal storage.
func (q *Queue[K, N]) storage() (keys, slab, ringCap, heapCap int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.index.n, len(q.slab), len(q.due.buf), cap(q.delayed)
}

func TestMemory_BoundedByDistinctKeysNotAdds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](backoff(time.Millisecond, time.Millisecond))
		for range 100_000 {
			q.Add("a") // waiting
		}
		getNow(t, q, "a")
		for range 100_000 {
			q.Add("a") // in flight
		}
		q.Done("a", Success())
		getNow(t, q, "a")
		for range 10_000 {
			q.Done("a", Failure()) // delayed
			q.Add("a")             // made due
			getNow(t, q, "a")
		}
		for range 10_000 {
			q.Add("b")
		}
		keys, slab, ringCap, heapCap := q.storage()
		assert.Equal(t, 2, keys)
		assert.LessOrEqual(t, slab, 2)
		assert.LessOrEqual(t, ringCap, minRingCap)
		assert.LessOrEqual(t, heapCap, 8)
	})
}

func TestMemory_ReleasedAfterLargeBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[int, none](testOpts)
		const n = 10 * releaseThreshold
		ks := make([]int, n)
		for i := range ks {
			ks[i] = i
		}
		q.AddBatch(ks)
		keys, slab, ringCap, _ := q.storage()
		require.Equal(t, n, keys)
		require.Equal(t, n, slab)
		require.GreaterOrEqual(t, ringCap, n)

		for i := range n {
			k, _ := get(t, q)
			require.Equal(t, i, k)
			if i%2 == 0 {
				q.Done(k, Failure())
			} else {
				q.Done(k, Success())
			}
		}
		for range n / 2 {
			k, _ := get(t, q)
			q.Done(k, Success())
		}
		keys, slab, ringCap, heapCap := q.storage()
		assert.Zero(t, keys)
		assert.Zero(t, slab, "slab released")
		assert.Zero(t, ringCap, "ring released")
		assert.Zero(t, heapCap, "heap released")

		q.Add(1) // still usable
		getNow(t, q, 1)
	})
}

// TestMemory_ABurstAfterAReleasedOneGrowsItsSlabOnce: a queue whose
// bursts of keys (above releaseThreshold) come and go releases each
// burst's storage (TestMemory_ReleasedAfterLargeBurst), and grows the next
// burst's slab to the last one's size at once, not by doublings: keys
// added a batch at a time (as the Runtime's router adds a QController's
// items) reallocate the slab once per burst.
func TestMemory_ABurstAfterAReleasedOneGrowsItsSlabOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[int, none](testOpts)
		const n, batch = 3 * releaseThreshold, 100
		burst := func() (grown int) {
			last := -1
			ks := make([]int, batch)
			for from := 0; from < n; from += batch {
				for i := range ks {
					ks[i] = from + i
				}
				q.AddBatch(ks[:min(batch, n-from)])
				if c := q.slabCap(); c != last {
					grown, last = grown+1, c
				}
			}
			for range n {
				k, _ := get(t, q)
				q.Done(k, Success())
			}
			_, slab, _, _ := q.storage()
			require.Zero(t, slab, "slab released")
			return grown
		}
		assert.Greater(t, burst(), 2, "the first burst grows its slab as its keys come")
		assert.Equal(t, 1, burst(), "the next one grows it to the last burst's size at once")
		assert.Equal(t, 1, burst())
	})
}

// slabCap returns the capacity of q's slab.
func (q *Queue[K, N]) slabCap() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return cap(q.slab)
}

func TestRing_ShrinksAndKeepsOrder(t *testing.T) {
	var r ring
	for i := range int32(10_000) {
		r.push(i)
	}
	for i := range int32(9_990) {
		v, ok := r.pop()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
	assert.LessOrEqual(t, len(r.buf), ringKeep, "ring shrinks as it empties, down to ringKeep")
	for i := range int32(100) { // wraps around
		r.push(10_000 + i)
	}
	for i := int32(9_990); i < 10_100; i++ {
		v, ok := r.pop()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
	_, ok := r.pop()
	assert.False(t, ok)
}

// TestRing_BurstsUpToRingKeepAllocateNothing: a ring whose length swings
// between empty and ringKeep keeps its buffer (a QController's due keys
// come in bursts: W4's update phase resized its queues' rings ~70 times).
func TestRing_BurstsUpToRingKeepAllocateNothing(t *testing.T) {
	var r ring
	burst := func() {
		for i := range int32(ringKeep) {
			r.push(i)
		}
		for i := range int32(ringKeep) {
			if v, ok := r.pop(); !ok || v != i {
				t.Fatalf("pop %d: %d, %v", i, v, ok)
			}
		}
	}
	burst() // grows to ringKeep once
	assert.Zero(t, testing.AllocsPerRun(20, burst))
	assert.Equal(t, ringKeep, len(r.buf))
}
