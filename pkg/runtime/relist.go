package runtime

import (
	"context"
	"errors"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/route"
	"github.com/resgraph/resgraph/pkg/state"
)

// Relist re-lists a watched kind on demand and returns once the result is
// routed. The Runtime lists the kind again (a fresh watch with bootstrap
// contents, made after the call) and routes exactly what differs from what
// its watch routed before, as it does after a watch failure: a resource
// that changed meanwhile as a change, one that disappeared as destroyed,
// nothing for an unchanged one. When Relist returns nil, every controller
// affected has been woken (a Controller) or has its items queued (a
// QController) — it may not have run yet — and a cached kind's cache holds
// the list. Calls made while a re-list is under way are answered by the
// next list, made after them. Each re-list is counted in the kind's
// observe.KindMetrics.Relists, with the re-lists after failures.
//
// Over a state that resumes kind watches ([state.KindWatchResumer]), the
// watch of a kind that is not cached loses no change and the Runtime keeps
// no memory of what it routed: Relist then opens no watch, and returns once
// the running watch has routed every change committed before the call.
// Either way, the next pass of every Controller whose input the kind is
// reads every input (a transform's pass lists them again).
//
// Errors: an unusable kind is an invalid-class error; so is a kind the
// Runtime does not watch (neither an input of a controller nor cached). Before
// Run, or once it has stopped, Relist fails at once; it returns ctx's error
// when ctx is done first.
func (r *Runtime) Relist(ctx context.Context, kind resource.Kind) error {
	if err := resource.ValidateKind(kind); err != nil {
		return err
	}
	if ctx == nil {
		return state.NewInvalidError(nil, "runtime: Relist %s: nil context", resource.KindString(kind))
	}
	r.mu.Lock()
	running := r.phase == phaseRunning
	r.mu.Unlock()
	if !running {
		return errors.New("runtime: Relist " + resource.KindString(kind) + ": the Runtime is not running")
	}
	switch err := r.router.Relist(ctx, resource.KindOf(kind)); {
	case errors.Is(err, route.ErrNotWatched):
		return state.NewInvalidError(nil, "runtime: Relist %s: not watched (not an input of any controller, not cached)", resource.KindString(kind))
	case errors.Is(err, route.ErrStopped):
		return errors.New("runtime: Relist " + resource.KindString(kind) + ": the Runtime stopped")
	default:
		return err
	}
}
