// Package busy measures saturation: the fraction of time a controller (or
// a QController's pool of workers) spent working over the last seconds.
//
// A [Meter] counts busy time in one-second slots, without locks and
// without allocation; [Meter.Fraction] reads the last complete seconds of
// its window. Work is counted when it ends, spread over the seconds it
// spanned (a reconcile still running is not counted yet), so the figure
// is approximate by design: good for "this pool is saturated", not for
// accounting. Concurrent writers that open a new second at the same time
// may lose a few nanoseconds of it.
package busy

import (
	"sync/atomic"
	"time"
)

// DefaultWindow is the number of complete seconds [Meter.Fraction] reads
// unless the meter was built with another window.
const DefaultWindow = 10

// Meter counts busy time per second for a pool of workers. Build it with
// [New]; all methods are safe for concurrent use.
type Meter struct {
	workers int
	window  int
	slots   []slot
}

// slot is one second's busy time.
type slot struct {
	second atomic.Int64 // Unix second the slot holds; 0 when never used
	busy   atomic.Int64 // nanoseconds
}

// New returns a meter for a pool of workers (at least 1) that reads the
// last window complete seconds (DefaultWindow when window <= 0).
func New(workers, window int) *Meter {
	if window <= 0 {
		window = DefaultWindow
	}
	return &Meter{workers: max(workers, 1), window: window, slots: make([]slot, window+2)}
}

// Add records that one worker was busy for d, ending at end.
func (m *Meter) Add(end time.Time, d time.Duration) {
	if d <= 0 {
		return
	}
	endNs := end.UnixNano()
	startNs := endNs - int64(d)
	const sec = int64(time.Second)
	first, last := floorDiv(startNs, sec), floorDiv(endNs-1, sec)
	// Spread over the seconds spanned, at most the whole ring.
	first = max(first, last-int64(len(m.slots))+1)
	for s := first; s <= last; s++ {
		from, to := max(startNs, s*sec), min(endNs, (s+1)*sec)
		if to > from {
			m.slot(s).add(s, to-from)
		}
	}
}

// slot returns the slot of Unix second s.
func (m *Meter) slot(s int64) *slot { return &m.slots[uint64(s)%uint64(len(m.slots))] }

// add counts ns busy nanoseconds of second sec, taking the slot over from
// an older second.
func (s *slot) add(sec, ns int64) {
	for {
		old := s.second.Load()
		switch {
		case old == sec:
			s.busy.Add(ns)
			return
		case old > sec:
			return // a newer second took the slot: this one is out of the window
		case s.second.CompareAndSwap(old, sec):
			s.busy.Store(ns)
			return
		}
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Fraction returns the share of the pool's time spent busy over the last
// window complete seconds before now: 0 idle, 1 every worker busy all the
// time (capped at 1).
func (m *Meter) Fraction(now time.Time) float64 {
	cur := now.Unix()
	var busy int64
	for sec := cur - int64(m.window); sec < cur; sec++ {
		s := m.slot(sec)
		if s.second.Load() == sec {
			busy += s.busy.Load()
		}
	}
	f := float64(busy) / (float64(m.window) * float64(time.Second) * float64(m.workers))
	return min(f, 1)
}

// Workers returns the pool's size.
func (m *Meter) Workers() int { return m.workers }
