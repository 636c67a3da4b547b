package inmem

import (
	"errors"

	"github.com/resgraph/resgraph/pkg/resource"
)

// A kind's items map an ID to its stored version, most often the version
// itself (bare): an entry is an ID and an interface value, 32 bytes, and
// a Get reads the version's interface value and the version. Two things
// a write needs to know of the version it replaces are not in it:
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

// boxed is a stored version kept in a kind's items with its size and
// whether the detector watches it (see above). A box never leaves the
// store: everything that reads items takes the version out of it (see
// bare). Its Resource methods panic, so that a box that escaped shows.
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

// bare returns the stored version that v, a value of a kind's items,
// holds: v itself, or the version its box holds (nil for nil).
func bare(v resource.Resource) resource.Resource {
	if b, ok := v.(*boxed); ok {
		return b.r
	}
	return v
}

// itemLocked returns the value of items to store for r, a version of the
// estimated size, watched or not by the detector, and copied without user
// code or not (plain: see kindStore.userCopies). The caller holds mu.
func (ks *kindStore) itemLocked(r resource.Resource, size int64, watched, plain bool) resource.Resource {
	if !plain {
		ks.userCopies = true
	}
	if size > ks.maxSize {
		ks.maxSize = size
		if !ks.tracking && int64(ks.cap)*size > ks.byteBudget {
			ks.tracking, ks.untracked = true, size
		}
	}
	if ks.tracking || watched && ks.det.samples() {
		return &boxed{r: r, size: size, watched: watched}
	}
	return r
}

// sizeLocked returns the size the history counts for v, a value of
// items: its box's size, else the kind's bound for a bare version (see
// above). The caller holds mu.
func (ks *kindStore) sizeLocked(v resource.Resource) int64 {
	if b, ok := v.(*boxed); ok {
		return b.size
	}
	if ks.tracking {
		return ks.untracked
	}
	return ks.maxSize
}

// watchedHint reports whether the detector may watch v, a value of items
// (nil: absent): false when the detector is off, or samples versions and
// did not sample v. The caller holds mu.
func (ks *kindStore) watchedHint(v resource.Resource) bool {
	if ks.det == nil {
		return false
	}
	if !ks.det.samples() {
		return v != nil
	}
	b, ok := v.(*boxed)
	return ok && b.watched
}
