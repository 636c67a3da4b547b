package recording

import "github.com/resgraph/resgraph/pkg/resource"

// slotTable numbers the resources a window holds (its slots): per kind, a
// map of IDs, so that finding a change's slot hashes its ID only, and
// the kind of the previous lookup is kept (a batch of changes is of one
// kind). It is used under the recorder's lock.
type slotTable struct {
	keys  []resource.PointerKey
	kinds map[resource.KindKey]map[resource.ID]uint32
	// lastKind's IDs are last (nil before the first lookup).
	lastKind resource.KindKey
	last     map[resource.ID]uint32
}

// len returns the number of slots.
func (t *slotTable) len() int { return len(t.keys) }

// key returns the pointer of slot s.
func (t *slotTable) key(s uint32) resource.PointerKey { return t.keys[s] }

// lookup returns the slot of the resource md names, adding it (added).
func (t *slotTable) lookup(md *resource.Metadata) (s uint32, added bool) {
	k := resource.KindOf(md)
	if t.last == nil || k != t.lastKind {
		t.lastKind, t.last = k, t.ids(k)
	}
	id := md.ID()
	if s, ok := t.last[id]; ok {
		return s, false
	}
	s = uint32(len(t.keys))
	t.keys = append(t.keys, resource.PointerOf(md))
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
	t.keys = t.keys[:0]
	clear(t.kinds)
	t.last = nil
}

// keep keeps the slots used says are used, renumbered in order, and
// returns each old slot's new number.
func (t *slotTable) keep(used []bool, live int) []uint32 {
	remap := make([]uint32, len(t.keys))
	keys := make([]resource.PointerKey, 0, live)
	clear(t.kinds)
	t.last = nil
	for s, u := range used {
		if u {
			remap[s] = uint32(len(keys))
			t.ids(t.keys[s].Kind())[t.keys[s].ID()] = uint32(len(keys))
			keys = append(keys, t.keys[s])
		}
	}
	t.keys = keys
	return remap
}
