package queue

import (
	"context"
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/resgraph/resgraph/pkg/internal/retry"
)

// location is where a known key is: exactly one of due, delayed, in flight.
type location uint8

const (
	locDue      location = iota + 1 // in q.due, waiting to be handed out
	locDelayed                      // in q.delayed, waiting for its due time
	locInFlight                     // handed out by Get, not yet Done
	locBlocked                      // due, but its partner is in flight (see Partner)
)

// releaseThreshold is the slab size above which the queue drops its storage
// when it becomes empty, so the memory of a burst (the initial fill) is
// returned; smaller queues keep theirs for reuse.
const releaseThreshold = 1024

// entry is the state of one key known to the queue, with its note.
type entry[K comparable, N any] struct {
	key     K
	hash    uint64     // the key's hash, computed once when it is added (see index)
	due     int64      // locDelayed: due time, in ns since Queue.epoch
	seq     uint64     // locDelayed: push order, breaks ties between equal due times
	heapIdx int32      // locDelayed: position in Queue.delayed; -1 otherwise
	retry   retry.Item // its consecutive failures and failed runs
	loc     location
	dirty   bool // locInFlight: added again while in flight; cleared by Done
	failing bool // its last Done reported a failure (see Queue.Failing)
	note    N    // the user's data about the key (see Queue: notes)
}

// Queue is a work queue of comparable keys (resource pointers) for a
// QController's workers; see the package documentation for its guarantees.
// Create it with [New]. All methods are safe for concurrent use.
//
// The protocol: a worker calls [Queue.Get] to take a key, processes it, then
// reports the outcome with [Queue.Done], exactly once. Producers call
// [Queue.Add] (or [Queue.AddBatch]) whenever a key needs processing.
//
// Keys are compared with ==, and an interface key must hold a comparable
// dynamic value (as a map key would). For resource pointers, pass the value
// built by resource.NewPointer(ns, typ, id), never a *Metadata or another
// Pointer implementation, so that two pointers to one resource are one key.
//
// Notes: each known key carries a note of type N, the user's data about the
// key's pending work (the Runtime's telemetry keeps there when the item
// became due and which changes it covers), kept in the key's own entry
// rather than in a table of the user's beside the queue. A key's note
// starts zero when the key becomes known; [Queue.AddNoted] and
// [Queue.AddBatchNoted] update it as they add the key, [Queue.GetNoted]
// hands it out with the key and zeroes it (so a note covers what happened
// since the key was last taken), and [Queue.CompleteNoted] updates it when
// the key stays in the queue after its run. It is dropped with the key
// (success, parking, shutdown). The update functions run with the queue's
// lock held: they must be cheap and must not call the queue. Use N =
// struct{} for no notes, at no cost.
type Queue[K comparable, N any] struct {
	policy  retry.Policy  // immutable after New, backoff defaults applied
	partner Partner[K]    // immutable after New; nil when keys have no partner
	epoch   time.Time     // immutable; origin of entry.due
	closed  chan struct{} // closed by ShutDown

	mu sync.Mutex

	// All fields below are guarded by mu. Invariants, true whenever mu is
	// not held:
	//
	//  1. index maps each known key to its slab entry; every other slab
	//     entry is zero and listed once in free. A known entry's hash is
	//     its key's.
	//  2. Each known key is in exactly one location: due (its index is in
	//     the due ring exactly once), delayed (in the delayed heap exactly
	//     once, at heapIdx), in flight, or blocked (in neither).
	//     index.n == due.len() + len(delayed) + inFlight + blocked.
	//  3. Only Get moves a key into flight, only from due; only Done moves
	//     it out. Hence a key is never handed out twice before its Done.
	//  3a. A key is blocked only while its partner is in flight: Get moves
	//     a due key whose partner is in flight to blocked instead of
	//     handing it out, and the partner's Done makes it due again. Hence
	//     a key and its partner are never in flight together.
	//  4. dirty is set only on in-flight keys; Done clears it and makes the
	//     key due, so an Add during processing yields exactly one more run.
	//  5. Known keys are the waiting and in-flight ones: a key that
	//     succeeds without being re-added is forgotten. Memory is therefore
	//     bounded by the number of distinct keys, not by the number of adds.
	//  6. Wake-up (see kick): if some Get is parked, then at least
	//     due.len() waiters are in transit (signalled, on their way to take
	//     a due key), and, if a key is delayed, either a waiter is in
	//     transit (it re-examines the queue and arms a timer if needed) or
	//     the parked timekeeper's timer fires no later than the earliest
	//     delayed key's due time. A parked Get thus never misses a key.
	index index[K]
	slab  []entry[K, N]
	// burst is the size of the slab released last (see forget), 0 once
	// the slab grew again: a queue whose bursts come and go grows its
	// slab to the last burst's size at once, not by doublings.
	burst    int
	free     []int32
	due      ring    // FIFO of due keys (slab indices), in the order they became due
	delayed  []int32 // min-heap of delayed keys by (due, seq); see heap.go
	seq      uint64  // next entry.seq
	inFlight int     // number of keys in flight
	blocked  int     // number of blocked keys
	failing  int     // number of keys whose failing flag is set, and parked keys (until ShutDown)
	shutdown bool

	// held holds the keys parked after the policy's MaxAttempts failed runs
	// (see park.go): they are not known keys (not in index), and each
	// counts in failing. nil until the first key is parked.
	held map[K]Parked[K]

	parked     []*waiter // Gets blocked with nothing to take, oldest first
	spare      []*waiter // unparked waiters kept for reuse
	transit    int       // waiters signalled but not yet back under mu
	timekeeper *waiter   // parked waiter whose timer is set for tkDeadline; nil if none
	tkDeadline int64     // when timekeeper's timer fires, in ns since epoch

	hashes *uint64 // tests only: counts the keys hashed
}

