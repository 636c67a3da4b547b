package measure

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/resgraph/resgraph/bench/common/params"
)

// FinalTracker follows one W1 watcher. A watcher is done when it has seen
// every resource in its final state; counting events instead would never
// finish on a library that coalesces changes for a watcher that falls behind
// (resgraph's rule S12 allows that), and gives the same answer on one that
// delivers every change.
//
// A FinalTracker is used by one goroutine.
type FinalTracker struct {
	seen   []bool
	left   int
	final  int
	Events int // Created/Updated events observed
}

// NewFinalTracker tracks n resources whose final Value is final.
func NewFinalTracker(n, final int) *FinalTracker {
	return &FinalTracker{seen: make([]bool, n), left: n, final: final}
}

// Observe records one Created/Updated event carrying spec.
func (t *FinalTracker) Observe(spec params.Spec) {
	t.Events++

	if spec.Value == t.final && spec.Index >= 0 && spec.Index < len(t.seen) && !t.seen[spec.Index] {
		t.seen[spec.Index] = true
		t.left--
	}
}

// Done reports whether every resource was seen in its final state.
func (t *FinalTracker) Done() bool { return t.left == 0 }

// FanOut records W2: when each update was issued and returned, and when each
// subscriber received it.
type FanOut struct {
	p      params.W2Params
	base   time.Time
	final  []int
	callAt []int64 // ns since base, just before Update
	retAt  []int64 // ns since base, just after Update returned
	subs   []*FanOutSub

	cut atomic.Int64
}

// FanOutSub is one subscriber's record; used by that subscriber's goroutine only.
type FanOutSub struct {
	f      *FanOut
	recvAt []int64 // by update seq, ns since base; -1 = not received
	left   int     // resources whose final update was not received yet
	events int
}

// NewFanOut prepares the records for p.
func NewFanOut(p params.W2Params) *FanOut {
	f := &FanOut{
		p:      p,
		base:   time.Now(),
		final:  p.FinalSeq(),
		callAt: make([]int64, p.Updates),
		retAt:  make([]int64, p.Updates),
	}

	left := 0

	for _, s := range f.final {
		if s >= 0 {
			left++
		}
	}

	for range p.Subscribers {
		rec := make([]int64, p.Updates)
		for i := range rec {
			rec[i] = -1
		}

		f.subs = append(f.subs, &FanOutSub{f: f, recvAt: rec, left: left})
	}

	return f
}

// Sub returns subscriber i's record.
func (f *FanOut) Sub(i int) *FanOutSub { return f.subs[i] }

// Call marks the moment before Update of seq.
func (f *FanOut) Call(seq int) { f.callAt[seq] = int64(time.Since(f.base)) }

// Returned marks the moment Update of seq returned.
func (f *FanOut) Returned(seq int) { f.retAt[seq] = int64(time.Since(f.base)) }

// Cut counts a subscriber whose watch was cut off (an Errored event).
func (f *FanOut) Cut() { f.cut.Add(1) }

// Observe records an Updated event carrying spec; it reports whether the
// subscriber has now received the final update of every resource.
func (s *FanOutSub) Observe(spec params.Spec) bool {
	now := int64(time.Since(s.f.base))
	seq := spec.Value

	if seq < 0 || seq >= len(s.recvAt) {
		return s.left == 0
	}

	s.events++

	if s.recvAt[seq] < 0 {
		s.recvAt[seq] = now
	}

	if spec.Index >= 0 && spec.Index < len(s.f.final) && s.f.final[spec.Index] == seq {
		s.left--
	}

	return s.left == 0
}

// FanOutStats are W2's results.
type FanOutStats struct {
	Samples   int // (subscriber, update) pairs received
	Expected  int // Subscribers * Updates
	Cut       int // subscribers whose watch was cut off
	Complete  int // subscribers that received the final update of every resource
	Negatives int // received before Update returned (clamped to 0)

	P50, P99, Max time.Duration // receipt - Update return
	CallP99       time.Duration // receipt - Update call
}

// Stats computes the delay percentiles over every received (subscriber,
// update) pair. Call it after the subscribers stopped.
func (f *FanOut) Stats() FanOutStats {
	st := FanOutStats{Expected: f.p.Subscribers * f.p.Updates, Cut: int(f.cut.Load())}

	ret := make([]time.Duration, 0, st.Expected)
	call := make([]time.Duration, 0, st.Expected)

	for _, s := range f.subs {
		if s.left == 0 {
			st.Complete++
		}

		for seq, t := range s.recvAt {
			if t < 0 {
				continue
			}

			d := time.Duration(t - f.retAt[seq])
			if d < 0 {
				st.Negatives++
				d = 0
			}

			ret = append(ret, d)
			call = append(call, time.Duration(t-f.callAt[seq]))
		}
	}

	st.Samples = len(ret)

	slices.Sort(ret)
	slices.Sort(call)

	st.P50 = Percentile(ret, 50)
	st.P99 = Percentile(ret, 99)
	st.CallP99 = Percentile(call, 99)

	if len(ret) > 0 {
		st.Max = ret[len(ret)-1]
	}

	return st
}

// ChainTracker follows the last kind of a controller chain: the value each
// resource holds, and how many resources hold each value. It reports the
// moment all N resources hold a target value. Used by one goroutine.
type ChainTracker struct {
	n       int
	values  []int
	has     []bool
	counts  map[int]int
	targets []int
	fired   []bool
	Reached []chan time.Time // one per target, buffered
}

// NewChainTracker tracks n resources and the given target values.
func NewChainTracker(n int, targets ...int) *ChainTracker {
	t := &ChainTracker{
		n:       n,
		values:  make([]int, n),
		has:     make([]bool, n),
		counts:  map[int]int{},
		targets: targets,
		fired:   make([]bool, len(targets)),
	}

	for range targets {
		t.Reached = append(t.Reached, make(chan time.Time, 1))
	}

	return t
}

// Set records that resource index holds value.
func (t *ChainTracker) Set(index, value int) {
	if index < 0 || index >= t.n {
		return
	}

	if t.has[index] {
		t.counts[t.values[index]]--
	}

	t.values[index], t.has[index] = value, true
	t.counts[value]++

	t.Check()
}

// Remove records that resource index is gone.
func (t *ChainTracker) Remove(index int) {
	if index < 0 || index >= t.n || !t.has[index] {
		return
	}

	t.counts[t.values[index]]--
	t.has[index] = false
}

// Reset forgets every resource (before a watch restarts from a snapshot).
func (t *ChainTracker) Reset() {
	clear(t.has)
	clear(t.counts)
}

// Check fires the targets that every resource has reached.
func (t *ChainTracker) Check() {
	for i, target := range t.targets {
		if !t.fired[i] && t.counts[target] == t.n {
			t.fired[i] = true
			t.Reached[i] <- time.Now()
		}
	}
}
