package resource

import (
	"sync"
	"sync/atomic"
	"unique"
)

// kindName is a namespace and a type, as [Metadata] keeps them: interned,
// so that every metadata of one kind refers to one kindName (a pointer of
// 8 bytes in each metadata instead of two strings' 32; docs/performance.md,
// "Metadata layout", has the measurements).
type kindName struct {
	ns  Namespace
	typ Type
}

// kindHandle is an interned kindName; the zero handle is the empty
// namespace and type.
type kindHandle struct{ h unique.Handle[kindName] }

// name returns the namespace and type.
func (k kindHandle) name() kindName {
	if k == (kindHandle{}) {
		return kindName{}
	}
	return k.h.Value()
}

// maxInternedKinds bounds how many kinds [internKind] remembers (and keeps
// alive); kinds past it are interned by unique.Make every time.
const maxInternedKinds = 1024

var (
	// internedKinds maps the kinds interned so far to their handles. The
	// map is never modified once published: a new kind publishes a copy
	// (under internMu), so that interning a kind in steady use is one map
	// lookup after one atomic load.
	internedKinds atomic.Pointer[map[kindName]kindHandle]
	internMu      sync.Mutex
)

// internKind returns the interned (ns, typ). A kind in steady use is found
// in the map of the kinds interned so far, which costs the same whatever
// the kinds' names, and less than unique.Make (docs/performance.md, "Kind
// interning").
func internKind(ns Namespace, typ Type) kindHandle {
	if ns == "" && typ == "" {
		return kindHandle{}
	}
	name := kindName{ns: ns, typ: typ}
	if m := internedKinds.Load(); m != nil {
		if h, ok := (*m)[name]; ok {
			return h
		}
	}
	h := kindHandle{unique.Make(name)}
	rememberKind(h)
	return h
}

// rememberKind adds h to internedKinds, unless it holds maxInternedKinds
// kinds already. The key is the interned name, which shares no memory with
// the caller's strings.
func rememberKind(h kindHandle) {
	internMu.Lock()
	defer internMu.Unlock()
	var old map[kindName]kindHandle
	if m := internedKinds.Load(); m != nil {
		old = *m
	}
	name := h.h.Value()
	if _, ok := old[name]; ok || len(old) >= maxInternedKinds {
		return
	}
	m := make(map[kindName]kindHandle, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[name] = h
	internedKinds.Store(&m)
}
