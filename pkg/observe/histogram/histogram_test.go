package histogram_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/observe/histogram"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// bucketOf finds the bucket of d through the snapshot of a histogram that
// observed d alone.
func bucketOf(t *testing.T, d time.Duration) int {
	t.Helper()
	var h histogram.Histogram
	h.Observe(d)
	s := h.Snapshot()
	for i, n := range s.Counts {
		if n == 1 {
			return i
		}
	}
	t.Fatalf("%v counted in no bucket", d)
	return -1
}

func TestBucketsAreLogScaleAndContiguous(t *testing.T) {
	require.Equal(t, 134, histogram.NumBuckets)
	assert.LessOrEqual(t, histogram.Floor, time.Microsecond, "1 µs is resolved")
	assert.Greater(t, histogram.Ceiling, time.Hour, "1 h is resolved")
	assert.Equal(t, time.Duration(0), histogram.LowerBound(0))
	assert.Equal(t, histogram.Floor, histogram.UpperBound(0))
	assert.Equal(t, histogram.Ceiling, histogram.LowerBound(histogram.NumBuckets-1))
	assert.Equal(t, time.Duration(math.MaxInt64), histogram.UpperBound(histogram.NumBuckets-1))
	for i := 1; i < histogram.NumBuckets; i++ {
		lo, hi := histogram.LowerBound(i), histogram.UpperBound(i)
		assert.Equal(t, histogram.UpperBound(i-1), lo, "bucket %d starts where %d ends", i, i-1)
		if i < histogram.NumBuckets-1 {
			width := float64(hi-lo) / float64(lo)
			assert.LessOrEqual(t, width, 0.25, "bucket %d [%v, %v) is at most 25%% wide", i, lo, hi)
			assert.GreaterOrEqual(t, width, 1.0/7, "bucket %d", i)
		}
	}
	// Every boundary and its neighbours land where the bounds say.
	for i := 1; i < histogram.NumBuckets; i++ {
		lo := histogram.LowerBound(i)
		assert.Equal(t, i, bucketOf(t, lo), "%v", lo)
		assert.Equal(t, i-1, bucketOf(t, lo-1), "%v", lo-1)
	}
	assert.Equal(t, 0, bucketOf(t, -time.Second), "negative durations count as 0")
	assert.Equal(t, 0, bucketOf(t, 0))
	assert.Equal(t, histogram.NumBuckets-1, bucketOf(t, time.Duration(math.MaxInt64)))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		d := time.Duration(rng.Int64N(int64(2 * time.Hour)))
		i := bucketOf(t, d)
		require.True(t, histogram.LowerBound(i) <= d && d < histogram.UpperBound(i), "%v in bucket %d", d, i)
	}
	assert.Panics(t, func() { histogram.UpperBound(histogram.NumBuckets) })
	assert.Panics(t, func() { histogram.LowerBound(-1) })
}

func TestQuantilesAreWithinTheirBucket(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var h histogram.Histogram
	var all []time.Duration
	for range 20000 {
		// Log-uniform between 1 µs and 1 h.
		d := time.Duration(math.Exp(math.Log(1e3) + rng.Float64()*(math.Log(3.6e12)-math.Log(1e3))))
		h.Observe(d)
		all = append(all, d)
	}
	slices.Sort(all)
	s := h.Snapshot()
	require.Equal(t, uint64(len(all)), s.Count)
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
		exact := all[int(math.Ceil(q*float64(len(all))))-1]
		got := s.Quantile(q)
		assert.InEpsilon(t, float64(exact), float64(got), 0.25, "q=%v exact %v got %v", q, exact, got)
	}
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	assert.Equal(t, sum, s.Sum)
	assert.Equal(t, sum/time.Duration(len(all)), s.Mean())
	assert.Equal(t, time.Duration(0), histogram.Snapshot{}.Quantile(0.99), "empty")
	assert.Equal(t, time.Duration(0), histogram.Snapshot{}.Mean(), "empty")

	assert.Equal(t, all[0], s.Min)
	assert.Equal(t, all[len(all)-1], s.Max)
	assert.Zero(t, s.Overflow())
}

