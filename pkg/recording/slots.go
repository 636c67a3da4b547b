package recording

import (
	"hash/maphash"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
)

// slotTable numbers the resources a window holds (its slots). It holds no
// pointer per slot (the garbage collector does not scan it, growing it
// moves no pointer): each slot's ID is a run of one byte arena, its kind
// an index into kinds; the index from a resource to its slot is an
// open-addressing hash table of cells, a hit confirmed by comparing the
// kind and the ID. Finding a change's slot hashes its ID once; the kind of
// the previous lookup is kept (a batch of changes is of one kind), and
// kinds are compared by their interned strings first. It is used under
// the recorder's lock.
type slotTable struct {
	seed maphash.Seed
	// kinds are the kinds of the slots, kindHash each one's hash, and
	// last the index of the kind of the previous lookup (-1: none).
	kinds    []resource.KindKey
	kindHash []uint64
	last     int
	// slots are each slot's ID (in arena) and kind.
	slots chunked[slotInfo]
	arena []byte
	// cells is the index (a power of two long, at most 3/4 full).
	cells []slotCell
}

// slotInfo is a slot: its ID, arena[off:off+n], its kind's index, and
// its hash (kept: growing the index hashes no ID again).
type slotInfo struct {
	hash   uint64
	off, n uint32
	kind   uint16
}

// slotCell is a cell of the index: the upper half of a slot's hash and
// the slot plus one (0: an empty cell).
type slotCell struct {
	tag  uint32
	slot uint32
}

func newSlotTable() slotTable { return slotTable{seed: maphash.MakeSeed(), last: -1} }

// len returns the number of slots.
func (t *slotTable) len() int { return t.slots.len() }

// id returns the ID of slot info i, without a copy (for a comparison).
func (t *slotTable) id(i *slotInfo) []byte { return t.arena[i.off : i.off+i.n] }

// keys returns each slot's pointer.
func (t *slotTable) keys() []resource.PointerKey {
	out := make([]resource.PointerKey, t.len())
	for s := range out {
		i := t.slots.at(s)
		k := t.kinds[i.kind]
		out[s] = resource.PointerOf(resource.NewPointer(k.Namespace(), k.Type(), string(t.id(i))))
	}
	return out
}

// lookup returns the slot of the resource md names, adding it (added).
func (t *slotTable) lookup(md *resource.Metadata) (s uint32, added bool) {
	ns, typ, id := md.Identity()
	k := t.kindIndex(ns, typ)
	h := t.hash(k, id)
	if 4*(t.len()+1) > 3*len(t.cells) {
		t.grow()
	}
	mask := uint64(len(t.cells) - 1)
	for c := h & mask; ; c = (c + 1) & mask {
		cell := &t.cells[c]
		if cell.slot == 0 {
			s = uint32(t.slots.append(slotInfo{hash: h, off: uint32(len(t.arena)), n: uint32(len(id)), kind: uint16(k)}))
			t.arena = append(t.arena, id...)
			*cell = slotCell{tag: uint32(h >> 32), slot: s + 1}
			return s, true
		}
		if cell.tag == uint32(h>>32) {
			if i := t.slots.at(int(cell.slot - 1)); i.kind == uint16(k) && string(t.id(i)) == id {
				return cell.slot - 1, false
			}
		}
	}
}

func (t *slotTable) hash(kind int, id resource.ID) uint64 {
	return maphash.String(t.seed, id) ^ t.kindHash[kind]
}

// kindIndex returns the index of the kind ns/typ in kinds, adding it.
func (t *slotTable) kindIndex(ns resource.Namespace, typ resource.Type) int {
	if t.last >= 0 && sameString(t.kinds[t.last].Type(), typ) && sameString(t.kinds[t.last].Namespace(), ns) {
		return t.last
	}
	for i, k := range t.kinds { // the same interned strings first
		if sameData(k.Type(), typ) && sameData(k.Namespace(), ns) {
			t.last = i
			return i
		}
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

// sameData reports whether a and b are the very same string (one kind's
// interned strings).
func sameData(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// sameString reports whether a and b are the same string, comparing their
// bytes only when they are not the very same (a kind's strings are
// interned: the same kind's are).
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
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
		h := t.slots.at(s).hash
		c := h & mask
		for t.cells[c].slot != 0 {
			c = (c + 1) & mask
		}
		t.cells[c] = slotCell{tag: uint32(h >> 32), slot: uint32(s) + 1}
	}
}

// reset drops every slot.
func (t *slotTable) reset() {
	t.slots.reset()
	t.arena = t.arena[:0]
	clear(t.cells)
	t.kinds, t.kindHash, t.last = t.kinds[:0], t.kindHash[:0], -1
}

// keep keeps the slots used says are used, renumbered in their order, and
// returns each old slot's new number.
func (t *slotTable) keep(used []bool) []uint32 {
	remap := make([]uint32, t.len())
	arena := make([]byte, 0, len(t.arena)/2)
	var n int
	for s := range t.len() {
		if !used[s] {
			continue
		}
		remap[s] = uint32(n)
		i := *t.slots.at(s)
		*t.slots.at(n) = slotInfo{hash: i.hash, off: uint32(len(arena)), n: i.n, kind: i.kind}
		arena = append(arena, t.id(&i)...)
		n++
	}
	t.slots.truncate(n)
	t.arena = arena
	size := 64
	for 4*(n+1) > 3*size {
		size *= 2
	}
	t.index(size)
	return remap
}
