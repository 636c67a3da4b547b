package telemetry

import (
	"hash/maphash"

	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
)

// itemTable holds the pending work of a QController's items: one entry per
// item queued and not started yet, or failing (its attempt count), found
// by the item.
//
// It exists instead of a map[work.Item]pending because each item's
// accounting (queued, started, ended) looked its entry up and then
// assigned or deleted it: two hashes of the item's three strings per call,
// on a map of ~180-byte entries that grew with the queue (W4, N = 10k:
// Queued, ItemStarted and ItemEnded were ~20 % of the CPU, the map's
// growth ~50 MB of allocations, its last tables most of the +16 % peak
// RSS). Here the item is hashed once per call, outside the controller's
// lock (see hash), and the entries live in pages of slots, indexed from a
// map of 64-bit hashes (~12 bytes an entry); items whose hashes collide
// are chained through next. Pages are never copied or moved: the table
// holds about one slot per item it ever held at once, not a doubled array
// of them. Freed slots are kept on a free list and reused; like a map, the
// table does not shrink.
type itemTable struct {
	seed  maphash.Seed
	index map[uint64]int32 // an item's hash → the first slot of its chain
	pages []*[pageSlots]itemSlot
	n     int32 // slots in use or free: the next new slot
	free  int32 // the first free slot, -1 when none
}

// pageSlots is the number of slots of a page (~46 KiB).
const pageSlots = 256

// itemSlot is one item's entry, or a free slot.
type itemSlot struct {
	item work.Item
	p    pending
	// next is the next slot in the chain of the same hash, or, for a free
	// slot, the next free slot; -1 when none.
	next int32
}

// slot returns slot i.
func (t *itemTable) slot(i int32) *itemSlot { return &t.pages[i/pageSlots][i%pageSlots] }

func newItemTable() *itemTable {
	return &itemTable{seed: maphash.MakeSeed(), index: map[uint64]int32{}, free: -1}
}

// hash returns item's hash. It reads only the immutable seed: call it
// before taking the lock that protects the table.
func (t *itemTable) hash(item work.Item) uint64 {
	h := maphash.String(t.seed, item.Ptr.ID())
	h = h*31 ^ maphash.String(t.seed, item.Ptr.Type())
	h = h*31 ^ maphash.String(t.seed, item.Ptr.Namespace())
	if item.Map {
		h = ^h
	}
	return h
}

// find returns item's slot (-1 when it has none) and the slot before it
// in its chain (-1 when it is the first); h is item's hash.
func (t *itemTable) find(h uint64, item work.Item) (i, prev int32) {
	i, ok := t.index[h]
	if !ok {
		return -1, -1
	}
	prev = -1
	for i >= 0 && t.slot(i).item != item {
		prev, i = i, t.slot(i).next
	}
	return i, prev
}

// add adds an entry for item, which has none, with a zero pending, and
// returns its slot.
func (t *itemTable) add(h uint64, item work.Item) int32 {
	next, ok := t.index[h]
	if !ok {
		next = -1
	}
	i := t.free
	if i >= 0 {
		t.free = t.slot(i).next
	} else {
		if t.n%pageSlots == 0 {
			t.pages = append(t.pages, new([pageSlots]itemSlot))
		}
		i = t.n
		t.n++
	}
	*t.slot(i) = itemSlot{item: item, next: next}
	t.index[h] = i
	return i
}

// get returns item's pending, adding a zero one when it has none.
func (t *itemTable) get(h uint64, item work.Item) *pending {
	i, _ := t.find(h, item)
	if i < 0 {
		i = t.add(h, item)
	}
	return &t.slot(i).p
}

// remove removes the entry in slot i (found by find with its prev) of
// hash h.
func (t *itemTable) remove(h uint64, i, prev int32) {
	next := t.slot(i).next
	switch {
	case prev >= 0:
		t.slot(prev).next = next
	case next >= 0:
		t.index[h] = next
	default:
		delete(t.index, h)
	}
	// Cleared: a free slot keeps no strings alive.
	*t.slot(i) = itemSlot{next: t.free}
	t.free = i
}

// len returns how many items have an entry.
func (t *itemTable) len() int {
	n := int(t.n)
	for i := t.free; i >= 0; i = t.slot(i).next {
		n--
	}
	return n
}
