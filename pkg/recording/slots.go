package recording

import (
	"hash/maphash"

	"github.com/resgraph/resgraph/pkg/resource"
)

// slotTable numbers the resources a window holds (its slots). Each slot's
// kind (an index into kinds) and ID are kept by slot; the index from a
// resource to its slot is an open-addressing hash table of pointer-free
// cells (the collector does not scan it, growing it moves no pointer),
// a hit confirmed by comparing the kind and ID (usually the very strings
// of the snapshot the slot was made from). Finding a change's slot hashes
// its ID once; the kind of the previous lookup is kept (a batch of changes
// is of one kind). It is used under the recorder's lock.
type slotTable struct {
	seed maphash.Seed
	// kinds are the kinds of the slots, kindHash each one's hash, and
	// last the index of the kind of the previous lookup (-1: none).
	kinds    []resource.KindKey
	kindHash []uint64
	last     int
	// ids, kindOf and hashes are each slot's ID, kind and hash.
	ids    chunked[resource.ID]
	kindOf chunked[uint16]
	hashes chunked[uint64]
	// cells is the index (a power of two long, at most 3/4 full).
	cells []slotCell
}

// slotCell is a cell of the index: the upper half of a slot's hash and
// the slot plus one (0: an empty cell).
type slotCell struct {
	tag  uint32
	slot uint32
}

func newSlotTable() slotTable { return slotTable{seed: maphash.MakeSeed(), last: -1} }

// len returns the number of slots.
func (t *slotTable) len() int { return t.ids.len() }

// keys returns each slot's pointer.
func (t *slotTable) keys() []resource.PointerKey {
	out := make([]resource.PointerKey, t.len())
	for s := range out {
		k := t.kinds[*t.kindOf.at(s)]
		out[s] = resource.PointerOf(resource.NewPointer(k.Namespace(), k.Type(), *t.ids.at(s)))
	}
	return out
}

// lookup returns the slot of the resource md names, adding it (added).
func (t *slotTable) lookup(md *resource.Metadata) (s uint32, added bool) {
	ns, typ, id := md.Identity()
	k := t.kindIndex(ns, typ)
	h := maphash.String(t.seed, id) ^ t.kindHash[k]
	if 4*(t.len()+1) > 3*len(t.cells) {
		t.grow()
	}
	mask := uint64(len(t.cells) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		c := &t.cells[i]
		if c.slot == 0 {
			s = uint32(t.ids.append(id))
			t.kindOf.append(uint16(k))
			t.hashes.append(h)
			*c = slotCell{tag: uint32(h >> 32), slot: s + 1}
			return s, true
		}
		if c.tag == uint32(h>>32) && *t.kindOf.at(int(c.slot - 1)) == uint16(k) && *t.ids.at(int(c.slot - 1)) == id {
			return c.slot - 1, false
		}
	}
}

// kindIndex returns the index of the kind ns/typ in kinds, adding it.
func (t *slotTable) kindIndex(ns resource.Namespace, typ resource.Type) int {
	if t.last >= 0 && t.kinds[t.last].Type() == typ && t.kinds[t.last].Namespace() == ns {
		return t.last
	}
	for i, k := range t.kinds {
		if k.Type() == typ && k.Namespace() == ns {
			t.last = i
			return i
		}
	}
	const m = 0x9e3779b97f4a7c15
	t.kinds = append(t.kinds, resource.KindOf(resource.NewKind(ns, typ)))
	t.kindHash = append(t.kindHash, maphash.String(t.seed, ns)^maphash.String(t.seed, typ)*m)
	t.last = len(t.kinds) - 1
	return t.last
}

// grow doubles the index (or makes its first one) and puts every slot in.
func (t *slotTable) grow() {
	t.index(max(2*len(t.cells), 64))
}

// index makes an index of n cells (a power of two) of every slot.
func (t *slotTable) index(n int) {
	t.cells = make([]slotCell, n)
	mask := uint64(n - 1)
	for s := range t.len() {
		h := *t.hashes.at(s)
		i := h & mask
		for t.cells[i].slot != 0 {
			i = (i + 1) & mask
		}
		t.cells[i] = slotCell{tag: uint32(h >> 32), slot: uint32(s) + 1}
	}
}

// reset drops every slot.
func (t *slotTable) reset() {
	t.ids.reset()
	t.kindOf.reset()
	t.hashes.reset()
	clear(t.cells)
	t.kinds, t.kindHash, t.last = t.kinds[:0], t.kindHash[:0], -1
}

// keep keeps the slots used says are used, renumbered in their order, and
// returns each old slot's new number.
func (t *slotTable) keep(used []bool) []uint32 {
	remap := make([]uint32, t.len())
	var n int
	for s := range t.len() {
		if !used[s] {
			continue
		}
		remap[s] = uint32(n)
		*t.ids.at(n), *t.kindOf.at(n), *t.hashes.at(n) = *t.ids.at(s), *t.kindOf.at(s), *t.hashes.at(s)
		n++
	}
	t.ids.truncate(n)
	t.kindOf.truncate(n)
	t.hashes.truncate(n)
	size := 64
	for 4*(n+1) > 3*size {
		size *= 2
	}
	t.index(size)
	return remap
}
