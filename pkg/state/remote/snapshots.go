package remote

import (
	"hash/maphash"
	"reflect"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// snapshots are the resources a client's watches decoded, shared by every
// watch of the client (rule S7: every watcher of a change receives the
// same object). For each kind that has watches, it keeps the newest two
// decoded versions of each resource the watches received, keyed by what
// tells a version apart on the wire (version, creation and update times,
// the spec's bytes); a watch that receives the same version decodes
// nothing and gets the same object. A resource's entry goes with its
// Destroyed event, a kind's with its last watch: the memory held is at
// most two versions of each live resource of the watched kinds.
//
// Update refuses a resource that is one of these objects (it must be
// copied first), as a local state refuses its shared snapshots.
type snapshots struct {
	seed  maphash.Seed
	mu    sync.Mutex
	kinds map[resource.KindKey]*kindSnaps // guarded by mu
}

// kindSnaps are the snapshots of one kind.
type kindSnaps struct {
	refs  int                       // the watches of the kind; guarded by snapshots.mu
	mu    sync.Mutex                // guards items
	items map[resource.ID]*snapPair // guarded by mu
}

type snapPair struct{ cur, prev snapshot }

// snapshot is one decoded version and what identifies it.
type snapshot struct {
	res resource.Resource
	key snapKey
}

type snapKey struct {
	version                  uint64
	createdSec, updatedSec   int64
	createdNsec, updatedNsec int32
	format                   uint32
	spec                     uint64 // the spec bytes' hash
	phase                    pb.Phase
}

func newSnapshots() *snapshots {
	return &snapshots{seed: maphash.MakeSeed(), kinds: map[resource.KindKey]*kindSnaps{}}
}

// acquire returns the snapshots of kind for one more watch.
func (s *snapshots) acquire(kind resource.KindKey) *kindSnaps {
	s.mu.Lock()
	defer s.mu.Unlock()
	ks := s.kinds[kind]
	if ks == nil {
		ks = &kindSnaps{items: map[resource.ID]*snapPair{}}
		s.kinds[kind] = ks
	}
	ks.refs++
	return ks
}

// release lets go of the snapshots of kind for one watch.
func (s *snapshots) release(kind resource.KindKey, ks *kindSnaps) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ks.refs--; ks.refs == 0 && s.kinds[kind] == ks {
		delete(s.kinds, kind)
	}
}

// keyOf returns the identity of the version m carries.
func (s *snapshots) keyOf(m *pb.Resource) snapKey {
	md := m.Metadata
	return snapKey{
		version:    md.GetVersion(),
		createdSec: md.GetCreatedSeconds(), createdNsec: md.GetCreatedNanos(),
		updatedSec: md.GetUpdatedSeconds(), updatedNsec: md.GetUpdatedNanos(),
		format: m.SpecFormat,
		spec:   maphash.Bytes(s.seed, m.Spec),
		phase:  md.GetPhase(),
	}
}

// lookup returns the decoded object of the version m carries, if a watch
// decoded it.
func (ks *kindSnaps) lookup(id resource.ID, key snapKey) resource.Resource {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	p := ks.items[id]
	switch {
	case p == nil:
		return nil
	case p.cur.key == key:
		return p.cur.res
	case p.prev.key == key:
		return p.prev.res
	}
	return nil
}

// store records r as the newest decoded version of id and returns the
// object to hand out: r, or the one another watch stored meanwhile.
func (ks *kindSnaps) store(id resource.ID, key snapKey, r resource.Resource) resource.Resource {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	p := ks.items[id]
	if p == nil {
		ks.items[id] = &snapPair{cur: snapshot{res: r, key: key}}
		return r
	}
	switch {
	case p.cur.key == key:
		return p.cur.res
	case p.prev.key == key:
		return p.prev.res
	}
	switch {
	case key.version >= p.cur.key.version:
		p.prev, p.cur = p.cur, snapshot{res: r, key: key}
	case key.version >= p.prev.key.version:
		p.prev = snapshot{res: r, key: key}
	}
	return r
}

// forget drops the snapshots of a destroyed resource.
func (ks *kindSnaps) forget(id resource.ID) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	delete(ks.items, id)
}

// isShared reports whether r is a snapshot a watch of this client handed
// out (and still keeps).
func (s *snapshots) isShared(r resource.Resource) bool {
	md := r.Metadata()
	s.mu.Lock()
	ks := s.kinds[resource.KindOf(md)]
	s.mu.Unlock()
	if ks == nil {
		return false
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	p := ks.items[md.ID()]
	return p != nil && (sameObject(p.cur.res, r) || sameObject(p.prev.res, r))
}

// sameObject reports whether a and b are the same object, without
// panicking on resources of a type that cannot be compared.
func sameObject(a, b resource.Resource) bool {
	if a == nil || b == nil {
		return false
	}
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}
