package resource

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// metaExt is the part of a [Metadata] that most resources have little of
// and that changes rarely: the owner, finalizers, labels and annotations,
// and a phase without a code of its own (see phaseCode). A metadata
// refers to it by one pointer (nil when all are empty), which copies
// share while it is shared (see Metadata.Copy).
//
// An ext is written only while one metadata that is not frozen refers to
// it (shared is false). Once shared — its metadata was frozen, or it is an
// interned owner (see ownerExt) — it never changes again: a metadata that
// is not frozen copies it before a change (Metadata.edit), and a frozen
// one is a snapshot that nobody changes (rule S7).
type metaExt struct {
	owner       Owner
	finalizers  Finalizers
	labels      Labels
	annotations Annotations
	// phase is the metadata's phase when its code is phaseInExt (a phase
	// no state accepts); read only then, so a stale one is no part of
	// the metadata (equal ignores it).
	phase int32
	// shared: the ext may be referred to by several metadata, and never
	// changes again.
	shared bool
	// interned: the ext is an owner's (see ownerExt), shared by the
	// metadata of many resources; a frozen metadata never hands out its
	// parts (empty), so that a change made through a snapshot (a breach
	// of rule S7) cannot reach another resource.
	interned bool
}

// readable reports whether a frozen metadata hands out e's parts: not
// when it has none (nil) nor when e is an interned owner's, shared by many
// resources, whose parts are empty.
func (e *metaExt) readable() bool { return e != nil && !e.interned }

// ownerOf returns the owner ("" for a nil ext).
func (e *metaExt) ownerOf() Owner {
	if e == nil {
		return ""
	}
	return e.owner
}

// finalizersOf returns the finalizers (nil for a nil ext), for reading.
func (e *metaExt) finalizersOf() Finalizers {
	if e == nil {
		return nil
	}
	return e.finalizers
}

// ownerOnly reports whether the ext holds an owner and nothing else.
func (e *metaExt) ownerOnly() bool {
	return len(e.finalizers) == 0 && e.labels.m == nil && e.annotations.m == nil
}

// clone returns a copy of e that shares no memory with it and is not
// shared.
func (e *metaExt) clone() *metaExt {
	c := &metaExt{owner: e.owner, phase: e.phase}
	if e.finalizers != nil {
		c.finalizers = slices.Clone(e.finalizers)
	}
	if e.labels.m != nil {
		c.labels = Labels{e.labels.clone()}
	}
	if e.annotations.m != nil {
		c.annotations = Annotations{e.annotations.clone()}
	}
	return c
}

// equal reports whether e and o hold the same owner, finalizers (in
// order), labels and annotations; a nil ext holds none. The phase is
// compared by the metadata (see Metadata.Equal).
func (e *metaExt) equal(o *metaExt) bool {
	if e == o {
		return true
	}
	if e == nil {
		e, o = o, e
	}
	if o == nil {
		return e.owner == "" && len(e.finalizers) == 0 && e.labels.Len() == 0 && e.annotations.Len() == 0
	}
	return e.owner == o.owner && slices.Equal(e.finalizers, o.finalizers) &&
		e.labels.Equal(o.labels) && e.annotations.Equal(o.annotations)
}

// approxSize estimates the bytes e holds.
func (e *metaExt) approxSize() int {
	n := int(unsafe.Sizeof(*e)) + len(e.owner)
	n += kvApproxSize(e.labels.Len()) + kvApproxSize(e.annotations.Len())
	return n + len(e.finalizers)*int(unsafe.Sizeof(""))
}

// kvApproxSize estimates the bytes of a string map of n entries.
func kvApproxSize(n int) int {
	if n == 0 {
		return 0
	}
	return 48 + n*64
}

// maxInternedOwners bounds how many owners [ownerExt] interns (and keeps
// alive); other owners get an ext of their own.
const maxInternedOwners = 1024

var (
	// internedOwners maps the owners interned so far to their shared
	// ext. The map is never modified once published: a new owner
	// publishes a copy (under ownersMu), so that the ext of an owner in
	// steady use is one map lookup after one atomic load.
	internedOwners atomic.Pointer[map[Owner]*metaExt]
	ownersMu       sync.Mutex
)

// ownerExt returns the ext of a metadata whose owner is owner and that has
// nothing else (nil for no owner): the interned, shared ext of the owner,
// so that the resources a controller owns carry one pointer to one ext
// between them.
func ownerExt(owner Owner) *metaExt {
	if owner == "" {
		return nil
	}
	if m := internedOwners.Load(); m != nil {
		if e, ok := (*m)[owner]; ok {
			return e
		}
	}
	return internOwner(owner)
}

// internOwner adds owner to internedOwners, unless it holds
// maxInternedOwners owners already (the owner then gets an ext of its
// own), and returns its ext.
func internOwner(owner Owner) *metaExt {
	ownersMu.Lock()
	defer ownersMu.Unlock()
	var old map[Owner]*metaExt
	if m := internedOwners.Load(); m != nil {
		old = *m
	}
	if e, ok := old[owner]; ok {
		return e
	}
	if len(old) >= maxInternedOwners {
		return &metaExt{owner: owner}
	}
	// The key and the ext hold a copy of the string: an interned owner
	// keeps no caller's memory alive.
	owner = string([]byte(owner))
	e := &metaExt{owner: owner, shared: true, interned: true}
	m := make(map[Owner]*metaExt, len(old)+1)
	maps.Copy(m, old)
	m[owner] = e
	internedOwners.Store(&m)
	return e
}
