package debughttp

import (
	"slices"
	"sync"
	"time"

	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/histogram"
)

// liveCounters are the cumulative counts the live document's rates are
// differences of: reconciles per controller, traffic per edge, changes
// routed per kind (by the keys below), and each controller's lag
// histogram.
type liveCounters struct {
	counts map[string]uint64
	lag    map[string]histogram.Snapshot
}

// Keys of liveCounters.counts.
func reconcilesKey(controller string) string { return "reconciles\x00" + controller }

func kindKey(ns, typ string) string { return "kind\x00" + ns + "\x00" + typ }

func edgeKey(controller, edgeType, ns, typ, id string) string {
	return "edge\x00" + controller + "\x00" + edgeType + "\x00" + ns + "\x00" + typ + "\x00" + id
}

// countersOf reads the counters of m.
func countersOf(m observe.Metrics) liveCounters {
	c := liveCounters{counts: map[string]uint64{}, lag: make(map[string]histogram.Snapshot, len(m.Controllers))}
	for _, s := range m.Controllers {
		c.counts[reconcilesKey(s.Name)] = s.Metrics.Reconciles
		c.lag[s.Name] = s.Metrics.Lag
		for _, e := range s.Metrics.Edges {
			c.counts[edgeKey(s.Name, e.EdgeType, e.Namespace, e.Type, e.ID)] = e.Count
		}
	}
	for _, k := range m.Kinds {
		c.counts[kindKey(k.Namespace, k.Type)] = k.EventsRouted
	}
	return c
}

// rateSampler keeps samples of the counters, taken when the document is
// built (at most one per RateWindow/10), so that a rate is the difference
// from the newest sample at least RateWindow old. It needs no goroutine:
// the samples are the documents' own readings, plus one when the handler
// is built.
type rateSampler struct {
	mu sync.Mutex
	// samples are oldest first: the newest one at least RateWindow old,
	// then every later one.
	samples []rateSample
}

type rateSample struct {
	at time.Time
	liveCounters
}

// minWindow is the shortest span a rate is computed over: a shorter one
// (right after the handler started) gives no rate rather than a noisy one.
const minWindow = RateWindow / 10

// since returns the sample the rates at now are computed against and the
// span it covers (0 and empty counters when there is none yet).
func (s *rateSampler) since(now time.Time) (liveCounters, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var base *rateSample
	for i := range s.samples {
		if at := s.samples[i].at; base == nil || !at.After(now.Add(-RateWindow)) {
			base = &s.samples[i]
		}
	}
	if base == nil || now.Sub(base.at) < minWindow {
		return liveCounters{}, 0
	}
	return base.liveCounters, now.Sub(base.at)
}

// sample keeps cur as the counters at now, unless the newest sample is
// younger than minWindow, and drops the samples no rate needs any more.
func (s *rateSampler) sample(now time.Time, cur liveCounters) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.samples); n > 0 && now.Sub(s.samples[n-1].at) < minWindow {
		return
	}
	s.samples = append(s.samples, rateSample{at: now, liveCounters: cur})
	keep := 0
	for i := range s.samples {
		if !s.samples[i].at.After(now.Add(-RateWindow)) {
			keep = i
		}
	}
	s.samples = slices.Delete(s.samples, 0, keep)
}