// TestQuantileIsNeverABoundNotReached: whatever was observed, every
// quantile lies between the smallest and the largest observation — one
// observation reads as itself, an overflow as at most the largest
// duration seen (not the overflow bucket's lower bound), which Overflow
// counts.
func TestQuantileIsNeverABoundNotReached(t *testing.T) {
	qs := []float64{0, 0.01, 0.5, 0.9, 0.99, 0.999, 1}
	for _, d := range []time.Duration{0, 100, 1500 * time.Millisecond, 3 * time.Millisecond, time.Hour, 2 * time.Hour, 30 * 24 * time.Hour} {
		var one histogram.Histogram
		one.Observe(d)
		s := one.Snapshot()
		for _, q := range qs {
			assert.Equal(t, d, s.Quantile(q), "one observation of %v, q=%v", d, q)
		}
	}

	var idle histogram.Histogram
	idle.Observe(200 * time.Hour) // a stale commit time: far past Ceiling
	idle.Observe(3 * time.Hour)
	s := idle.Snapshot()
	assert.EqualValues(t, 2, s.Overflow())
	assert.Equal(t, 200*time.Hour, s.Quantile(0.99))
	assert.Equal(t, 3*time.Hour, s.Min)
	for _, q := range qs {
		got := s.Quantile(q)
		assert.True(t, got >= 3*time.Hour && got <= 200*time.Hour, "q=%v: %v", q, got)
		assert.NotEqual(t, histogram.Ceiling, got, "q=%v", q)
	}

	rng := rand.New(rand.NewPCG(7, 8))
	for range 500 {
		var h histogram.Histogram
		n := 1 + rng.IntN(20)
		lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
		base := time.Duration(rng.Int64N(int64(time.Hour)))
		for range n {
			d := base + time.Duration(rng.Int64N(int64(base/10+1)))
			h.Observe(d)
			lo, hi = min(lo, d), max(hi, d)
		}
		s := h.Snapshot()
		for _, q := range qs {
			got := s.Quantile(q)
			require.True(t, got >= lo && got <= hi, "%d observations in [%v, %v]: q=%v gives %v", n, lo, hi, q, got)
		}
	}
}

func TestAddAndSub(t *testing.T) {
	var a, b histogram.Histogram
	a.Observe(time.Millisecond)
	before := a.Snapshot()
	a.Observe(time.Second)
	a.Observe(time.Second)
	b.Observe(time.Microsecond * 5)
	delta := a.Snapshot().Sub(before)
	assert.Equal(t, uint64(2), delta.Count)
	assert.Equal(t, 2*time.Second, delta.Sum)
	assert.Equal(t, uint64(2), delta.Counts[bucketOf(t, time.Second)])
	assert.Zero(t, delta.Counts[bucketOf(t, time.Millisecond)])
	assert.Equal(t, histogram.Snapshot{}, before.Sub(a.Snapshot()), "a later snapshot subtracted gives nothing")
	assert.Equal(t, time.Second, delta.Max, "the window's bounds: its buckets, within the later snapshot's extremes")
	assert.Equal(t, histogram.LowerBound(bucketOf(t, time.Second)), delta.Min)
	assert.Equal(t, time.Second, delta.Quantile(0.99))

	sum := a.Snapshot().Add(b.Snapshot())
	assert.Equal(t, uint64(4), sum.Count)
	assert.Equal(t, time.Millisecond+2*time.Second+5*time.Microsecond, sum.Sum)
	assert.Equal(t, uint64(1), sum.Counts[bucketOf(t, 5*time.Microsecond)])
	assert.Equal(t, 5*time.Microsecond, sum.Min)
	assert.Equal(t, time.Second, sum.Max)
	assert.Equal(t, a.Snapshot(), a.Snapshot().Add(histogram.Snapshot{}), "adding nothing")
	assert.Equal(t, a.Snapshot(), histogram.Snapshot{}.Add(a.Snapshot()), "adding to nothing")
}

