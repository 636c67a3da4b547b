package recording

import (
	"math/bits"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
)

// entryWords is how many words an entry of an entryRing holds.
const entryWords = 3

// entryRing is a ring of the newest entries of one controller's pass log
// (rules RC9 and RC13), of entryWords words each, with the QController
// item of each (rare: most entries have none). It is not safe for
// concurrent use: its ctrlLog's lock protects it. It holds up to max
// entries in chunks of ringChunk, each allocated when the ring first
// reaches it (nothing is copied as it grows) and taken from budget (the
// pass log's chunks for every controller; a ring's first chunk is always
// taken): a ring that reaches max, or finds budget spent, stays at its
// size, and from then on an entry replaces the oldest. Its words hold no
// pointer; a chunk's items are allocated at its first entry that has an
// item.
type entryRing struct {
	// chunk is a power of two, 1<<shift.
	max, chunk, shift uint64
	budget            *atomic.Int64
	chunks            [][]uint64
	items             [][]resource.PointerKey
	// n is how many entries were put, size how many it holds, pos the
	// slot of the next.
	n, size, pos uint64
}

// ringChunk is how many entries a ring's chunk holds at most.
const ringChunk = 512

// newEntryRing returns a ring of at most max entries (rounded up to a
// power of two) whose chunks come from budget (nil: no bound).
func newEntryRing(max int, budget *atomic.Int64) entryRing {
	m := uint64(1) << bits.Len(uint(max-1))
	chunk := min(m, ringChunk)
	return entryRing{max: m, chunk: chunk, shift: uint64(bits.TrailingZeros64(chunk)), budget: budget}
}

// put writes the entry of words w0, w1 and w2 (with item, nil or zero
// for none) as the newest.
func (r *entryRing) put(w0, w1, w2 uint64, item *resource.PointerKey) {
	if r.pos == r.size && (r.n != r.size || !r.grow()) {
		r.pos = 0 // full: the oldest goes
	}
	i := r.pos
	r.pos++
	r.n++
	c, o := i>>r.shift, i&(r.chunk-1)
	w := r.chunks[c][o*entryWords : o*entryWords+entryWords : o*entryWords+entryWords]
	w[0], w[1], w[2] = w0, w1, w2
	if c < uint64(len(r.items)) && r.items[c] != nil || item != nil && item.Type() != "" {
		r.putItem(c, o, item)
	}
}

// grow adds a chunk, when the ring is below max and the budget has one
// (or it has none yet), and reports whether it did.
func (r *entryRing) grow() bool {
	if r.size >= r.max {
		return false
	}
	if r.budget != nil && r.budget.Add(-1) < 0 && len(r.chunks) > 0 {
		r.budget.Add(1)
		return false
	}
	r.chunks = append(r.chunks, make([]uint64, r.chunk*entryWords))
	r.size += r.chunk
	return true
}

// putItem sets the item of entry o of chunk c (nil: none).
func (r *entryRing) putItem(c, o uint64, item *resource.PointerKey) {
	for uint64(len(r.items)) <= c {
		r.items = append(r.items, nil)
	}
	if r.items[c] == nil {
		r.items[c] = make([]resource.PointerKey, r.chunk)
	}
	if item == nil {
		r.items[c][o] = resource.PointerKey{}
		return
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
	held := min(r.n, r.size)
	c := ringCopy{words: make([]uint64, 0, held*entryWords)}
	if r.items != nil {
		c.items = make([]resource.PointerKey, 0, held)
	}
	start := uint64(0)
	if r.n > r.size {
		start = r.pos // the oldest is the next to go
	}
	for k := range held {
		i := (start + k) % r.size
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
