package inmem

import (
	"github.com/resgraph/resgraph/pkg/resource"
)

// kindTable finds the store of a kind. A kind is a namespace and a type,
// and most types are in one namespace: byType holds the store of each
// such type, found by the type alone and checked for its namespace, and
// all holds every store by its kind. A lookup by the type is cheaper than
// one by the kind: the runtime compares a small map's string keys in
// place, without hashing them, and one string is hashed otherwise where
// the kind's key hashes two.
type kindTable struct {
	all    map[resource.KindKey]*kindStore
	byType map[resource.Type]*kindStore
}

// newKindTable returns the table of the stores of all.
func newKindTable(all map[resource.KindKey]*kindStore) *kindTable {
	t := &kindTable{all: all, byType: make(map[resource.Type]*kindStore, len(all))}
	if t.all == nil {
		t.all = map[resource.KindKey]*kindStore{}
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
// ever written or watched. It is one lookup by the kind's type and, for a
// type of several namespaces (or a kind without a store), one by the kind,
// with no cache in front of them (docs/performance.md, "Finding a kind's
// store", says why).
func (c *core) lookup(k resource.KindKey) *kindStore {
	t := c.kinds.Load()
	if ks := t.byType[k.Type()]; ks != nil && ks.ns == k.Namespace() {
		return ks
	}
	return t.all[k]
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
	ks.lastCreated = c.createdFloor
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
