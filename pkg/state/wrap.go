package state

import (
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
)

// WrapCore returns a [State] whose CoreState methods are those of core and
// whose other methods are built on them, so that a backend implements only
// [CoreState]. The helpers work over any core, including a full State
// (which is then used through its core methods only):
//
//   - UpdateWithConflicts, Modify and ModifyWithResult read, apply the
//     caller's function to a copy and write back with Update, retrying on
//     version conflicts (never on owner, phase or pending-finalizer
//     conflicts). A result equal to the stored resource writes nothing
//     (rule S6), but the owner and expected phase are still checked, so a
//     no-op reports the same owner or phase conflict a write would.
//   - Teardown, AddFinalizer and RemoveFinalizer are read-modify-write
//     loops on Update with any phase expected (rules S4, S5).
//   - WatchFor, TeardownAndDestroy and ContextWithTeardown wait with Watch;
//     every watch they start is canceled before they return, or — for
//     ContextWithTeardown — when the returned context is done.
//   - WatchFor considers only states of an existing resource (Created and
//     Updated events) unless WithEventTypes lists other event types.
//   - TeardownAndDestroy is idempotent: it returns nil once the resource
//     is gone, whoever destroyed it, and not-found only when the resource
//     did not exist at the call (see [State.TeardownAndDestroy]'s
//     implementation notes on coreWrapper.TeardownAndDestroy).
//   - ContextWithTeardown's context is canceled with cause [ErrTearingDown]
//     or [ErrDestroyed] (already on return for a resource that is tearing
//     down or absent), or with the watch's error if the watch fails.
//
// The core may be any implementation, and it may be broken: the helpers
// check what it hands them and fail with an error instead of panicking,
// spinning or hanging. A Get that returns no resource without an error, or
// a resource whose Metadata panics, returns nil or names another resource,
// is an error of the call. On the watches of WatchFor, TeardownAndDestroy
// and ContextWithTeardown, a stream the core closes (the error wraps
// [ErrWatchClosed]), an Errored event (the error wraps the event's error)
// and a change event whose resource is unusable as above are a watch
// failure: the call returns it, and ContextWithTeardown's context is
// canceled with it as the cause. They are not retried: the caller decides
// (the Runtime, for its own watches, re-lists with a backoff). A panic in a
// core method called synchronously reaches the caller, as any panic of code
// the caller handed in; the goroutine of ContextWithTeardown never runs a
// method of the core's resources outside a recovery.
//
// Bad input (a nil or empty pointer or resource, a nil function, an empty
// finalizer) is refused with an error of the invalid class before anything
// is read or written.
//
// WrapCore(nil) (or a core that is a nil pointer) returns a State whose
// every method fails with an invalid-class error saying so.
func WrapCore(core CoreState) State {
	if usercode.IsNil(core) {
		return &coreWrapper{CoreState: nilCore{}}
	}
	return &coreWrapper{CoreState: core}
}

// coreWrapper implements State on top of a CoreState. Its only state of its
// own is the bookkeeping of the TeardownAndDestroy calls in flight (under
// its own lock), so it is safe for concurrent use whenever the core is.
type coreWrapper struct {
	CoreState
	td tdCalls
}

// isVersionConflict reports whether err is a plain version conflict: a
// conflict that a fresh read and retry can resolve.
func isVersionConflict(err error) bool {
	return IsConflictError(err) && !IsOwnerConflictError(err) &&
		!IsPhaseConflictError(err) && !IsPendingFinalizersError(err)
}

// sameIdentity reports whether a and b name the same resource.
func sameIdentity(a, b resource.Pointer) bool {
	return a.Namespace() == b.Namespace() && a.Type() == b.Type() && a.ID() == b.ID()
}
