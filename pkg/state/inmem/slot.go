package inmem

import (
	"errors"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
)

// A kind's items map an ID to an entry: a pointer to its stored version,
// most often the version's own data word (bare). An entry of the map is an
// ID and a pointer, 24 bytes as a map of pointers to structs, and a Get
// reads the entry and the version it points to. A resource.Resource is an
// interface value, a type word and a data word; the kind keeps the type
// word of its bare versions once (kindStore.tab), and a bare entry is the
// data word alone, read back as the interface value of those two words
// (see kindStore.bare).
//
// An entry is boxed instead (a pointer to a [boxed] holding the version's
// interface value, tagged with boxTag) when the version is not of the
// kind's type word, when its data word could not be told from a tagged
// one (nil, or odd: a pointer-shaped value pointing into bytes), or when a
// write needs to know of the version something that is not in it:
//
//   - its estimated size (see sizeOf), which the history counts against
//     its byte bound (see [WithHistoryBytes]) once the version is
//     replaced. Until cap versions of the largest size the kind has
//     stored would exceed the bound, the bound cannot be reached, and a
//     bare version counts as that largest size (an upper bound of its
//     own). From the first write that makes it reachable on, the kind
//     tracks sizes: every version is stored in a box with its size, and a
//     version still bare counts as the largest size of the kind at that
//     write (an upper bound again).
//   - whether the mutation detector watches it (it kept a reference copy
//     of it), when the detector samples versions (the guard): a sampled
//     version is stored in a box that says so, so that a write of a
//     version the guard does not watch skips its bookkeeping without a
//     lookup. When the detector watches every write (every is 1), every
//     write looks its versions up.

// itemMap is the type of a kind's items: ID → entry (see above).
type itemMap = map[resource.ID]unsafe.Pointer

// boxTag is the bit of an entry that tells a box: a box is allocated
// (aligned to 8 bytes), so a tagged entry points inside it, which keeps
// it alive as well as its first byte would.
const boxTag = 1

// ifaceWords is the layout of a non-empty interface value: its type word
// (the itab of its dynamic type for the interface) and its data word.
type ifaceWords struct {
	tab  unsafe.Pointer
	data unsafe.Pointer
}

// wordsOf returns the two words of r.
func wordsOf(r resource.Resource) ifaceWords {
	return *(*ifaceWords)(unsafe.Pointer(&r))
}

// boxed is a stored version kept in a kind's items with its size and
// whether the detector watches it (see above). A box never leaves the
// store: everything that reads items takes the version out of its entry
// (see kindStore.bare). Its Resource methods panic, so that a box that
// escaped shows.
type boxed struct {
	r       resource.Resource
	size    int64
	watched bool
}

// Metadata implements resource.Resource; it panics (see boxed).
func (b *boxed) Metadata() *resource.Metadata { panic(errBoxEscaped) }

// Spec implements resource.Resource; it panics (see boxed).
func (b *boxed) Spec() any { panic(errBoxEscaped) }

// DeepCopy implements resource.Resource; it panics (see boxed).
func (b *boxed) DeepCopy() resource.Resource { panic(errBoxEscaped) }

// errBoxEscaped is the panic of a box's Resource methods.
var errBoxEscaped = errors.New("inmem: internal error: a boxed item escaped its kind's store")

// boxOf returns the box of e, an entry, or nil when e is bare (or nil).
func boxOf(e unsafe.Pointer) *boxed {
	if uintptr(e)&boxTag == 0 {
		return nil
	}
	return (*boxed)(unsafe.Add(e, -boxTag))
}

// bare returns the stored version that e, an entry of the kind's items,
// points to (nil for nil). The caller holds mu.
func (ks *kindStore) bare(e unsafe.Pointer) resource.Resource {
	if uintptr(e)&boxTag != 0 {
		return (*boxed)(unsafe.Add(e, -boxTag)).r
	}
	if e == nil {
		return nil
	}
	var r resource.Resource
	*(*ifaceWords)(unsafe.Pointer(&r)) = ifaceWords{tab: ks.tab, data: e}
	return r
}

// bareLocked returns the entry of items to store for r, as itemLocked
// would, when r can be stored bare without more ado: a version of the
// kind's type word, plain, unwatched and of a size up to bareUpTo; nil
// otherwise (store itemLocked's entry then). Inlined in the write paths.
// The caller holds mu.
func (ks *kindStore) bareLocked(r resource.Resource, size int64, watched, plain bool) unsafe.Pointer {
	w := wordsOf(r)
	if w.tab == ks.tab && plain && !watched && size <= ks.bareUpTo && uintptr(w.data)&boxTag == 0 {
		return w.data // nil for a nil data word
	}
	return nil
}

// itemLocked returns the entry of items to store for r, a version of the
// estimated size, watched or not by the detector, and copied without user
// code or not (plain: see kindStore.userCopies): it notes what the kind
// learns of r (a user-code copy, a larger size), makes r's type word the
// kind's while the kind stores no entry, and boxes r unless it can be
// stored bare (see above). The caller holds mu.
func (ks *kindStore) itemLocked(r resource.Resource, size int64, watched, plain bool) unsafe.Pointer {
	if !plain {
		ks.userCopies = true
	}
	if size > ks.maxSize {
		ks.maxSize = size
		if !ks.tracking && int64(ks.cap)*size > ks.byteBudget {
			ks.tracking, ks.untracked = true, size
		}
	}
	ks.bareUpTo = ks.maxSize
	if ks.tracking {
		ks.bareUpTo = -1
	}
	w := wordsOf(r)
	if len(ks.items) == 0 {
		ks.tab = w.tab // no bare entry reads the old one
	}
	if ks.tracking || watched && ks.det.samples() || w.tab != ks.tab || uintptr(w.data)&boxTag != 0 || w.data == nil {
		return unsafe.Add(unsafe.Pointer(&boxed{r: r, size: size, watched: watched}), boxTag)
	}
	return w.data
}

// sizeLocked returns the size the history counts for e, an entry of
// items: its box's size, else the kind's bound for a bare version (see
// above). The caller holds mu.
func (ks *kindStore) sizeLocked(e unsafe.Pointer) int64 {
	if b := boxOf(e); b != nil {
		return b.size
	}
	if ks.tracking {
		return ks.untracked
	}
	return ks.maxSize
}

// watchedHint reports whether the detector may watch e, an entry of items
// (nil: absent): false when the detector is off, or samples versions and
// did not sample e. The caller holds mu.
func (ks *kindStore) watchedHint(e unsafe.Pointer) bool {
	if ks.det == nil {
		return false
	}
	if !ks.det.samples() {
		return e != nil
	}
	b := boxOf(e)
	return b != nil && b.watched
}
