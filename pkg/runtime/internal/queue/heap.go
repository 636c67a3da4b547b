package queue

// The delayed heap: q.delayed is a binary min-heap of slab indices ordered by
// (due, seq), so the root is the entry that becomes due first and entries due
// at the same instant come out in the order they were delayed. Every entry in
// the heap records its position in heapIdx, which makes removal of an
// arbitrary entry (a delayed key added again, made due at once) O(log n).
// All methods require q.mu.

// heapLess orders slab entries a and b by due time, then by push order.
func (q *Queue[K, N]) heapLess(a, b int32) bool {
	ea, eb := &q.slab[a], &q.slab[b]
	if ea.due != eb.due {
		return ea.due < eb.due
	}
	return ea.seq < eb.seq
}

// heapSwap swaps heap positions h1 and h2 and fixes their heapIdx.
func (q *Queue[K, N]) heapSwap(h1, h2 int) {
	d := q.delayed
	d[h1], d[h2] = d[h2], d[h1]
	q.slab[d[h1]].heapIdx = int32(h1)
	q.slab[d[h2]].heapIdx = int32(h2)
}

// heapUp moves the element at position h towards the root until its parent
// is not greater.
func (q *Queue[K, N]) heapUp(h int) {
	for h > 0 {
		p := (h - 1) / 2
		if !q.heapLess(q.delayed[h], q.delayed[p]) {
			return
		}
		q.heapSwap(h, p)
		h = p
	}
}

// heapDown moves the element at position h towards the leaves until no
// child is smaller; it reports whether the element moved.
func (q *Queue[K, N]) heapDown(h int) bool {
	start, n := h, len(q.delayed)
	for {
		c := 2*h + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && q.heapLess(q.delayed[r], q.delayed[c]) {
			c = r
		}
		if !q.heapLess(q.delayed[c], q.delayed[h]) {
			break
		}
		q.heapSwap(h, c)
		h = c
	}
	return h > start
}

// heapPush adds slab entry i, whose due and seq are set.
func (q *Queue[K, N]) heapPush(i int32) {
	q.slab[i].heapIdx = int32(len(q.delayed))
	q.delayed = append(q.delayed, i)
	q.heapUp(len(q.delayed) - 1)
}

// heapRemove removes the element at heap position h and returns its slab
// index.
func (q *Queue[K, N]) heapRemove(h int) int32 {
	i := q.delayed[h]
	last := len(q.delayed) - 1
	if h != last {
		q.heapSwap(h, last)
	}
	q.delayed = q.delayed[:last]
	if h != last && !q.heapDown(h) {
		q.heapUp(h)
	}
	q.slab[i].heapIdx = -1
	return i
}
