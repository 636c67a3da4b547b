// Package histogram records latencies in fixed log-scale buckets.
//
// A [Histogram] is recorded without locks and without allocation: an
// observation is two atomic additions (its bucket and the sum). Every
// histogram has the same buckets, so snapshots of different histograms
// merge and subtract bucket by bucket, and a reader that knows this
// package knows the bucket bounds without being told.
//
// # Buckets
//
// Bucket 0 holds durations below [Min] (1.024 µs, 2^10 ns), the last bucket
// those of [Max] (2^37 ns, about 137 s) and more. In between, every power
// of two is split into [SubBuckets] (4) equal parts: the bucket of a
// duration d in [2^e, 2^(e+1)) with e in [10, 37) is
//
//	1 + (e-10)*4 + (d - 2^e) / 2^(e-2)
//
// so a bucket is at most 25 % wider than its lower bound, which bounds the
// relative error of a quantile read from a snapshot. There are
// [NumBuckets] (110) buckets. [UpperBound] gives each bucket's exclusive
// upper bound.
package histogram

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// Bucket layout (see the package doc).
const (
	// SubBuckets is the number of buckets per power of two.
	SubBuckets = 4
	// minExp and maxExp bound the split range: [2^minExp, 2^maxExp) ns.
	minExp = 10
	maxExp = 37
	// subBits is log2(SubBuckets).
	subBits = 2
	// NumBuckets is the number of buckets: the underflow bucket, the split
	// range, and the overflow bucket.
	NumBuckets = (maxExp-minExp)*SubBuckets + 2
	// Min is the lower bound of bucket 1: shorter durations fall in bucket 0.
	Min = time.Duration(1) << minExp
	// Max is the lower bound of the last bucket, which holds every longer
	// duration.
	Max = time.Duration(1) << maxExp
)

// Histogram counts durations in the buckets of the package doc. The zero
// value is an empty histogram ready to use; it must not be copied after
// first use. All methods are safe for concurrent use.
type Histogram struct {
	counts [NumBuckets]atomic.Uint64
	sum    atomic.Uint64 // nanoseconds; negative durations count as 0
}

// Observe records one duration; a negative one counts as 0. It never
// blocks and never allocates.
func (h *Histogram) Observe(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[bucketOf(v)].Add(1)
	h.sum.Add(v)
}

// bucketOf returns the bucket of v nanoseconds.
func bucketOf(v uint64) int {
	if v < 1<<minExp {
		return 0
	}
	e := bits.Len64(v) - 1
	if e >= maxExp {
		return NumBuckets - 1
	}
	sub := int(v>>(e-subBits)) & (SubBuckets - 1)
	return 1 + (e-minExp)*SubBuckets + sub
}

// LowerBound returns the inclusive lower bound of bucket i (0 for bucket
// 0). It panics for i outside [0, NumBuckets).
func LowerBound(i int) time.Duration {
	checkBucket(i)
	if i == 0 {
		return 0
	}
	e, sub := minExp+(i-1)/SubBuckets, (i-1)%SubBuckets
	return time.Duration(uint64(SubBuckets+sub) << (e - subBits))
}

// UpperBound returns the exclusive upper bound of bucket i; the last
// bucket's is math.MaxInt64 (no bound). It panics for i outside
// [0, NumBuckets).
func UpperBound(i int) time.Duration {
	checkBucket(i)
	if i == NumBuckets-1 {
		return math.MaxInt64
	}
	return LowerBound(i + 1)
}

func checkBucket(i int) {
	if i < 0 || i >= NumBuckets {
		panic("histogram: bucket index out of range")
	}
}

// Snapshot returns the histogram's counts at about this instant. Buckets
// are read one by one while observations may go on, so a snapshot taken
// during recording may count an observation in a bucket but not yet in the
// sum, or the reverse; each count is exact at some instant.
func (h *Histogram) Snapshot() Snapshot {
	var s Snapshot
	for i := range h.counts {
		n := h.counts[i].Load()
		s.Counts[i] = n
		s.Count += n
	}
	s.Sum = time.Duration(h.sum.Load())
	return s
}
