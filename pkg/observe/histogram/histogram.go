// Package histogram records latencies in fixed log-scale buckets.
//
// A [Histogram] is recorded without locks and without allocation: an
// observation is two atomic additions (its bucket and the sum) and two
// atomic loads (the smallest and largest durations seen; a
// compare-and-swap only for a new extreme). Every histogram has the same
// buckets, so snapshots of different histograms merge and subtract bucket
// by bucket, and a reader that knows this package knows the bucket bounds
// without being told.
//
// # Buckets
//
// Bucket 0 holds durations below [Floor] (512 ns, 2^9 ns), the last
// bucket, the overflow, those of [Ceiling] (2^42 ns, about 73 minutes) and
// more. In between, every power of two is split into [SubBuckets] (4)
// equal parts: the bucket of a duration d in [2^e, 2^(e+1)) with e in
// [9, 42) is
//
//	1 + (e-9)*4 + (d - 2^e) / 2^(e-2)
//
// so a bucket is at most 25 % wider than its lower bound: from 1 µs to
// 1 h, a quantile read from a snapshot is within 25 % of the exact one.
// There are [NumBuckets] (134) buckets. [UpperBound] gives each bucket's
// exclusive upper bound.
//
// # Quantiles
//
// A quantile is found in its bucket exactly and placed inside it by the
// rank of the observation it stands for (the middle of the bucket for a
// bucket of one observation), then kept within the smallest and largest
// durations observed ([Snapshot.Min], [Snapshot.Max]). So a quantile is
// never a bucket bound that no observation reached: one observation of
// 1.5 s reads as 1.5 s at every quantile, and an overflow reads as at most
// the largest duration seen, never as [Ceiling]. [Snapshot.Overflow]
// counts the observations of [Ceiling] and more.
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
	minExp = 9
	maxExp = 42
	// subBits is log2(SubBuckets).
	subBits = 2
	// NumBuckets is the number of buckets: the underflow bucket, the split
	// range, and the overflow bucket.
	NumBuckets = (maxExp-minExp)*SubBuckets + 2
	// Floor is the lower bound of bucket 1: shorter durations fall in
	// bucket 0.
	Floor = time.Duration(1) << minExp
	// Ceiling is the lower bound of the last bucket, the overflow, which
	// holds every longer duration.
	Ceiling = time.Duration(1) << maxExp
)

// Histogram counts durations in the buckets of the package doc, and keeps
// the smallest and largest. The zero value is an empty histogram ready to
// use; it must not be copied after first use. All methods are safe for
// concurrent use.
type Histogram struct {
	counts [NumBuckets]atomic.Uint64
	sum    atomic.Uint64 // nanoseconds; negative durations count as 0
	// max is the largest duration observed, minPlus1 the smallest plus
	// one (0: none yet), in nanoseconds.
	max, minPlus1 atomic.Uint64
}

// Observe records one duration; a negative one counts as 0. It never
// blocks and never allocates.
func (h *Histogram) Observe(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[bucketOf(v)].Add(1)
	h.sum.Add(v)
	for m := h.max.Load(); v > m && !h.max.CompareAndSwap(m, v); m = h.max.Load() {
	}
	for m := h.minPlus1.Load(); (m == 0 || v+1 < m) && !h.minPlus1.CompareAndSwap(m, v+1); m = h.minPlus1.Load() {
	}
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
// sum or the extremes, or the reverse; each count is exact at some
// instant. The extremes are read after the counts and always bound every
// observation counted (an extreme not yet published is taken from its
// bucket's bounds).
func (h *Histogram) Snapshot() Snapshot {
	var s Snapshot
	lo, hi := -1, -1
	for i := range h.counts {
		n := h.counts[i].Load()
		s.Counts[i] = n
		s.Count += n
		if n > 0 {
			if lo < 0 {
				lo = i
			}
			hi = i
		}
	}
	s.Sum = time.Duration(h.sum.Load())
	if s.Count == 0 {
		return s
	}
	s.Min, s.Max = time.Duration(h.minPlus1.Load())-1, time.Duration(h.max.Load())
	// An observation counted before its extreme was published.
	if s.Min < 0 || s.Min >= UpperBound(lo) {
		s.Min = LowerBound(lo)
	}
	if hi < NumBuckets-1 && s.Max < LowerBound(hi) {
		s.Max = UpperBound(hi) - 1
	} else if s.Max < LowerBound(hi) {
		s.Max = LowerBound(hi)
	}
	return s
}
