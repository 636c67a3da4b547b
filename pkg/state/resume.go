package state

import "github.com/resgraph/resgraph/pkg/resource"

// KindWatchResumer is an optional interface of a [CoreState] whose kind
// watches can be resumed from a bookmark instead of listed again. A state
// that answers true for a kind promises, for a watch of the whole kind
// (WatchKindAggregated, no label or ID query):
//
//   - it delivers every change of the kind, in order (rules S9, S12): it
//     loses none and repeats none;
//   - every change event and the Bootstrapped event carry a bookmark, and
//     a watch opened with [WithKindStartFromBookmark] of such a bookmark
//     delivers exactly the changes after that event, in order (rule S11:
//     a Destroyed event carries the resource's last version), or fails at
//     the call with a buffer-overrun error when they are no longer kept;
//   - it numbers its changes ([RevisionReporter]), and every event carries
//     its revision ([Event].Revision).
//
// The Runtime then keeps no per-resource memory of what it routed for the
// kinds it watches without caching them: a watch that fails is resumed
// from the bookmark of the last event it routed, and Runtime.Relist waits
// until the running watch has routed every change committed before the
// call. A state that does not implement it (or answers false) keeps the
// memory and is listed again after a failure, its bootstrap routed as a
// diff against that memory. When a resume is refused (the bookmark is
// older than the state's history), the Runtime lists the kind again
// without that memory: every listed resource is routed as a change, and a
// resource destroyed while the watch was down is not routed as destroyed
// (the Runtime logs a warning saying so).
//
// A state returned by [WrapCore] implements it by asking its core (false
// when the core does not implement it).
type KindWatchResumer interface {
	// ResumesKindWatches reports whether the whole-kind watches of kind
	// keep the promises above.
	ResumesKindWatches(kind resource.Kind) bool
}

// ResumesKindWatches implements [KindWatchResumer] for a wrapped core.
func (w *coreWrapper) ResumesKindWatches(kind resource.Kind) bool {
	r, ok := w.CoreState.(KindWatchResumer)
	return ok && r.ResumesKindWatches(kind)
}

// ResumesKindWatches reports whether st implements [KindWatchResumer] and
// [RevisionReporter] and answers true for kind.
func ResumesKindWatches(st CoreState, kind resource.Kind) bool {
	if _, ok := st.(RevisionReporter); !ok {
		return false
	}
	r, ok := st.(KindWatchResumer)
	return ok && r.ResumesKindWatches(kind)
}
