package inmem

import (
	"sync/atomic"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
)

// kindTable finds the store of a kind. A kind is a namespace and a type,
// and most types are in one namespace: byType holds the store of each
// such type, found by the type alone and checked for its namespace, and
// all holds every store by its kind. A lookup by the type is cheaper than
// one by the kind: the runtime compares a small map's string keys in
// place, without hashing them, and one string is hashed otherwise where
// the kind's key hashes two.
//
// With at most smallKinds stores, small holds them all, and a lookup
// compares the kind with each entry instead of looking a map up. The
// strings of a caller's pointer are rarely the interned ones a store
// keeps (the namespace and type of constants, for example), so comparing
// them reads their bytes; an entry remembers the first strings other than
// its own that named its kind (seen), and a lookup with those very strings
// (the same memory: Go strings are immutable, so equal) compares no bytes.
type kindTable struct {
	all    map[resource.KindKey]*kindStore
	byType map[resource.Type]*kindStore
	small  []kindEntry // every store, when there are at most smallKinds
}

// kindEntry is a store of small with its kind's strings.
type kindEntry struct {
	typ  resource.Type
	ns   resource.Namespace
	ks   *kindStore
	seen atomic.Pointer[kindNames] // set once per table
}

// kindNames are a namespace and a type.
type kindNames struct {
	ns  resource.Namespace
	typ resource.Type
}

// smallKinds is how many stores a table holds in small at most.
const smallKinds = 8

// newKindTable returns the table of the stores of all.
func newKindTable(all map[resource.KindKey]*kindStore) *kindTable {
	t := &kindTable{all: all, byType: make(map[resource.Type]*kindStore, len(all))}
	if t.all == nil {
		t.all = map[resource.KindKey]*kindStore{}
	}
	if len(all) <= smallKinds {
		t.small = make([]kindEntry, 0, len(all))
		for k, ks := range all {
			t.small = t.small[:len(t.small)+1]
			e := &t.small[len(t.small)-1]
			e.typ, e.ns, e.ks = k.Type(), k.Namespace(), ks
		}
	}
	shared := map[resource.Type]bool{}
	for k, ks := range all {
		typ := k.Type()
		if _, dup := t.byType[typ]; dup || shared[typ] {
			delete(t.byType, typ)
			shared[typ] = true
			continue
		}
		t.byType[typ] = ks
	}
	return t
}

// lookup returns the store of a kind, or nil when nothing of that kind was
// ever written or watched. With at most smallKinds stores, it compares the
// kind with each of them; otherwise it is one lookup by the kind's type
// and, for a type of several namespaces (or a kind without a store), one
// by the kind, with no cache in front of them (docs/performance.md, "Finding a kind's
// store", says why).
func (c *core) lookup(k resource.KindKey) *kindStore {
	t := c.kinds.Load()
	if len(t.all) <= smallKinds {
		return t.lookupSmall(k.Type(), k.Namespace())
	}
	if ks := t.byType[k.Type()]; ks != nil && ks.ns == k.Namespace() {
		return ks
	}
	return t.all[k]
}

// lookupNames is lookup of the kind of namespace ns and type typ, when a
// KindKey is not at hand, except that it may miss a kind of several
// namespaces (lookup by the KindKey then finds it): the small table, or
// the lookup by the type.
func (c *core) lookupNames(ns resource.Namespace, typ resource.Type) *kindStore {
	t := c.kinds.Load()
	if len(t.small) > 0 {
		// The first store (the one kind of a state of one, as often as
		// not) named by its very strings, or by those it has seen, is
		// found without a call (see lookupSmall).
		e := &t.small[0]
		if sameMemory(e.typ, typ) && sameMemory(e.ns, ns) {
			return e.ks
		}
		if s := e.seen.Load(); s != nil && sameMemory(s.typ, typ) && sameMemory(s.ns, ns) {
			return e.ks
		}
	}
	if len(t.all) <= smallKinds {
		return t.lookupSmall(typ, ns)
	}
	if ks := t.byType[typ]; ks != nil && ks.ns == ns {
		return ks
	}
	return nil
}

// lookupSmall is lookup in small: the entry whose strings, or the strings
// it has seen, are the kind's very strings, else the one whose strings are
// equal to them (which then remembers them, when it has seen none yet).
func (t *kindTable) lookupSmall(typ resource.Type, ns resource.Namespace) *kindStore {
	for i := range t.small {
		e := &t.small[i]
		if sameMemory(e.typ, typ) && sameMemory(e.ns, ns) {
			return e.ks
		}
		if s := e.seen.Load(); s != nil && sameMemory(s.typ, typ) && sameMemory(s.ns, ns) {
			return e.ks
		}
	}
	for i := range t.small {
		if e := &t.small[i]; e.typ == typ && e.ns == ns {
			if e.seen.Load() == nil {
				e.seen.CompareAndSwap(nil, &kindNames{ns: ns, typ: typ})
			}
			return e.ks
		}
	}
	return nil
}

// sameMemory reports whether a and b are the same string in memory, and
// so equal (false says nothing).
func sameMemory(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// store returns the store of a kind, creating it when needed.
func (c *core) store(key resource.KindKey) *kindStore {
	if ks := c.lookup(key); ks != nil {
		return ks
	}
	c.kindsMu.Lock()
	defer c.kindsMu.Unlock()
	old := c.kinds.Load().all
	if ks := old[key]; ks != nil {
		return ks
	}
	c.nextKindID++
	ks := newKindStore(key, &c.rev, c.stateID, c.nextKindID, c.historyCap, c.historyBytes)
	ks.persistent = c.persistent
	ks.lastCreated = unixNanoOf(c.createdFloor)
	ks.statePlainOf = &c.plainOf
	ks.tracking = c.trackSizes
	if every := c.everyOf(); every > 0 {
		ks.det = newDetector(c.report, ks.cap, every)
	}
	m := make(map[resource.KindKey]*kindStore, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[key] = ks
	c.kinds.Store(newKindTable(m))
	return ks
}
