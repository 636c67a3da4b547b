package queue

import "hash/maphash"

// index maps each known key to its slab entry: an open-addressed table
// (linear probing, backward-shift deletion) of slab indexes plus one, 0
// marking an empty slot. Each entry keeps its key's hash (entry.hash), so
// a key is hashed once in its stay in the queue: when it is added (the
// lookup that misses gives the slot it goes in). Taking a key by its
// Slot, completing it and forgetting it hash nothing; a partner's lookup
// and TakeNoted hash the key they look up. Growth and deletion move
// entries by their kept hashes. All of it requires q.mu.
type index[K comparable] struct {
	seed  maphash.Seed
	slots []int32 // length 0 or a power of two
	n     int     // number of keys
}

// minIndexSlots is the table's first size.
const minIndexSlots = 8

// hashKey hashes k for the index.
func (q *Queue[K, N]) hashKey(k K) uint64 {
	if q.hashes != nil {
		*q.hashes++
	}
	return maphash.Comparable(q.index.seed, k)
}

// lookup returns k's slab index, or, when k is not known, the table slot
// it would go in (-1 when the table is empty). h is k's hash.
func (q *Queue[K, N]) lookup(k K, h uint64) (i int32, slot int, ok bool) {
	slots := q.index.slots
	if len(slots) == 0 {
		return 0, -1, false
	}
	mask := uint64(len(slots) - 1)
	for j := h & mask; ; j = (j + 1) & mask {
		s := slots[j]
		if s == 0 {
			return 0, int(j), false
		}
		if e := &q.slab[s-1]; e.hash == h && e.key == k {
			return s - 1, int(j), true
		}
	}
}

// find returns k's slab index, if k is known.
func (q *Queue[K, N]) find(k K) (int32, bool) {
	if q.index.n == 0 {
		return 0, false
	}
	i, _, ok := q.lookup(k, q.hashKey(k))
	return i, ok
}

// insert puts slab entry i, whose hash is set, in the table at slot (from
// lookup's miss), growing the table first when it would be over three
// quarters full.
func (q *Queue[K, N]) insert(i int32, slot int) {
	x := &q.index
	if slot < 0 || (x.n+1)*4 > len(x.slots)*3 {
		q.sizeIndex(max(minIndexSlots, 2*len(x.slots)))
		slot = q.emptySlot(q.slab[i].hash)
	}
	x.slots[slot] = i + 1
	x.n++
}

// sizeIndex makes the table n slots long (a power of two large enough for
// its keys), re-placing its entries by their kept hashes.
func (q *Queue[K, N]) sizeIndex(n int) {
	old := q.index.slots
	q.index.slots = make([]int32, n)
	for _, s := range old {
		if s != 0 {
			q.index.slots[q.emptySlot(q.slab[s-1].hash)] = s
		}
	}
}

// emptySlot returns the first empty slot of h's probe sequence.
func (q *Queue[K, N]) emptySlot(h uint64) int {
	slots := q.index.slots
	mask := uint64(len(slots) - 1)
	j := h & mask
	for slots[j] != 0 {
		j = (j + 1) & mask
	}
	return int(j)
}

// remove takes slab entry i, which is in the table, out of it, shifting
// back the entries of the probe run after it so that no lookup stops
// early.
func (q *Queue[K, N]) remove(i int32) {
	slots := q.index.slots
	mask := uint64(len(slots) - 1)
	j := q.slab[i].hash & mask
	for slots[j] != i+1 {
		j = (j + 1) & mask
	}
	q.index.n--
	for k := j; ; {
		slots[j] = 0
		for {
			k = (k + 1) & mask
			s := slots[k]
			if s == 0 {
				return
			}
			// s stays unless its home slot is cyclically after j and
			// at or before k.
			home := q.slab[s-1].hash & mask
			if (k-home)&mask >= (k-j)&mask {
				slots[j] = s
				j = k
				break
			}
		}
	}
}

// sizeIndexFor gives an empty table room for n keys at once.
func (q *Queue[K, N]) sizeIndexFor(n int) {
	size := minIndexSlots
	for size*3 < n*4 {
		size *= 2
	}
	q.index.slots = make([]int32, size)
}
