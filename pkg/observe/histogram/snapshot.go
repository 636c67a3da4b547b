package histogram

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"
)

// Snapshot is a histogram's counts at one instant: a plain value, safe to
// copy, merge and compare.
type Snapshot struct {
	// Counts holds the number of observations of each bucket.
	Counts [NumBuckets]uint64
	// Count is the number of observations (the sum of Counts).
	Count uint64
	// Sum is the sum of the observed durations.
	Sum time.Duration
}

// Add returns the bucket-wise sum of s and o (e.g. a controller's
// reconciles of every outcome).
func (s Snapshot) Add(o Snapshot) Snapshot {
	for i := range s.Counts {
		s.Counts[i] += o.Counts[i]
	}
	s.Count += o.Count
	s.Sum += o.Sum
	return s
}

// Sub returns what was observed between an earlier snapshot prev of the
// same histogram and s. Counts that went down (prev is not earlier, or is
// of another histogram) are 0.
func (s Snapshot) Sub(prev Snapshot) Snapshot {
	var d Snapshot
	for i := range s.Counts {
		if s.Counts[i] > prev.Counts[i] {
			d.Counts[i] = s.Counts[i] - prev.Counts[i]
			d.Count += d.Counts[i]
		}
	}
	d.Sum = max(s.Sum-prev.Sum, 0)
	return d
}

// Mean returns the mean observed duration, 0 for an empty snapshot.
func (s Snapshot) Mean() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.Sum / time.Duration(s.Count)
}

// Quantile returns an estimate of the q-quantile (q in [0, 1], clamped) of
// the observed durations: the bucket that holds it is found exactly, and
// the value is interpolated linearly inside it, so it is within the
// bucket's bounds (at most 25 % above its lower bound). A quantile that
// falls in the last bucket is [Max] (the bucket has no upper bound). It is
// 0 for an empty snapshot.
func (s Snapshot) Quantile(q float64) time.Duration {
	if s.Count == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	// rank is the 1-based rank of the wanted observation.
	rank := max(uint64(math.Ceil(q*float64(s.Count))), 1)
	var seen uint64
	for i, n := range s.Counts {
		if n == 0 || seen+n < rank {
			seen += n
			continue
		}
		if i == NumBuckets-1 {
			return Max
		}
		lo, hi := LowerBound(i), UpperBound(i)
		frac := float64(rank-seen) / float64(n)
		return lo + time.Duration(frac*float64(hi-lo))
	}
	return Max // not reached: rank <= Count
}

// Bucket is one non-empty bucket of a snapshot in its JSON form.
type Bucket struct {
	// LessThanNs is the bucket's exclusive upper bound in nanoseconds;
	// math.MaxInt64 for the last bucket.
	LessThanNs int64 `json:"lt"`
	// Count is the bucket's number of observations.
	Count uint64 `json:"n"`
}

// snapshotJSON is the JSON form of a Snapshot.
type snapshotJSON struct {
	Count   uint64   `json:"count"`
	SumNs   int64    `json:"sumNs"`
	P50Ns   int64    `json:"p50Ns"`
	P90Ns   int64    `json:"p90Ns"`
	P99Ns   int64    `json:"p99Ns"`
	Buckets []Bucket `json:"buckets"`
}

// MarshalJSON writes the snapshot as {"count", "sumNs", "p50Ns", "p90Ns",
// "p99Ns", "buckets": [{"lt": upper bound ns, "n": count}]}, listing the
// non-empty buckets only, in increasing order. The quantiles are
// [Snapshot.Quantile]'s, for readers that want no arithmetic.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	doc := snapshotJSON{
		Count: s.Count, SumNs: int64(s.Sum),
		P50Ns: int64(s.Quantile(0.5)), P90Ns: int64(s.Quantile(0.9)), P99Ns: int64(s.Quantile(0.99)),
		Buckets: []Bucket{},
	}
	for i, n := range s.Counts {
		if n > 0 {
			doc.Buckets = append(doc.Buckets, Bucket{LessThanNs: int64(UpperBound(i)), Count: n})
		}
	}
	return json.Marshal(doc)
}

// UnmarshalJSON reads what MarshalJSON writes (the quantiles are ignored:
// they follow from the buckets). A bucket bound that is not one of this
// package's is an error.
func (s *Snapshot) UnmarshalJSON(b []byte) error {
	var doc snapshotJSON
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	var out Snapshot
	for _, bk := range doc.Buckets {
		i, ok := bucketOfUpper(time.Duration(bk.LessThanNs))
		if !ok {
			return fmt.Errorf("histogram: %d ns is not a bucket bound", bk.LessThanNs)
		}
		out.Counts[i] += bk.Count
		out.Count += bk.Count
	}
	if out.Count != doc.Count {
		return fmt.Errorf("histogram: count %d differs from the buckets' total %d", doc.Count, out.Count)
	}
	out.Sum = time.Duration(doc.SumNs)
	*s = out
	return nil
}

// upperBounds are the buckets' upper bounds, increasing.
var upperBounds = func() []time.Duration {
	b := make([]time.Duration, NumBuckets)
	for i := range b {
		b[i] = UpperBound(i)
	}
	return b
}()

// bucketOfUpper returns the bucket whose upper bound is ub.
func bucketOfUpper(ub time.Duration) (int, bool) {
	return slices.BinarySearch(upperBounds, ub)
}
