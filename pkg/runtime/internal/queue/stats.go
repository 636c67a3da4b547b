package queue

import (
	"math"
	"time"
)

// Stats is what a queue holds at one instant (see [Queue.Stats]).
type Stats[K comparable] struct {
	// Due counts the keys that may be handed out now (or as soon as their
	// partner is done, see [NewWithPartner]), InFlight those
	// handed out and not yet Done, Delayed those waiting out a backoff or
	// a requeue delay.
	Due, InFlight, Delayed int
	// NextDue is when the earliest delayed key becomes due; zero when no
	// key is delayed.
	NextDue time.Time
	// Sample lists up to the requested number of due and in-flight keys,
	// in flight first.
	Sample []K
	// SampleInFlight is how many of Sample are in flight.
	SampleInFlight int
}

// Stats returns how many keys are due, in flight and delayed, when the
// next delayed key is due, and up to sample due or in-flight keys (for
// reports). A delayed key whose time has come counts as due. It takes the
// queue's lock for a scan of every known key: it is meant for diagnostics
// and tests, not for hot paths.
func (q *Queue[K, N]) Stats(sample int) Stats[K] {
	q.mu.Lock()
	defer q.mu.Unlock()
	var st Stats[K]
	now := q.now()
	earliest := int64(math.MaxInt64)
	var due []K
	for i := range q.slab {
		e := &q.slab[i]
		if e.loc == 0 {
			continue // free
		}
		k := e.key
		switch {
		case e.loc == locInFlight:
			st.InFlight++
			if len(st.Sample) < sample {
				st.Sample = append(st.Sample, k)
			}
		case e.loc == locDue || e.loc == locBlocked || (e.loc == locDelayed && e.due <= now):
			st.Due++
			if len(due) < sample {
				due = append(due, k)
			}
		default:
			st.Delayed++
			earliest = min(earliest, e.due)
		}
	}
	st.SampleInFlight = len(st.Sample)
	for _, k := range due {
		if len(st.Sample) == sample {
			break
		}
		st.Sample = append(st.Sample, k)
	}
	if st.Delayed > 0 && earliest != math.MaxInt64 {
		st.NextDue = q.epoch.Add(time.Duration(earliest))
	}
	return st
}
