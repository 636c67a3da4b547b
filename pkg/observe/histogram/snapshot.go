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
	// Min and Max bound the observed durations: the smallest and the
	// largest of a histogram's snapshot; for a difference ([Snapshot.Sub])
	// the tightest bounds its buckets and the later snapshot's extremes
	// give. Both are 0 for an empty snapshot.
	Min, Max time.Duration
}

// Overflow returns the number of observations of [Ceiling] or more (the
// last bucket's count): durations the buckets do not resolve, bounded by
// Max only.
func (s Snapshot) Overflow() uint64 { return s.Counts[NumBuckets-1] }

// Add returns the bucket-wise sum of s and o (e.g. a controller's
// reconciles of every outcome).
func (s Snapshot) Add(o Snapshot) Snapshot {
	switch {
	case o.Count == 0:
	case s.Count == 0:
		s.Min, s.Max = o.Min, o.Max
	default:
		s.Min, s.Max = min(s.Min, o.Min), max(s.Max, o.Max)
	}
	for i := range s.Counts {
		s.Counts[i] += o.Counts[i]
	}
	s.Count += o.Count
	s.Sum += o.Sum
	return s
}

// Sub returns what was observed between an earlier snapshot prev of the
// same histogram and s. Counts that went down (prev is not earlier, or is
// of another histogram) are 0. Its Min and Max are the bounds of its
// lowest and highest non-empty buckets, within s's Min and Max.
func (s Snapshot) Sub(prev Snapshot) Snapshot {
	var d Snapshot
	for i := range s.Counts {
		if s.Counts[i] > prev.Counts[i] {
			d.Counts[i] = s.Counts[i] - prev.Counts[i]
			d.Count += d.Counts[i]
		}
	}
	d.Sum = max(s.Sum-prev.Sum, 0)
	d.Min, d.Max = d.bucketBounds()
	if d.Count > 0 && s.Count > 0 {
		d.Min, d.Max = min(max(d.Min, s.Min), s.Max), max(min(d.Max, s.Max), s.Min)
	}
	return d
}

// bucketBounds returns the lower bound of the lowest non-empty bucket and
// the largest duration of the highest (math.MaxInt64 for the overflow):
// the bounds of every observation the counts hold, (0, 0) when there is
// none.
func (s Snapshot) bucketBounds() (lo, hi time.Duration) {
	first, last := -1, -1
	for i, n := range s.Counts {
		if n > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	switch {
	case first < 0:
		return 0, 0
	case last == NumBuckets-1:
		return LowerBound(first), math.MaxInt64
	}
	return LowerBound(first), UpperBound(last) - 1
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
// the value is placed inside it by its rank among the bucket's
// observations, each taken at the middle of an equal share of the bucket
// (the overflow bucket spans [Ceiling], Max]), then kept within [Min, Max];
// the first observation is Min, the last Max.
// So it is within the bucket's bounds (at most 25 % above its lower bound
// below Ceiling) and never a bound no observation reached. It is 0 for an
// empty snapshot.
func (s Snapshot) Quantile(q float64) time.Duration {
	if s.Count == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	// rank is the 1-based rank of the wanted observation.
	rank := max(uint64(math.Ceil(q*float64(s.Count))), 1)
	switch rank {
	case s.Count:
		return s.Max
	case 1:
		return s.Min
	}
	var seen uint64
	for i, n := range s.Counts {
		if n == 0 || seen+n < rank {
			seen += n
			continue
		}
		lo, hi := LowerBound(i), UpperBound(i)
		if i == NumBuckets-1 {
			hi = max(s.Max, lo)
		}
		frac := (float64(rank-seen) - 0.5) / float64(n)
		return min(max(lo+time.Duration(frac*float64(hi-lo)), s.Min), s.Max)
	}
	return s.Max // not reached: rank <= Count
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
	Count    uint64   `json:"count"`
	SumNs    int64    `json:"sumNs"`
	MinNs    *int64   `json:"minNs,omitempty"`
	MaxNs    *int64   `json:"maxNs,omitempty"`
	P50Ns    int64    `json:"p50Ns"`
	P90Ns    int64    `json:"p90Ns"`
	P99Ns    int64    `json:"p99Ns"`
	Overflow uint64   `json:"overflow"`
	Buckets  []Bucket `json:"buckets"`
}

// MarshalJSON writes the snapshot as {"count", "sumNs", "minNs", "maxNs",
// "p50Ns", "p90Ns", "p99Ns", "overflow", "buckets": [{"lt": upper bound
// ns, "n": count}]}, listing the non-empty buckets only, in increasing
// order; minNs and maxNs are left out of an empty snapshot. The quantiles
// are [Snapshot.Quantile]'s, for readers that want no arithmetic;
// overflow is [Snapshot.Overflow].
func (s Snapshot) MarshalJSON() ([]byte, error) {
	doc := snapshotJSON{
		Count: s.Count, SumNs: int64(s.Sum),
		P50Ns: int64(s.Quantile(0.5)), P90Ns: int64(s.Quantile(0.9)), P99Ns: int64(s.Quantile(0.99)),
		Overflow: s.Overflow(),
		Buckets:  []Bucket{},
	}
	if s.Count > 0 {
		lo, hi := int64(s.Min), int64(s.Max)
		doc.MinNs, doc.MaxNs = &lo, &hi
	}
	for i, n := range s.Counts {
		if n > 0 {
			doc.Buckets = append(doc.Buckets, Bucket{LessThanNs: int64(UpperBound(i)), Count: n})
		}
	}
	return json.Marshal(doc)
}

// UnmarshalJSON reads what MarshalJSON writes (the quantiles and the
// overflow are ignored: they follow from the buckets; a document without
// minNs or maxNs gets the bounds of its buckets). A bucket bound that is
// not one of this package's is an error.
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
	out.Min, out.Max = out.bucketBounds()
	if doc.MinNs != nil {
		out.Min = time.Duration(*doc.MinNs)
	}
	if doc.MaxNs != nil {
		out.Max = time.Duration(*doc.MaxNs)
	} else if out.Max == math.MaxInt64 {
		out.Max = Ceiling // all that is known of an overflow
	}
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
