package cache

import (
	"slices"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Custom indexes (runtime.WithIndex): an index of a cached kind maps each
// key its function returns for a resource to the IDs of the resources that
// have it, so that a List by key reads only those resources.
//
// How it stays exact: the index function is user code, so it never runs
// under mu; every resource handed to the cache (a watch event's resource in
// Apply, a write in PutWritten) has its keys computed before mu is taken,
// and the keys travel with the entry (baseEntry.keys, overlayEntry.keys).
// After every change of an ID's entries, under mu, reindexLocked makes the
// index follow what a Get would return — the overlay entry first, then the
// base entry, nothing for a destruction — by diffing those keys against
// the keys the index holds for the ID (ix.cur). Every path that changes
// base or overlay must call reindexLocked for the ID it changed.

// IndexFunc returns the keys under which an index lists a resource: none,
// one or several (duplicates count once). It is handed the state's shared,
// read-only snapshot, which it must not change.
type IndexFunc func(resource.Resource) []string

// PanicFunc is told about a panic of the index function named index on the
// resource id; that resource is then listed under no key of that index.
type PanicFunc func(index string, id resource.ID, p *usercode.Panic)

// keySet is a resource's keys in each index of its kind, in the order of
// the indexes: sorted, without duplicates. It is never changed once built.
type keySet struct {
	perIndex [][]string
	// one is perIndex's storage for a kind with one index (the common
	// case): one allocation less per change.
	one [1][]string
}

// indexes are the indexes of one kind. names and fns are fixed before the
// kind is used; byKey and cur are protected by the kind's mu.
type indexes struct {
	names   []string
	fns     []IndexFunc
	onPanic PanicFunc
	// byKey[i][key] is the set of IDs index i lists under key.
	byKey []map[string]map[resource.ID]struct{}
	// cur is the keySet the index holds for each indexed ID.
	cur map[resource.ID]*keySet
}

// AddIndex adds the index name, computed by fn, to the kind; onPanic (which
// may be nil) is told about the panics of fn. It must be called before the
// kind is used (before its watch starts); a nil c does nothing.
func (c *Kind) AddIndex(name string, fn IndexFunc, onPanic PanicFunc) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ix == nil {
		c.ix = &indexes{cur: map[resource.ID]*keySet{}}
	}
	c.ix.names = append(c.ix.names, name)
	c.ix.fns = append(c.ix.fns, fn)
	c.ix.byKey = append(c.ix.byKey, map[string]map[resource.ID]struct{}{})
	if onPanic != nil {
		c.ix.onPanic = onPanic
	}
}

// HasIndex reports whether the kind has the index name; false on a nil c.
func (c *Kind) HasIndex(name string) bool {
	if c == nil || c.ix == nil {
		return false
	}
	return slices.Contains(c.ix.names, name)
}

// indexKeys computes r's keys in every index of the kind, outside mu (the
// index functions are user code); nil when the kind has no index or r is
// nil.
func (c *Kind) indexKeys(r resource.Resource) *keySet {
	if c.ix == nil || r == nil {
		return nil
	}
	ks := &keySet{}
	if len(c.ix.fns) == 1 {
		ks.perIndex = ks.one[:]
	} else {
		ks.perIndex = make([][]string, len(c.ix.fns))
	}
	for i := range c.ix.fns {
		ks.perIndex[i] = c.ix.keysOf(i, r)
	}
	return ks
}

// keysOf returns r's keys in index i, sorted and without duplicates, under
// a recovery: a panic lists r under no key and is reported.
func (ix *indexes) keysOf(i int, r resource.Resource) (keys []string) {
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			keys = nil
			if ix.onPanic != nil {
				ix.onPanic(ix.names[i], idOf(r), p)
			}
		}
	}()
	got := ix.fns[i](r)
	if len(got) == 0 {
		return nil
	}
	keys = slices.Clone(got) // the function's slice stays its own
	slices.Sort(keys)
	return slices.Compact(keys)
}

// idOf is r's ID for a report, read under a recovery (user code).
func idOf(r resource.Resource) (id resource.ID) {
	defer func() { _ = recover() }()
	return r.Metadata().ID()
}

