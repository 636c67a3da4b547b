// Package kindtap is the seam between a state that hands each change of a
// kind to a tap as it commits it (inmem's core, a state WrapCore built on
// it, and the states that forward it to the one they wrap: boltdb.State,
// routed.State, an access guard) and what reads a kind's changes without
// a watch of it: the flight recorder (package recording). It is internal:
// a tap runs in the state's writers' path, under their locks.
package kindtap

import "github.com/resgraph/resgraph/pkg/resource"

// Tap sees each change of a kind as the state commits it.
//
// Committed is called by the writer of the change while it holds the
// kind's write lock: once per change of the kind, one call at a time, in
// the order of their revisions, and before any watch can deliver the
// change. old is the resource before the change (nil for a create), new
// after it (nil for a destroy); both are the state's shared snapshots
// (rule S7: read, never written). rev is the change's revision, at the
// time of the write (Unix nanoseconds, the state's write clock).
//
// Committed must return at once: it must not block, wait for, or take a
// lock that anything but the writers of the kind can hold (rule S12: the
// state's writers never wait for a reader), nor call the state.
type Tap interface {
	Committed(rev uint64, old, new resource.Resource, at int64)
}

// Tapper is a state that can tap a kind's commits: TapKind sets t on kind
// and returns what removes it (after remove returns, t is not called
// again); Committed is called for every change committed after TapKind
// returned and none before it (a change's revision says which side of a
// listing it is on). A state that wraps another answers
// errors.ErrUnsupported when the one it wraps is no Tapper.
type Tapper interface {
	TapKind(kind resource.Kind, t Tap) (remove func(), err error)
}
