package queue

import (
	"time"
)

// Parking: with the retry policy's MaxAttempts, a key whose MaxAttempts-th consecutive
// run fails leaves the queue's scheduling (it is forgotten like a key that
// succeeded) and is recorded in q.held with its last failure, so that it is
// reported (Queue.Parked) and still counts as failing (Queue.Failing) until
// it is added again: then it is a fresh key, due at once with its counts at
// zero, and it stays failing until its next run does not fail. Parked keys
// are at most the distinct keys ever failing, and each leaves q.held when
// it is added again, so memory stays bounded by the number of distinct keys.

// Parked is a key parked after too many failed runs, as [Queue.Parked]
// reports it.
type Parked[K comparable] struct {
	Key K
	// Attempts is the number of consecutive failed runs that parked it.
	Attempts uint32
	// Err describes the last failure (see [Result.WithError]).
	Err string
	// At is when it was parked.
	At time.Time
}

// parkKey moves slab entry i, in no location and failing, out of the queue's
// scheduling into q.held. Requires q.mu.
func (q *Queue[K, N]) parkKey(i int32, msg string) {
	e := &q.slab[i]
	if q.held == nil {
		q.held = make(map[K]Parked[K])
	}
	q.held[e.key] = Parked[K]{Key: e.key, Attempts: e.retry.Attempts(), Err: msg, At: time.Now()}
	q.forget(i) // q.failing keeps counting it
}

// unparkKey makes the fresh slab entry i a parked key's comeback, if its key
// is parked: it stays failing (counted once) until its next run. Requires
// q.mu.
func (q *Queue[K, N]) unparkKey(i int32) {
	e := &q.slab[i]
	if _, ok := q.held[e.key]; ok {
		delete(q.held, e.key)
		e.failing = true
	}
}

// Parked returns the parked keys, in no particular order, up to limit of
// them (all when limit < 0), and how many there are. A key is parked from
// the failed run that exhausted the policy's MaxAttempts until it is added
// again.
func (q *Queue[K, N]) Parked(limit int) (keys []Parked[K], total int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	total = len(q.held)
	if limit < 0 || limit > total {
		limit = total
	}
	keys = make([]Parked[K], 0, limit)
	for _, p := range q.held {
		if len(keys) == limit {
			break
		}
		keys = append(keys, p)
	}
	return keys, total
}
