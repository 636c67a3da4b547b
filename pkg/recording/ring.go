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
// concurrent use: its ctrlLog's lock protects it. It holds max entries
// (a power of two) in chunks of ringChunk, each allocated when the ring
// first reaches it (nothing is copied as it grows); once full, an entry
// replaces the oldest. Its words hold no pointer; a chunk's items are
// allocated at its first entry that has an item.
type entryRing struct {
	max, chunk uint64
	chunks     [][]uint64
	items      [][]resource.PointerKey
	// n is how many entries were put.
	n uint64
}

// ringChunk is how many entries a ring's chunk holds at most.
const ringChunk = 512

// newEntryRing returns a ring of at most max entries, rounded up to a
// power of two.
func newEntryRing(max int) entryRing {
	m := uint64(1) << bits.Len(uint(max-1))
	return entryRing{max: m, chunk: min(m, ringChunk)}
}

// put writes the entry of words w0, w1 and w2 (with item, zero for none)
// as the newest.
func (r *entryRing) put(w0, w1, w2 uint64, item *resource.PointerKey) {
	i := r.n & (r.max - 1)
	r.n++
	c, o := i/r.chunk, i%r.chunk
	if c == uint64(len(r.chunks)) {
		r.chunks = append(r.chunks, make([]uint64, r.chunk*entryWords))
	}
	w := r.chunks[c][o*entryWords : o*entryWords+entryWords : o*entryWords+entryWords]
	w[0], w[1], w[2] = w0, w1, w2
	if c < uint64(len(r.items)) && r.items[c] != nil || item.Type() != "" {
		r.putItem(c, o, item)
	}
}

// putItem sets the item of entry o of chunk c.
func (r *entryRing) putItem(c, o uint64, item *resource.PointerKey) {
	for uint64(len(r.items)) <= c {
		r.items = append(r.items, nil)
	}
	if r.items[c] == nil {
		r.items[c] = make([]resource.PointerKey, r.chunk)
	}
	r.items[c][o] = *item
}

// ringCopy is a copy of a ring's entries, oldest first.
type ringCopy struct {
	words []uint64
	items []resource.PointerKey
}

// copyOf returns a copy of the entries r holds, oldest first.
func (r *entryRing) copyOf() ringCopy {
	held := min(r.n, r.max)
	c := ringCopy{words: make([]uint64, 0, held*entryWords)}
	if r.items != nil {
		c.items = make([]resource.PointerKey, 0, held)
	}
	for k := r.n - held; k < r.n; k++ {
		i := k & (r.max - 1)
		ch, o := i/r.chunk, i%r.chunk
		c.words = append(c.words, r.chunks[ch][o*entryWords:o*entryWords+entryWords]...)
		if r.items != nil {
			var item resource.PointerKey
			if ch < uint64(len(r.items)) && r.items[ch] != nil {
				item = r.items[ch][o]
			}
			c.items = append(c.items, item)
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