// New returns an empty queue whose keys are retried with policy p (zero
// backoff bounds meaning their defaults). It starts no goroutine, so an
// unused queue needs no shutdown. New panics if p's backoff does not
// validate: callers validate user-provided durations before.
func New[K comparable, N any](p retry.Policy) *Queue[K, N] {
	return NewWithPartner[K, N](p, nil)
}

// Partner returns the key that must never be in flight at the same time as
// k, and whether k has one. The relation is symmetric: when k's partner is
// p, p's partner is k. It is called with the queue's lock held, so it must
// be cheap and must not call the queue.
type Partner[K comparable] func(k K) (K, bool)

// NewWithPartner returns an empty queue (see [New]) whose keys are also
// exclusive with their partner: a due key whose partner is in flight is
// not handed out; it waits, counted as waiting ([Queue.Len]), until the
// partner's [Queue.Done] makes it due again (at the back of the due
// FIFO, without a delay). A nil partner means no key has one, at no cost.
func NewWithPartner[K comparable, N any](p retry.Policy, partner Partner[K]) *Queue[K, N] {
	if err := p.Backoff.Validate(); err != nil {
		panic("queue: " + err.Error())
	}
	p.Backoff = p.Backoff.OrDefault()
	return &Queue[K, N]{
		policy:  p,
		partner: partner,
		epoch:   time.Now(),
		closed:  make(chan struct{}),
		index:   index[K]{seed: maphash.MakeSeed()},
	}
}

// Add queues k to run now. A key already waiting to run keeps its place; a
// key waiting out a backoff or requeue delay is made due now (behind the
// keys already due), keeping its failure count; a key in flight is run once
// more after its Done. Add after ShutDown does nothing.
func (q *Queue[K, N]) Add(k K) { q.AddNoted(k, nil) }

// AddNoted is [Queue.Add], also updating k's note with note (nil: none),
// under the queue's lock (see Queue: notes). After ShutDown, note is not
// called.
func (q *Queue[K, N]) AddNoted(k K, note func(*N)) {
	q.mu.Lock()
	if !q.shutdown {
		q.promote()
		i, due := q.add(k)
		if note != nil {
			note(&q.slab[i].note)
		}
		if due {
			q.kick()
		}
	}
	q.mu.Unlock()
}

// AddBatch adds every key of ks as [Queue.Add] does, in order, under one
// lock acquisition. The queue does not keep ks.
func (q *Queue[K, N]) AddBatch(ks []K) { q.AddBatchNoted(ks, nil) }

// AddBatchNoted is [Queue.AddBatch], also updating the note of each ks[i]
// with note(i, note) (nil: none), in order, under the queue's lock (see
// Queue: notes). After ShutDown, note is not called.
func (q *Queue[K, N]) AddBatchNoted(ks []K, note func(i int, n *N)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	if q.index.n == 0 && len(ks) > len(q.slab) {
		// Initial fill: size the storage once instead of growing it.
		q.sizeIndexFor(len(ks))
		q.slab = make([]entry[K, N], 0, max(len(ks), q.burst))
		q.free, q.burst = nil, 0
	}
	q.promote()
	changed := false
	for j, k := range ks {
		i, due := q.add(k)
		if note != nil {
			note(j, &q.slab[i].note)
		}
		changed = changed || due
	}
	if changed {
		q.kick()
	}
}

