package inmem

import (
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
)

// A write finds the entry of its ID in a kind's items once: it looks the
// ID up with the runtime's own map functions, which give the address of
// the entry (as m[k] and m[k] = v find it), reads the entry there and, the
// write accepted, stores the new entry there, where a read and an
// assignment of the map would each hash the ID and probe for it. The
// address stays the entry's while the map is not changed otherwise: the
// writer holds the kind's mu from the lookup to the store, and changes
// items through nothing else in between.
//
// mapaccess2_faststr and mapassign_faststr are the functions the compiler
// calls for v, ok := m[k] and m[k] = v on a map with string keys; the
// runtime keeps them, with these signatures, for the packages that link
// to them (go.dev/issue/67401).

//go:linkname mapaccess2_faststr runtime.mapaccess2_faststr
func mapaccess2_faststr(t, m unsafe.Pointer, key string) (unsafe.Pointer, bool)

//go:linkname mapassign_faststr runtime.mapassign_faststr
func mapassign_faststr(t, m unsafe.Pointer, key string) unsafe.Pointer

// itemMapType is the runtime's type of an itemMap, the first argument of
// the map functions.
var itemMapType = func() unsafe.Pointer {
	var m any = itemMap(nil)
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&m))[0]
}()

// mapOf returns the runtime's map that items is a reference to.
func mapOf(items itemMap) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&items))
}

// entryLocked returns the address of id's entry in the kind's items and
// the entry; nil, nil when items holds no id. The address is valid until
// items changes otherwise (see above). The caller holds mu.
func (ks *kindStore) entryLocked(id resource.ID) (at *unsafe.Pointer, e unsafe.Pointer) {
	p, ok := mapaccess2_faststr(itemMapType, mapOf(ks.items), id)
	if !ok {
		return nil, nil
	}
	at = (*unsafe.Pointer)(p)
	return at, *at
}

// addEntryLocked returns the address of id's entry in the kind's items
// and the entry, adding id with a nil entry when items holds no id (the
// caller then stores the entry there, or deletes id). The caller holds mu.
func (ks *kindStore) addEntryLocked(id resource.ID) (at *unsafe.Pointer, e unsafe.Pointer) {
	at = (*unsafe.Pointer)(mapassign_faststr(itemMapType, mapOf(ks.items), id))
	return at, *at
}
