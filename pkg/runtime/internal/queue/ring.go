package queue

// minRingCap is a ring's first capacity.
const minRingCap = 16

// ringKeep is the capacity up to which a ring keeps its buffer however
// short it gets (4 KiB; a queue keeps a slab of up to releaseThreshold
// entries for reuse in the same way): a queue whose due keys come and go
// in bursts of up to that many does not allocate a buffer per burst.
const ringKeep = 1024

// ring is a FIFO of slab indices in a circular buffer. Push and pop are
// amortized O(1); the buffer doubles when full and, above ringKeep, halves
// when it is less than a quarter full, so its capacity stays within 4x of
// the longest queue since the last shrink (or within ringKeep) and never
// grows with the number of pushes. The zero value is an empty ring.
type ring struct {
	buf  []int32 // len(buf) is 0 or a power of two
	head int     // index of the first element in buf
	n    int     // number of elements
}

// len returns the number of elements.
func (r *ring) len() int { return r.n }

// push appends i at the back.
func (r *ring) push(i int32) {
	if r.n == len(r.buf) {
		r.resize(max(minRingCap, 2*len(r.buf)))
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = i
	r.n++
}

// pop removes and returns the front element; ok is false when r is empty.
func (r *ring) pop() (i int32, ok bool) {
	if r.n == 0 {
		return 0, false
	}
	i = r.buf[r.head]
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	if len(r.buf) > ringKeep && r.n < len(r.buf)/4 {
		r.resize(len(r.buf) / 2)
	}
	return i, true
}

// resize moves the elements, in order, to a buffer of capacity c >= r.n.
func (r *ring) resize(c int) {
	buf := make([]int32, c)
	if r.n > 0 {
		end := r.head + r.n
		if end <= len(r.buf) {
			copy(buf, r.buf[r.head:end])
		} else {
			k := copy(buf, r.buf[r.head:])
			copy(buf[k:], r.buf[:end-len(r.buf)])
		}
	}
	r.buf = buf
	r.head = 0
}

// reset empties r and releases its buffer.
func (r *ring) reset() { *r = ring{} }

// at returns the j-th element from the front (0 <= j < r.len()).
func (r *ring) at(j int) int32 { return r.buf[(r.head+j)&(len(r.buf)-1)] }

// remove takes the first element equal to i out of r, keeping the order
// of the others, and reports whether it was there. It is O(len).
func (r *ring) remove(i int32) bool {
	for j := range r.n {
		if r.at(j) != i {
			continue
		}
		for ; j < r.n-1; j++ {
			r.buf[(r.head+j)&(len(r.buf)-1)] = r.at(j + 1)
		}
		r.n--
		return true
	}
	return false
}