// add applies Add to k and returns its slab index, and whether a key
// became due. Requires q.mu.
func (q *Queue[K, N]) add(k K) (int32, bool) {
	h := q.hashKey(k)
	i, slot, ok := q.lookup(k, h)
	if !ok {
		i = q.alloc(k, h, slot)
		if len(q.held) > 0 {
			q.unparkKey(i)
		}
		q.slab[i].loc = locDue
		q.due.push(i)
		return i, true
	}
	e := &q.slab[i]
	if e.loc != locInFlight {
		e.retry.Changed(q.policy)
	}
	switch e.loc {
	case locInFlight:
		e.dirty = true
	case locDelayed:
		q.heapRemove(int(e.heapIdx))
		e.loc = locDue
		q.due.push(i)
		return i, true
	}
	return i, false
}

// Get blocks until a key is due, marks it in flight and returns it. Keys are
// handed out in the order they became due. ok is false, and no key is taken,
// when ctx is done or the queue is shut down (even if keys are due).
func (q *Queue[K, N]) Get(ctx context.Context) (k K, ok bool) {
	k, _, _, ok = q.GetNoted(ctx)
	return k, ok
}

// Slot is where the entry of a key taken by [Queue.GetNoted] stays until
// the key's completion: [Queue.CompleteNoted] finds the entry there
// instead of looking the key up. The zero Slot is none.
type Slot struct{ i int32 }

// GetNoted is [Queue.Get], also returning the key's note, which the key's
// entry no longer holds: the next note of the key covers what happens
// from now on (see Queue: notes), and the key's slot, for
// [Queue.CompleteNoted].
func (q *Queue[K, N]) GetNoted(ctx context.Context) (k K, n N, s Slot, ok bool) {
	if ctx.Err() != nil {
		return k, n, s, false
	}
	q.mu.Lock()
	var w *waiter
	for !q.shutdown {
		now := q.promote()
		if i, ok := q.popDue(); ok {
			e := &q.slab[i]
			e.loc = locInFlight
			q.inFlight++
			k = e.key
			n, e.note = e.note, n
			if w != nil {
				q.putWaiter(w)
			}
			q.kick()
			q.mu.Unlock()
			return k, n, Slot{i: i + 1}, true
		}

		if w == nil {
			w = q.getWaiter()
		}
		q.parkLocked(ctx, w, now)
		if ctx.Err() != nil {
			break
		}
	}
	if w != nil {
		q.putWaiter(w)
	}
	q.kick() // pass on a signal or the timekeeper duty this Get received
	q.mu.Unlock()
	return k, n, s, false
}

// parkLocked parks w until it is signalled, its timer fires, ctx is done
// or the queue closes: nothing is due at now. It parks as the timekeeper
// when the earliest delayed key has none that wakes early enough. The
// caller holds q.mu, which parkLocked releases while parked and holds
// again when it returns.
func (q *Queue[K, N]) parkLocked(ctx context.Context, w *waiter, now int64) {
	q.parked = append(q.parked, w)
	var timer *time.Timer
	var timerC <-chan time.Time
	if len(q.delayed) > 0 {
		next := q.slab[q.delayed[0]].due
		if q.timekeeper == nil || q.tkDeadline > next {
			q.timekeeper, q.tkDeadline = w, next
			timer = time.NewTimer(time.Duration(next - now))
			timerC = timer.C
		}
	}
	q.mu.Unlock()

	select {
	case <-w.ch:
	case <-timerC:
	case <-ctx.Done():
	case <-q.closed:
	}
	if timer != nil {
		timer.Stop()
	}

	q.mu.Lock()
	q.unpark(w)
}

// Done is [Queue.Complete] returning only the delay.
func (q *Queue[K, N]) Done(k K, r Result) (delay time.Duration) {
	return q.Complete(k, r).Delay
}

// Completion is what [Queue.Complete] did with a key.
type Completion struct {
	// Delay is the delay after which the key is due again: 0 when it is
	// due now, forgotten, parked, or the queue is shut down.
	Delay time.Duration
	// Attempts is the key's number of consecutive failed runs, this one
	// included (0 after a run that did not fail, and after ShutDown).
	Attempts uint32
	// Parked is set when the key was parked (see retry.Policy.MaxAttempts).
	Parked bool
}

