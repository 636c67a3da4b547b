// Package floor is the reference floor of the comparison: the least a store
// can do for W1, W5 and W6 — a mutex-guarded map per kind, copying on every
// write and every read, with optimistic versions, and List in ID order.
//
// It has no watches, owners, phases, labels or history. Every library figure
// can be read as a ratio to it.
package floor

import (
	"errors"
	"slices"
	"sync"

	"github.com/resgraph/resgraph/bench/common/params"
)

// Object is a stored resource: identity, version, spec.
type Object struct {
	Namespace string
	Type      string
	ID        string
	Version   uint64
	Spec      params.Spec
}

// Errors.
var (
	ErrExists   = errors.New("already exists")
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("version conflict")
)

type kindKey struct{ ns, typ string }

type kind struct {
	byID map[string]*Object
	ids  []string // sorted
}

// Store is the floor store. The zero value is not usable: use New.
type Store struct {
	mu    sync.RWMutex // guards kinds and everything in them
	kinds map[kindKey]*kind
}

// New returns an empty store.
func New() *Store { return &Store{kinds: map[kindKey]*kind{}} }

func (s *Store) kindOf(ns, typ string, create bool) *kind {
	k := s.kinds[kindKey{ns, typ}]
	if k == nil && create {
		k = &kind{byID: map[string]*Object{}}
		s.kinds[kindKey{ns, typ}] = k
	}

	return k
}

// Create stores a copy of o with version 1 and writes the version back into o.
func (s *Store) Create(o *Object) error {
	c := *o
	c.Version = 1

	s.mu.Lock()
	defer s.mu.Unlock()

	k := s.kindOf(o.Namespace, o.Type, true)
	if _, ok := k.byID[o.ID]; ok {
		return ErrExists
	}

	k.byID[o.ID] = &c

	// IDs usually arrive in order: append; otherwise insert in place.
	if n := len(k.ids); n == 0 || k.ids[n-1] < o.ID {
		k.ids = append(k.ids, o.ID)
	} else {
		i, _ := slices.BinarySearch(k.ids, o.ID)
		k.ids = slices.Insert(k.ids, i, o.ID)
	}

	o.Version = 1

	return nil
}

// Update replaces the stored object with a copy of o if o's version is the
// stored one; the new version is written back into o.
func (s *Store) Update(o *Object) error {
	c := *o

	s.mu.Lock()
	defer s.mu.Unlock()

	k := s.kindOf(o.Namespace, o.Type, false)
	if k == nil {
		return ErrNotFound
	}

	cur, ok := k.byID[o.ID]
	if !ok {
		return ErrNotFound
	}

	if cur.Version != o.Version {
		return ErrConflict
	}

	c.Version++
	k.byID[o.ID] = &c
	o.Version = c.Version

	return nil
}

// Get returns a copy of the stored object.
func (s *Store) Get(ns, typ, id string) (*Object, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()

	k := s.kindOf(ns, typ, false)
	if k == nil {
		return nil, ErrNotFound
	}

	cur, ok := k.byID[id]
	if !ok {
		return nil, ErrNotFound
	}

	c := *cur

	return &c, nil
}

// List returns copies of every object of a kind, in ID order.
func (s *Store) List(ns, typ string) []*Object {
	s.mu.RLock()
	defer s.mu.RUnlock()

	k := s.kindOf(ns, typ, false)
	if k == nil {
		return nil
	}

	out := make([]*Object, len(k.ids))

	for i, id := range k.ids {
		c := *k.byID[id]
		out[i] = &c
	}

	return out
}

var (
	errHistCap = errors.New("the floor has no history: -histcap is COSI's option")
	errListLen = errors.New("List returned the wrong number of objects")
)
