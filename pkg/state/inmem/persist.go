package inmem

import (
	"time"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Persistence is the hook through which a state made with
// [WithPersistence] keeps its resources across restarts: it hands the
// state the resources to start from, and is told of every write, in the
// order the state applies them, before the write is applied. A
// Persistence serves one state. A Persistence that stores only some
// resource types (those its codec encodes) implements
// [state.TypeValidator] too: the state answers ValidateType with it. The bbolt file store of the
// pkg/state/inmem/boltdb module implements it; see there for its
// durability policies and lifecycle.
type Persistence interface {
	// Restore returns what the state starts from. NewState calls it once,
	// before anything else; it cannot fail: a Persistence reads and checks
	// its storage before it is handed to NewState.
	Restore() Restored

	// Append is told of one write: the resource id of the kind (ns, typ)
	// becomes r, the snapshot the state is about to store (version,
	// owner, phase and times final), or is destroyed when r is nil. It is
	// called with the kind's lock held, after every check of the write
	// passed and before anything of it is applied, so the calls of one
	// kind come in the order of its changes; it must not block (waiting
	// belongs in [Pending.Wait]), nor change r (it may keep it: a stored
	// snapshot never changes).
	//
	// An error refuses the write: nothing is written, and the write
	// returns that error as is (so an encoding error of the invalid class
	// stays one). Otherwise the write is applied, the kind's lock released,
	// and the write returns what Wait on the returned Pending returns.
	Append(ns resource.Namespace, typ resource.Type, id resource.ID, r resource.Resource) (Pending, error)
}

// ValidateType implements [state.TypeValidator]: a state made with
// [WithPersistence] asks its Persistence when that implements
// state.TypeValidator (a Persistence that encodes resources stores only
// the types its codec knows); any other state stores every type.
func (c *core) ValidateType(kind resource.Kind) error {
	if v, ok := c.persist.(state.TypeValidator); ok {
		return v.ValidateType(kind)
	}
	return nil
}

// Pending is a write a [Persistence] accepted. Wait blocks until the
// write is as durable as the Persistence promises its writers, and
// returns nil, or the error that kept it from being so. The write has
// been applied in memory either way: an error here means the memory and
// the storage no longer agree, which the Persistence must make known
// (by refusing every later write, for one).
type Pending interface {
	Wait() error
}

// Restored is what a persistent state starts from.
type Restored struct {
	// Resources are the resources to start with, at most one per
	// pointer, each with a defined version, a known phase and its
	// creation time. The state stores them as its immutable snapshots:
	// nothing else may refer to them.
	Resources []resource.Resource
	// CreatedFloor is no earlier than the creation time of any resource
	// ever created in the storage, destroyed ones included: every
	// creation time the state gives is later, so that creation times stay
	// unique per resource even when the clock went back across a restart
	// (see the incarnation rule of Update).
	CreatedFloor time.Time
	// Lineage identifies the storage (random, chosen when it was
	// created), and Run counts the states started from it, this one
	// included. Bookmarks carry both: a bookmark of an earlier run of the
	// same storage is refused with a buffer-overrun error (S11: the
	// history it resumes from is not kept across a restart), and any other
	// foreign bookmark as invalid.
	Lineage, Run uint32
}

// WithPersistence makes the state persistent through p: NewState starts
// from [Persistence.Restore] and every write goes through
// [Persistence.Append] (see [Persistence] for the order and the errors).
// Reads and watches are served from memory as without it; the history
// (tail events, bookmarks) starts empty on every start. A nil p means no
// persistence.
func WithPersistence(p Persistence) Option {
	return func(o *options) { o.persist = p }
}

// restore fills a new core from its persistence.
func (c *core) restore(p Persistence) {
	rs := p.Restore()
	c.persist = p
	c.stateID = uint64(rs.Lineage)<<32 | uint64(rs.Run)
	c.persistent = true
	c.createdFloor = rs.CreatedFloor
	for _, r := range rs.Resources {
		md := r.Metadata()
		ks := c.store(resource.KindOf(md))
		// A resource the detector cannot copy is not watched (nil ref).
		ref, _ := ks.det.referenceCopy(r)
		freeze(md, ref != nil)
		ks.items[md.ID()] = ks.itemLocked(r, sizeOf(r), ref != nil, usercode.CopiesPlainly(r))
		ks.count.Add(1)
		ks.lastCreated = max(ks.lastCreated, unixNanoOf(md.Created()))
		if ref != nil {
			ref.Metadata().Freeze()
			ks.det.restoredLocked(md.ID(), ref)
		}
	}
}

// earlierRun reports whether sid, the state ID of a bookmark refused as
// of another state, is that of an earlier run of the persistent storage
// of stateID (see [Restored]).
func earlierRun(persistent bool, stateID, sid uint64) bool {
	return persistent && sid>>32 == stateID>>32 && uint32(sid) < uint32(stateID)
}