// reindexLocked makes the indexes list id as a Get of id would return it
// now: under the keys of the overlay entry if there is one (none for a
// destruction), else of the base entry, else under none. The caller holds
// mu for writing.
func (c *Kind) reindexLocked(id resource.ID) {
	if c.ix == nil {
		return
	}
	var now *keySet
	if o, ok := c.overlay[id]; ok {
		now = o.keys
	} else if b, ok := c.base[id]; ok {
		now = b.keys
	}
	prev := c.ix.cur[id]
	if prev == now {
		return
	}
	for i, byKey := range c.ix.byKey {
		var was, is []string
		if prev != nil {
			was = prev.perIndex[i]
		}
		if now != nil {
			is = now.perIndex[i]
		}
		diffSorted(was, is, func(k string) {
			ids := byKey[k]
			delete(ids, id)
			if len(ids) == 0 {
				delete(byKey, k)
			}
		}, func(k string) {
			ids := byKey[k]
			if ids == nil {
				ids = map[resource.ID]struct{}{}
				byKey[k] = ids
			}
			ids[id] = struct{}{}
		})
	}
	if now == nil {
		delete(c.ix.cur, id)
	} else {
		c.ix.cur[id] = now
	}
}

// diffSorted calls gone for every key of was not in is and added for every
// key of is not in was; both are sorted without duplicates.
func diffSorted(was, is []string, gone, added func(string)) {
	i, j := 0, 0
	for i < len(was) || j < len(is) {
		switch {
		case j == len(is) || (i < len(was) && was[i] < is[j]):
			gone(was[i])
			i++
		case i == len(was) || is[j] < was[i]:
			added(is[j])
			j++
		default:
			i++
			j++
		}
	}
}

// ListByIndex returns the resources the index name lists under key that
// match the options, sorted by ID: copies, or the shared snapshots when the
// options ask for a read-only List. An unknown index is an invalid-class
// error.
func (c *Kind) ListByIndex(name, key string, opts ...state.ListOption) (resource.List, error) {
	l, _, err := c.ListByIndexAt(name, key, opts, 0)
	return l, err
}

// ListByIndexAt is ListByIndex when the cache is at revision need or
// later: served is false otherwise, and the read goes to the state. The
// revision the read reflects is stored as [state.WithListRevision] asks.
func (c *Kind) ListByIndexAt(name, key string, opts []state.ListOption, need uint64) (l resource.List, served bool, err error) {
	i := c.indexOf(name)
	if i < 0 {
		return resource.List{}, true, state.NewInvalidError(nil, "no index %q on this kind", name)
	}
	o, ok := c.rlockServing(opts, need)
	if !ok {
		return resource.List{}, false, nil
	}
	bucket := c.ix.byKey[i][key]
	ids := make([]resource.ID, 0, len(bucket))
	for id := range bucket {
		if o.IDQuery.Matches(id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	found := make([]resource.Resource, 0, len(ids))
	for _, id := range ids {
		if r := c.lookupLocked(id); r != nil {
			found = append(found, r)
		}
	}
	c.mu.RUnlock()
	l, err = finishList(found, &o)
	return l, true, err
}

// indexOf returns the position of the index name, or -1.
func (c *Kind) indexOf(name string) int {
	if c == nil || c.ix == nil {
		return -1
	}
	return slices.Index(c.ix.names, name)
}

// FilterByIndex keeps the resources of l that the index name lists under
// key, computing their keys with the index function: what ListByIndex
// returns, for a List made by the state before the cache is ready. An
// unknown index is an invalid-class error.
func (c *Kind) FilterByIndex(l resource.List, name, key string) (resource.List, error) {
	i := c.indexOf(name)
	if i < 0 {
		return resource.List{}, state.NewInvalidError(nil, "no index %q on this kind", name)
	}
	items := l.Items[:0]
	for _, r := range l.Items {
		if _, ok := slices.BinarySearch(c.ix.keysOf(i, r), key); ok {
			items = append(items, r)
		}
	}
	clear(l.Items[len(items):])
	return resource.List{Items: items}, nil
}
