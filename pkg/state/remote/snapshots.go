package remote

import (
	"hash/maphash"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// snapshots are the resources a client's watches decoded, shared by every
// watch of the client (rule S7: every watcher of a change receives the
// same object). For each kind that has watches, it keeps the newest
// decoded version of each resource the watches received and, while the
// kind has more than one watch, the version before it (the Old of the
// newest change, which another watch may not have decoded yet), keyed by
// what tells a version apart on the wire (version, creation and update
// times, the spec's bytes); a watch that receives the same version
// decodes nothing and gets the same object. A watch decodes an event's Old
// before its Resource, so that a lone watch finds the Old of a change it
// follows as the newest version it decoded. A resource's entry goes with
// its Destroyed event, a kind's with its last watch: the memory held is
// one version of each live resource of a kind with one watch, at most two
// with more.
//
// Update refuses a frozen resource (resource.Metadata.Frozen): every
// object a watch hands out is frozen, kept here or not, and must be
// copied first, as a local state refuses its shared snapshots.
type snapshots struct {
	seed  maphash.Seed
	mu    sync.Mutex
	kinds map[resource.KindKey]*kindSnaps // guarded by mu
}

// kindSnaps are the snapshots of one kind.
type kindSnaps struct {
	refs  atomic.Int32              // the watches of the kind; changed under snapshots.mu
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
	ks.refs.Add(1)
	return ks
}

// release lets go of the snapshots of kind for one watch.
func (s *snapshots) release(kind resource.KindKey, ks *kindSnaps) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ks.refs.Add(-1) == 0 && s.kinds[kind] == ks {
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
	if ks.refs.Load() <= 1 {
		p.prev = snapshot{} // a lone watch shares with no one: one version is enough
	}
	return r
}

// forget drops the snapshots of a destroyed resource.
func (ks *kindSnaps) forget(id resource.ID) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	delete(ks.items, id)
}

// isShared reports whether r is a shared read-only snapshot: frozen, as
// every object a watch hands out is (and a local state's snapshots are).
func isShared(r resource.Resource) bool { return r.Metadata().Frozen() }

// sameObject reports whether a and b are the same object, without
// panicking on resources of a type that cannot be compared.
func sameObject(a, b resource.Resource) bool {
	if a == nil || b == nil {
		return false
	}
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}
