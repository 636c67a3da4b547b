package recording

import "github.com/resgraph/resgraph/pkg/resource"

// slotTable numbers the resources a window holds (its slots): per kind, a
// map of IDs, so that finding a change's slot hashes its ID only, and
// the kind of the previous lookup is kept (a batch of changes is of one
// kind). A slot's pointer is found from the maps when a recording is
// taken (keys). It is used under the recorder's lock.
type slotTable struct {
	n     uint32
	kinds map[resource.KindKey]map[resource.ID]uint32
	// lastKind's IDs are last (nil before the first lookup).
	lastKind resource.KindKey
	last     map[resource.ID]uint32
}

// len returns the number of slots.
func (t *slotTable) len() int { return int(t.n) }

// keys returns each slot's pointer.
func (t *slotTable) keys() []resource.PointerKey {
	out := make([]resource.PointerKey, t.n)
	for k, ids := range t.kinds {
		for id, s := range ids {
			out[s] = resource.PointerOf(resource.NewPointer(k.Namespace(), k.Type(), id))
		}
	}
	return out
}

// lookup returns the slot of the resource md names, adding it (added).
func (t *slotTable) lookup(md *resource.Metadata) (s uint32, added bool) {
	if t.last == nil || md.Type() != t.lastKind.Type() || md.Namespace() != t.lastKind.Namespace() {
		k := resource.KindOf(md)
		t.lastKind, t.last = k, t.ids(k)
	}
	id := md.ID()
	if s, ok := t.last[id]; ok {
		return s, false
	}
	s = t.n
	t.n++
	t.last[id] = s
	return s, true
}

func (t *slotTable) ids(k resource.KindKey) map[resource.ID]uint32 {
	if t.kinds == nil {
		t.kinds = map[resource.KindKey]map[resource.ID]uint32{}
	}
	m := t.kinds[k]
	if m == nil {
		m = map[resource.ID]uint32{}
		t.kinds[k] = m
	}
	return m
}

// reset drops every slot.
func (t *slotTable) reset() {
	t.n = 0
	clear(t.kinds)
	t.last = nil
}

// keep keeps the slots used says are used, renumbered, and returns each
// old slot's new number.
func (t *slotTable) keep(used []bool) []uint32 {
	remap := make([]uint32, t.n)
	var n uint32
	for k, ids := range t.kinds {
		for id, s := range ids {
			if !used[s] {
				delete(ids, id)
				continue
			}
			remap[s] = n
			ids[id] = n
			n++
		}
		if len(ids) == 0 {
			delete(t.kinds, k)
		}
	}
	t.n, t.last = n, nil
	return remap
}
