package resource

import (
	"sync"
	"sync/atomic"
	"unique"
)

// kindName is a namespace and a type, as [Metadata] keeps them: interned,
// so that every metadata of one kind refers to one kindName (a pointer of
// 8 bytes in each metadata instead of two strings' 32).
//
// Measured on the harness's runner (callgrind with its cache simulation,
// whole process, estimated cycles = instructions + 10 × L1 misses + 100 ×
// last-level misses): W5 (100k creates, Lists, Gets) 3.43G with compact
// timestamps alone → 3.05G with the interned kind as well (3.63G
// before both); W1 without watchers 301 bytes per write instead of 333.
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

// internKind returns the interned (ns, typ).
//
// Instructions per NewMetadata under callgrind (BenchmarkNewMetadata,
// cycling over 1 and over 8 kinds): unique.Make alone 651 and 670; with
// the map of the kinds interned so far 451 and 446, whatever the kinds'
// names. A cache of 64 slots indexed by a hash of a few bytes of the name,
// used before, cost 327 when the kinds fell into distinct slots, but 1,092
// and an allocation per call when they did not, as the 8 kinds
// LinkStatuses0…7 all did.
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
