package qrunner

import (
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
)

// boxes makes the resource.Pointer that an item's Reconcile or MapInput
// receives without an allocation per item: a PointerKey does not fit in
// an interface value's word, so converting one allocates a copy (a box)
// for the interface to point at. boxes writes the keys into chunks of
// boxChunk instead, each key into a slot of its own that is never written
// again, and makes interface values that point at those slots, as the
// compiler's would point at their copies: they hold a PointerKey
// (a type assertion, == and map keys see the key itself), and a
// controller may keep one as long as it likes. A chunk stays allocated
// while any of its pointers is reachable. A boxes belongs to one worker:
// it is not safe for concurrent use.
type boxes struct {
	chunk []resource.PointerKey // the slots written so far; capacity boxChunk
}

// boxChunk is the number of keys a chunk holds: one allocation per
// boxChunk items.
const boxChunk = 64

// iface is the layout of a non-empty interface value: its type word (the
// itab of the dynamic type for the interface) and its data word.
type iface struct {
	tab  unsafe.Pointer
	data unsafe.Pointer
}

// keyTab is the type word of a resource.Pointer holding a
// resource.PointerKey.
var keyTab = func() unsafe.Pointer {
	var p resource.Pointer = resource.PointerKey{}
	return (*iface)(unsafe.Pointer(&p)).tab
}()

// box returns k as a resource.Pointer, equal to resource.Pointer(k).
func (b *boxes) box(k resource.PointerKey) resource.Pointer {
	if len(b.chunk) == cap(b.chunk) {
		b.chunk = make([]resource.PointerKey, 0, boxChunk)
	}
	b.chunk = append(b.chunk, k)
	var p resource.Pointer
	w := (*iface)(unsafe.Pointer(&p))
	w.tab, w.data = keyTab, unsafe.Pointer(&b.chunk[len(b.chunk)-1])
	return p
}