// Complete reports the outcome of processing k, which must be in flight
// (taken by Get and not yet done; otherwise Complete panics, as that is a
// bug in the caller):
//
//   - [Success] resets k's failure count and forgets k;
//   - [Failure] counts one more consecutive failure and makes k due after
//     its backoff (the policy's retry.Backoff.Delay of its failures);
//   - [RequeueAfter](d) makes k due after d (now if d <= 0) and leaves its
//     failure count as it is.
//
// If k was added while in flight, it is due now instead of after any delay
// (a fresh change runs now), with its failure count updated as above, so a
// key that keeps failing keeps backing off once the changes stop (unless
// the policy's ChangeAbandonsRetry: then its counts start over).
//
// With the policy's MaxAttempts, a result that reports a failure ([Failure],
// [RequeueAfterFailure]) as the key's MaxAttempts-th consecutive failed run
// parks it instead (see [Queue.Parked]): it is not retried until it is
// added again. A key added while that last run was in flight is not
// parked: the change is newer than the run, so the key is due now with its
// counts started over, as a parked key added again would be. [Denied]
// parks k at once, whatever MaxAttempts (unless k was added while in
// flight, as above).
//
// After ShutDown, Complete only takes k out of flight.
func (q *Queue[K, N]) Complete(k K, r Result) Completion {
	return q.CompleteNoted(k, Slot{}, r, nil)
}

// CompleteNoted is [Queue.Complete] of k, taken by [Queue.GetNoted] with
// the slot s (the zero Slot: look k up), also updating k's note with
// settle (nil: none), under the queue's lock, when k stays in the queue:
// due now (added while in flight, or requeued at once) or after c.Delay
// (see Queue: notes). A slot that does not hold k in flight panics, as a
// key not in flight does.
func (q *Queue[K, N]) CompleteNoted(k K, s Slot, r Result, settle func(n *N, c Completion)) (c Completion) {
	q.mu.Lock()
	defer q.mu.Unlock()
	i, ok := s.i-1, s.i > 0 && int(s.i) <= len(q.slab)
	if !ok {
		i, ok = q.find(k)
	}
	if !ok || q.slab[i].loc != locInFlight || q.slab[i].key != k {
		panic("queue: Done called for a key that is not in flight")
	}
	q.inFlight--
	if q.shutdown {
		q.forget(i)
		return c
	}
	if q.blocked > 0 {
		q.unblockPartner(k)
	}
	now := q.promote()
	e := &q.slab[i]
	if f := r.failed(); f != e.failing {
		e.failing = f
		if f {
			q.failing++
		} else {
			q.failing--
		}
	}
	exhausted := e.retry.Ran(q.policy, r.run)
	c.Attempts = e.retry.Attempts()
	switch {
	case e.dirty:
		e.dirty = false
		if exhausted {
			e.retry.Reset()
		} else {
			e.retry.Changed(q.policy)
		}
		q.makeDue(i)
	case exhausted:
		c.Parked = true
		q.parkKey(i, r.err)
		return c
	case r.run == retry.Succeeded:
		q.forget(i)
		return c
	case r.run == retry.Failed:
		c.Delay = e.retry.Delay(q.policy)
		q.delay(i, now, c.Delay)
	case r.after <= 0:
		q.makeDue(i)
	default:
		c.Delay = r.after
		q.delay(i, now, c.Delay)
	}
	if settle != nil {
		settle(&q.slab[i].note, c)
	}
	q.kick()
	return c
}

// Len returns the number of keys waiting: due, or delayed by a backoff or a
// requeue. Keys in flight are not counted, even if added again.
func (q *Queue[K, N]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.due.len() + len(q.delayed) + q.blocked
}

// Failing returns the number of keys whose last Done reported a failure
// ([Failure] or [RequeueAfterFailure]): keys that failed and have not
// succeeded or been requeued without a failure since. After ShutDown it
// reports the keys failing when the queue shut down.
func (q *Queue[K, N]) Failing() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failing
}

// Settled reports whether no key is due (or waiting for its partner) and
// none is in flight: the keys left, if any, wait out a backoff or a
// requeue delay. It takes the lock, and no scan.
func (q *Queue[K, N]) Settled() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.due.len()+q.blocked+q.inFlight == 0
}

// InFlight returns the number of keys handed out by Get and not yet Done.
func (q *Queue[K, N]) InFlight() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.inFlight
}

