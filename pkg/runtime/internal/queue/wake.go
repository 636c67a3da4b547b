package queue

// waiter is a Get blocked with nothing to take. It is parked in q.parked
// until a producer signals it (moving it out of q.parked into the transit
// count) or it wakes by itself (timer, context, shutdown) and unparks.
type waiter struct {
	// ch receives one token per signal. It has capacity 1 and is empty
	// whenever the waiter is parked: unpark drains a token that was sent but
	// not received.
	ch chan struct{}
	// signalled is guarded by Queue.mu: true from signal until unpark.
	signalled bool
}

// getWaiter returns a waiter from the spare pool or a new one. Requires q.mu.
func (q *Queue[K, N]) getWaiter() *waiter {
	if n := len(q.spare); n > 0 {
		w := q.spare[n-1]
		q.spare[n-1] = nil
		q.spare = q.spare[:n-1]
		return w
	}
	return &waiter{ch: make(chan struct{}, 1)}
}

// putWaiter returns an unparked waiter to the spare pool (whose size is
// bounded by the largest number of Gets blocked at once). Requires q.mu.
func (q *Queue[K, N]) putWaiter(w *waiter) {
	q.spare = append(q.spare, w)
}

// kick restores the wake-up invariant after a change, by signalling parked
// waiters (requires q.mu):
//
//   - every due entry has a taker: while fewer waiters are in transit than
//     entries are due, a parked waiter is signalled;
//   - the earliest delayed entry has a timekeeper: when no waiter is in
//     transit (a waiter in transit re-examines the queue before it parks
//     again) and the timekeeper's deadline is later than the heap's root, or
//     there is none, a parked waiter is signalled to take the duty.
//
// So a key that is due or becomes due is never left waiting while a Get is
// parked, and a Get that finds nothing to take parks without busy-waiting.
func (q *Queue[K, N]) kick() {
	for len(q.parked) > 0 && q.transit < q.due.len() {
		q.signal()
	}
	if len(q.parked) > 0 && q.transit == 0 && len(q.delayed) > 0 &&
		(q.timekeeper == nil || q.tkDeadline > q.slab[q.delayed[0]].due) {
		q.signal()
	}
}

// signal wakes one parked waiter: the most recently parked one that is not
// the timekeeper (so the timekeeper keeps its timer), or the timekeeper when
// it is the only one. Requires q.mu and len(q.parked) > 0.
func (q *Queue[K, N]) signal() {
	n := len(q.parked)
	j := n - 1
	if q.parked[j] == q.timekeeper && n > 1 {
		j--
	}
	w := q.parked[j]
	copy(q.parked[j:], q.parked[j+1:])
	q.parked[n-1] = nil
	q.parked = q.parked[:n-1]
	w.signalled = true
	q.transit++
	select {
	case w.ch <- struct{}{}:
	default: // unreachable: a parked waiter's channel is empty (see waiter.ch)
	}
}

// unpark takes w, which has just woken up, out of the wake-up bookkeeping:
// out of the transit count if it was signalled (draining a token it did not
// receive), out of q.parked otherwise, and out of the timekeeper duty.
// Requires q.mu.
func (q *Queue[K, N]) unpark(w *waiter) {
	if w.signalled {
		w.signalled = false
		q.transit--
		select {
		case <-w.ch:
		default:
		}
	} else {
		for j := len(q.parked) - 1; j >= 0; j-- {
			if q.parked[j] == w {
				copy(q.parked[j:], q.parked[j+1:])
				q.parked[len(q.parked)-1] = nil
				q.parked = q.parked[:len(q.parked)-1]
				break
			}
		}
	}
	if q.timekeeper == w {
		q.timekeeper = nil
	}
}
