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
// what tells a version apart on the wire (the version, and a hash of the
// creation and update times, the phase and the spec); a watch that receives the same version
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

// kindSnaps are the snapshots of one kind: an entry of 32 bytes per
// resource in cur, and in prev only while the kind has more than one
// watch.
type kindSnaps struct {
	refs atomic.Int32 // the watches of the kind; changed under snapshots.mu
	mu   sync.Mutex   // guards cur and prev
	// cur holds the newest decoded version of each resource; prev the
	// version before it, while the kind has more than one watch (nil
	// otherwise).
	cur, prev map[resource.ID]snapshot
}

// snapshot is one decoded version and what identifies it.
type snapshot struct {
	res resource.Resource
	key snapKey
}

// snapKey tells a version apart on the wire: its version, and a hash of
// its creation and update times, spec format, phase and spec bytes (a
// resource destroyed and created again restarts its versions).
type snapKey struct {
	version uint64
	sum     uint64
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
		ks = &kindSnaps{cur: map[resource.ID]snapshot{}}
		s.kinds[kind] = ks
	}
	ks.refs.Add(1)
	return ks
}

// release lets go of the snapshots of kind for one watch: a kind left
// with one watch drops the versions before the newest.
func (s *snapshots) release(kind resource.KindKey, ks *kindSnaps) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch n := ks.refs.Add(-1); {
	case n == 0 && s.kinds[kind] == ks:
		delete(s.kinds, kind)
	case n == 1:
		ks.mu.Lock()
		ks.prev = nil
		ks.mu.Unlock()
	}
}

// keyOf returns the identity of the version m carries.
func (s *snapshots) keyOf(m *pb.Resource) snapKey {
	md := m.Metadata
	w := wireVersion{
		createdSec: md.GetCreatedSeconds(), createdNsec: md.GetCreatedNanos(),
		updatedSec: md.GetUpdatedSeconds(), updatedNsec: md.GetUpdatedNanos(),
		format: m.SpecFormat, phase: md.GetPhase(),
		spec: maphash.Bytes(s.seed, m.Spec),
	}
	return snapKey{version: md.GetVersion(), sum: maphash.Comparable(s.seed, w)}
}

// wireVersion is what tells two versions of one number apart on the
// wire, hashed into snapKey.sum.
type wireVersion struct {
	createdSec, updatedSec   int64
	createdNsec, updatedNsec int32
	format                   uint32
	phase                    pb.Phase
	spec                     uint64 // the spec bytes' hash
}

// lookup returns the decoded object of the version m carries, if a watch
// decoded it.
func (ks *kindSnaps) lookup(id resource.ID, key snapKey) resource.Resource {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if c, ok := ks.cur[id]; ok && c.key == key {
		return c.res
	}
	if p, ok := ks.prev[id]; ok && p.key == key {
		return p.res
	}
	return nil
}

// store records r as the newest decoded version of id and returns the
// object to hand out: r, or the one another watch stored meanwhile.
func (ks *kindSnaps) store(id resource.ID, key snapKey, r resource.Resource) resource.Resource {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	cur, ok := ks.cur[id]
	if !ok {
		ks.cur[id] = snapshot{res: r, key: key}
		return r
	}
	prev, hasPrev := ks.prev[id]
	switch {
	case cur.key == key:
		return cur.res
	case hasPrev && prev.key == key:
		return prev.res
	}
	shared := ks.refs.Load() > 1 // a lone watch shares with no one: one version is enough
	switch {
	case key.version >= cur.key.version:
		ks.cur[id] = snapshot{res: r, key: key}
		if shared {
			ks.prevMap()[id] = cur
		}
	case shared && (!hasPrev || key.version >= prev.key.version):
		ks.prevMap()[id] = snapshot{res: r, key: key}
	}
	if !shared && hasPrev {
		delete(ks.prev, id)
	}
	return r
}

// prevMap returns prev, made when missing. Call it with mu held.
func (ks *kindSnaps) prevMap() map[resource.ID]snapshot {
	if ks.prev == nil {
		ks.prev = map[resource.ID]snapshot{}
	}
	return ks.prev
}

// forget drops the snapshots of a destroyed resource.
func (ks *kindSnaps) forget(id resource.ID) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	delete(ks.cur, id)
	delete(ks.prev, id)
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
