package queue

// A simulator that replays a recording chooses which due key each worker
// takes (sched.Picker): it lists the keys a Get could hand out now
// ([Queue.Due]) and has the worker take the one it picked
// ([Queue.TakeNoted]) instead of the first. A queue whose keys are taken
// only by Get pays nothing for it.

// Due calls yield with each key a Get could hand out now, in the order Get
// would (the due keys whose partner is not in flight, oldest first), until
// yield returns false. Keys whose delay has ended are made due first, as
// Get does. yield runs with the queue's lock held: it must not call the
// queue. After ShutDown it yields nothing.
func (q *Queue[K, N]) Due(yield func(K) bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	q.promote()
	for j := range q.due.len() {
		i := q.due.at(j)
		if q.partnerInFlight(i) {
			continue
		}
		if !yield(q.slab[i].key) {
			return
		}
	}
}

// TakeNoted is [Queue.GetNoted] of the key k, chosen by the caller among
// those [Queue.Due] listed: it marks k in flight and returns its note and
// slot, or ok=false, taking nothing, when k is not due now (it was taken,
// is delayed or unknown), its partner is in flight, or the queue is shut
// down. It never blocks.
func (q *Queue[K, N]) TakeNoted(k K) (n N, s Slot, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return n, s, false
	}
	q.promote()
	i, known := q.find(k)
	if !known || q.slab[i].loc != locDue || q.partnerInFlight(i) || !q.due.remove(i) {
		return n, s, false
	}
	e := &q.slab[i]
	e.loc = locInFlight
	q.inFlight++
	n, e.note = e.note, n
	q.kick()
	return n, Slot{i: i + 1}, true
}

// partnerInFlight reports whether the key of slab entry i has a partner
// in flight. Requires q.mu.
func (q *Queue[K, N]) partnerInFlight(i int32) bool {
	if q.partner == nil || q.inFlight == 0 {
		return false
	}
	p, has := q.partner(q.slab[i].key)
	if !has {
		return false
	}
	j, known := q.find(p)
	return known && q.slab[j].loc == locInFlight
}
