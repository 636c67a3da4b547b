package recording

import (
	"math/bits"

	"github.com/resgraph/resgraph/pkg/resource"
)

// entryWords is how many words an entry of an entryRing holds.
const entryWords = 3

// entryRing is a ring of the newest entries of one controller's pass log
// (rules RC9 and RC13), of entryWords words each, with the QController
// item of each (rare: most entries have none). It is not safe for
// concurrent use: its ctrlLog's lock protects it. It grows, doubling
// from ringFirst entries, as it fills, up to max (a power of two); from
// then on an entry replaces the oldest. Its words hold no pointer; items
// is allocated at the first entry that has an item.
type entryRing struct {
	max   int
	words []uint64
	items []resource.PointerKey
	// n is how many entries were put, size how many it holds now.
	n, size uint64
}

// ringFirst is how many entries a ring holds at its first entry.
const ringFirst = 64

// newEntryRing returns a ring of at most max entries, rounded up to a
// power of two.
func newEntryRing(max int) entryRing {
	return entryRing{max: 1 << bits.Len(uint(max-1))}
}

// put writes the entry of words w0, w1 and w2 (with item, zero for none)
// as the newest.
func (r *entryRing) put(w0, w1, w2 uint64, item *resource.PointerKey) {
	if r.n == r.size && r.size < uint64(r.max) {
		r.grow()
	}
	i := r.n & (r.size - 1)
	r.n++
	w := r.words[i*entryWords : i*entryWords+entryWords : i*entryWords+entryWords]
	w[0], w[1], w[2] = w0, w1, w2
	if r.items != nil || item.Type() != "" {
		r.putItem(i, item)
	}
}

// putItem sets the item of entry i.
func (r *entryRing) putItem(i uint64, item *resource.PointerKey) {
	if r.items == nil {
		r.items = make([]resource.PointerKey, r.size)
	}
	r.items[i] = *item
}

// grow doubles the ring (it is full and has not wrapped).
func (r *entryRing) grow() {
	r.size = min(max(2*r.size, ringFirst), uint64(r.max))
	words := make([]uint64, r.size*entryWords)
	copy(words, r.words)
	r.words = words
	if r.items != nil {
		items := make([]resource.PointerKey, r.size)
		copy(items, r.items)
		r.items = items
	}
}

// ringCopy is a copy of a ring's entries, oldest first.
type ringCopy struct {
	words []uint64
	items []resource.PointerKey
}

// copyOf returns a copy of the entries r holds, oldest first.
func (r *entryRing) copyOf() ringCopy {
	size := r.size
	held := min(r.n, size)
	c := ringCopy{words: make([]uint64, 0, held*entryWords)}
	if r.items != nil {
		c.items = make([]resource.PointerKey, 0, held)
	}
	start := (r.n - held) % max(size, 1)
	for _, part := range [][2]uint64{{start, min(start+held, size)}, {0, held - min(held, size-start)}} {
		c.words = append(c.words, r.words[part[0]*entryWords:part[1]*entryWords]...)
		if r.items != nil {
			c.items = append(c.items, r.items[part[0]:part[1]]...)
		}
	}
	return c
}

// len returns how many entries c holds.
func (c *ringCopy) len() int { return len(c.words) / entryWords }

// at returns the words and the item (zero for none) of c's entry i.
func (c *ringCopy) at(i int) ([entryWords]uint64, resource.PointerKey) {
	var w [entryWords]uint64
	copy(w[:], c.words[i*entryWords:])
	var item resource.PointerKey
	if c.items != nil {
		item = c.items[i]
	}
	return w, item
}