func TestJSONRoundTrip(t *testing.T) {
	var h histogram.Histogram
	for _, d := range []time.Duration{0, 2 * time.Microsecond, time.Millisecond, time.Millisecond, time.Hour} {
		h.Observe(d)
	}
	s := h.Snapshot()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, k := range []string{"count", "sumNs", "minNs", "maxNs", "p50Ns", "p90Ns", "p99Ns", "overflow", "buckets"} {
		assert.Contains(t, doc, k)
	}
	assert.Len(t, doc["buckets"], 4, "non-empty buckets only")
	assert.EqualValues(t, 0, doc["minNs"])
	assert.EqualValues(t, time.Hour, doc["maxNs"])
	assert.EqualValues(t, 0, doc["overflow"], "1 h is resolved")
	var back histogram.Snapshot
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, s, back)

	empty, err := json.Marshal(histogram.Snapshot{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"count":0,"sumNs":0,"p50Ns":0,"p90Ns":0,"p99Ns":0,"overflow":0,"buckets":[]}`, string(empty))

	var over histogram.Histogram
	over.Observe(100 * time.Hour)
	b, err = json.Marshal(over.Snapshot())
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.EqualValues(t, 1, doc["overflow"])
	assert.EqualValues(t, 100*time.Hour, doc["p99Ns"])

	require.NoError(t, json.Unmarshal([]byte(`{"count":1,"buckets":[{"lt":1024,"n":1}]}`), &back), "without extremes")
	assert.Equal(t, histogram.Snapshot{Count: 1, Counts: back.Counts, Min: 896, Max: 1023}, back, "the bucket's bounds")

	assert.Error(t, json.Unmarshal([]byte(`{"count":1,"buckets":[{"lt":12345,"n":1}]}`), &back), "not a bound")
	assert.Error(t, json.Unmarshal([]byte(`{"count":2,"buckets":[{"lt":1024,"n":1}]}`), &back), "count mismatch")
}

// TestConcurrentObservationsAreAllCounted checks lock-free recording under
// the race detector: every observation of every goroutine is counted once.
func TestConcurrentObservationsAreAllCounted(t *testing.T) {
	var h histogram.Histogram
	var wg sync.WaitGroup
	const goroutines, each = 8, 5000
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				h.Observe(time.Duration(g*each+i) * time.Microsecond)
			}
		})
	}
	// Snapshots taken meanwhile never go backwards.
	var prev uint64
	for range 100 {
		n := h.Snapshot().Count
		require.GreaterOrEqual(t, n, prev)
		prev = n
	}
	wg.Wait()
	s := h.Snapshot()
	assert.Equal(t, uint64(goroutines*each), s.Count)
	n := int64(goroutines * each)
	assert.Equal(t, time.Duration(n*(n-1)/2)*time.Microsecond, s.Sum)
}

func TestObserveDoesNotAllocate(t *testing.T) {
	var h histogram.Histogram
	allocs := testing.AllocsPerRun(1000, func() { h.Observe(123 * time.Microsecond) })
	assert.Zero(t, allocs)
}

// BenchmarkObserve is the recording cost of one observation, from one
// goroutine and from every P at once (contended buckets).
func BenchmarkObserve(b *testing.B) {
	durations := make([]time.Duration, 1024)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range durations {
		durations[i] = time.Duration(rng.Int64N(int64(10 * time.Millisecond)))
	}
	b.Run("serial", func(b *testing.B) {
		var h histogram.Histogram
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			h.Observe(durations[i&1023])
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		var h histogram.Histogram
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				h.Observe(durations[i&1023])
				i++
			}
		})
	})
}

// BenchmarkSnapshot is the cost of reading a histogram (a debug page or a
// scrape reads one per controller and metric).
func BenchmarkSnapshot(b *testing.B) {
	var h histogram.Histogram
	for i := range 1000 {
		h.Observe(time.Duration(i) * time.Microsecond)
	}
	b.ReportAllocs()
	for b.Loop() {
		s := h.Snapshot()
		if s.Count == 0 {
			b.Fatal("empty")
		}
	}
}