// ShutDown stops the queue: every blocked Get returns ok=false, and so does
// every later Get; waiting keys are dropped and later Adds ignored. Keys in
// flight may still be reported with Done. ShutDown is idempotent.
func (q *Queue[K, N]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	q.shutdown = true
	close(q.closed)
	for {
		i, ok := q.due.pop()
		if !ok {
			break
		}
		q.forget(i)
	}
	for len(q.delayed) > 0 {
		q.forget(q.heapRemove(len(q.delayed) - 1))
	}
	if q.blocked > 0 {
		// forget may release the slab: its length is read anew.
		for i := int32(0); int(i) < len(q.slab); i++ {
			if q.slab[i].loc == locBlocked {
				q.forget(i)
			}
		}
		q.blocked = 0
	}
}

// popDue takes the first due key whose partner is not in flight out of the
// due FIFO; due keys before it whose partner is in flight are blocked on
// the way (see invariant 3a). Requires q.mu.
func (q *Queue[K, N]) popDue() (int32, bool) {
	for {
		i, ok := q.due.pop()
		if !ok || q.partner == nil || q.inFlight == 0 {
			return i, ok // no partner can be in flight
		}
		p, has := q.partner(q.slab[i].key)
		if !has {
			return i, true
		}
		if j, known := q.find(p); !known || q.slab[j].loc != locInFlight {
			return i, true
		}
		q.slab[i].loc = locBlocked
		q.blocked++
	}
}

// unblockPartner makes k's partner due when it is blocked: k, its partner,
// leaves flight. The partner goes to the back of the due FIFO, before k
// itself if k is made due again by the same Done. Requires q.mu.
func (q *Queue[K, N]) unblockPartner(k K) {
	p, has := q.partner(k)
	if !has {
		return
	}
	if j, known := q.find(p); known && q.slab[j].loc == locBlocked {
		q.blocked--
		q.makeDue(j)
		q.kick()
	}
}

// now returns the current time in ns since q.epoch.
func (q *Queue[K, N]) now() int64 { return int64(time.Since(q.epoch)) }

// promote moves every delayed key whose due time has come to the back of
// the due FIFO, earliest first, so keys are served in the order they became
// due. It returns the current time, read only when some key is delayed (0
// otherwise). Requires q.mu; the caller calls kick after its own change.
func (q *Queue[K, N]) promote() (now int64) {
	if len(q.delayed) == 0 {
		return 0
	}
	now = q.now()
	for len(q.delayed) > 0 && q.slab[q.delayed[0]].due <= now {
		q.makeDue(q.heapRemove(0))
	}
	return now
}

// makeDue puts slab entry i, in no location, at the back of the due FIFO.
// Requires q.mu.
func (q *Queue[K, N]) makeDue(i int32) {
	q.slab[i].loc = locDue
	q.due.push(i)
}

// delay puts slab entry i, in no location, into the delayed heap, due d
// after now (read now if 0). Requires q.mu.
func (q *Queue[K, N]) delay(i int32, now int64, d time.Duration) {
	if now == 0 {
		now = q.now()
	}
	e := &q.slab[i]
	e.loc = locDelayed
	e.due = now + int64(d)
	if int64(d) > math.MaxInt64-now { // saturate instead of overflowing
		e.due = math.MaxInt64
	}
	e.seq = q.seq
	q.seq++
	q.heapPush(i)
}

// alloc adds k, of hash h, to the index with a fresh slab entry, at the
// slot lookup's miss returned, and returns its index. Requires q.mu.
func (q *Queue[K, N]) alloc(k K, h uint64, slot int) int32 {
	var i int32
	if n := len(q.free); n > 0 {
		i = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		if len(q.slab) == math.MaxInt32 {
			panic("queue: more than 2^31-1 distinct keys")
		}
		if len(q.slab) == cap(q.slab) && q.burst > len(q.slab) {
			q.slab = slices.Grow(q.slab, q.burst-len(q.slab))
			q.burst = 0
		}
		i = int32(len(q.slab))
		q.slab = append(q.slab, entry[K, N]{})
	}
	q.slab[i] = entry[K, N]{key: k, hash: h, heapIdx: -1}
	q.insert(i, slot)
	return i
}

// forget removes slab entry i, in no location, and its key. When the queue
// becomes empty after a large burst, its storage is released, and the
// burst's size kept: the next burst's slab grows to it at once (and then
// as its keys need). Requires q.mu.
func (q *Queue[K, N]) forget(i int32) {
	q.remove(i)
	q.slab[i] = entry[K, N]{}
	q.free = append(q.free, i)
	if q.index.n == 0 && len(q.slab) > releaseThreshold {
		q.burst = len(q.slab)
		q.index.slots = nil
		q.slab = nil
		q.free = nil
		q.due.reset()
		q.delayed = nil
	}
}
