package xform

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// maxWriteAttempts bounds the write attempts of writeOutput: the first
// write, and one more after destroying a previous incarnation, plus one for
// a race with a concurrent destroy.
const maxWriteAttempts = 3

// outputWrite says how [writeOutput] writes.
type outputWrite struct {
	// withResult: return the output as stored (rw.ModifyWithResult
	// instead of rw.Modify).
	withResult bool
	// absent: the caller knows the output is most likely absent (it never
	// wrote it), so fn is applied to out, the caller's own value, and out
	// is created directly, which saves the read and the copy of Modify; if
	// the output exists after all, the write falls back to Modify.
	absent bool
}

// writeOutput writes the output out with rw.Modify: fn is applied to a
// copy of the stored output, or to out when it is absent, and nothing is
// written when the result equals the stored output. Unless the written
// output is asked for (withResult), out is given up to the Runtime when it
// can take it (givingCreator, givingModifier): stored as is when created,
// or the storage of the copy of the stored output that fn changes.
//
// An output that is tearing down (a previous incarnation of the output,
// left by an input that was destroyed and created again) is destroyed once
// it has no finalizers, and then written anew. While it still has
// finalizers, writeOutput reports waiting and writes nothing: the caller
// retries when the output becomes destroy-ready.
func writeOutput(ctx context.Context, rw controller.ReaderWriter, out resource.Resource, fn func(resource.Resource) error, how outputWrite) (written resource.Resource, waiting bool, err error) {
	if how.absent {
		written, err = createOutput(ctx, rw, out, fn, !how.withResult)
		if !state.IsConflictError(err) {
			return written, false, err
		}
	}
	for attempt := 1; ; attempt++ {
		g, giving := rw.(givingModifier)
		switch {
		case how.withResult:
			written, err = rw.ModifyWithResult(ctx, out, fn)
		case giving:
			err = g.ModifyGiven(ctx, out, fn)
		default:
			err = rw.Modify(ctx, out, fn)
		}
		if err == nil || !state.IsPhaseConflictError(err) || attempt == maxWriteAttempts {
			return written, false, err
		}
		ready, err := DestroyIfReady(ctx, rw, resource.PointerOf(out.Metadata()))
		if err != nil {
			return nil, false, err
		}
		if !ready {
			return nil, true, nil
		}
	}
}

// createOutput applies fn to out, the caller's own value, and creates it;
// a conflict error means the output exists.
//
// fn runs on out itself, not on a copy: a copy per created output saved
// (docs/performance.md, "Creating an output"). With give, out is given up
// to the Runtime when it can take it (givingCreator): the state may store
// out itself, so that nothing of the write copies the output, and
// nobody may change out once it is created (the caller then keeps no
// reference to it; the result is not handed to user code). When Create
// conflicts, the fallback Modify applies fn to a copy of the stored
// output; only if that output is destroyed in between does fn run on out
// again (a copy of it, by Modify), which is the case of a stored output
// that fn wrote from the same input: fn fills an output from its input
// whatever the output held.
func createOutput(ctx context.Context, w controller.Writer, out resource.Resource, fn func(resource.Resource) error, give bool) (resource.Resource, error) {
	if err := fn(out); err != nil {
		return nil, err
	}
	var err error
	if g, ok := w.(givingCreator); ok && give {
		err = g.CreateGiven(ctx, out)
	} else {
		err = w.Create(ctx, out)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// givingModifier is a Writer whose Modify can take emptyResource given
// up (the Runtime's, through its adapter's ModifyGiven): the caller keeps
// no reference to it once the call returned, and never reads or changes
// it again, except its identity and, after a phase conflict (the stored
// output is tearing down), to write it again as it was.
type givingModifier interface {
	ModifyGiven(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...controller.ModifyOption) error
}

// givingCreator is a Writer that can create a resource its caller gives
// up (the Runtime's, through its adapter's CreateGiven): the caller keeps
// no reference to it once the call returned, and never changes it again.
type givingCreator interface {
	CreateGiven(ctx context.Context, r resource.Resource, opts ...controller.CreateOption) error
}

// DestroyIfReady destroys ptr, an output of the caller, if it is tearing
// down with no finalizers, and reports whether it is gone. A running or
// absent output reports true without writing (there is nothing to wait
// for); one with finalizers reports false.
func DestroyIfReady(ctx context.Context, rw controller.ReaderWriter, ptr resource.Pointer) (gone bool, err error) {
	cur, err := rw.Get(ctx, ptr, state.WithReadOnlyGet())
	switch {
	case state.IsNotFoundError(err):
		return true, nil
	case err != nil:
		return false, err
	}
	md := cur.Metadata()
	if md.Phase() == resource.PhaseRunning {
		return true, nil
	}
	if !md.Finalizers().Empty() {
		return false, nil
	}
	return destroy(ctx, rw, ptr)
}

// RemoveOutput tears down ptr, an output of the caller, destroys it when
// it has no finalizers, and reports whether it is gone. An output with
// finalizers is left tearing down (report false); the caller destroys it
// later, on its destroy-ready event. An absent output is gone.
//
// The output is torn down even when it has no finalizers, rather than
// destroyed at once: controllers that read it see it tearing down first
// (the lifecycle every resource follows), and the teardown's version bump
// makes a concurrent finalizer change based on an earlier read conflict
// and retry, instead of landing on a new incarnation of the output that
// starts again at version 1.
func RemoveOutput(ctx context.Context, w controller.Writer, ptr resource.Pointer) (gone bool, err error) {
	ready, err := w.Teardown(ctx, ptr)
	switch {
	case state.IsNotFoundError(err):
		return true, nil
	case err != nil:
		return false, err
	case !ready:
		return false, nil
	}
	return destroy(ctx, w, ptr)
}

func destroy(ctx context.Context, w controller.Writer, ptr resource.Pointer) (bool, error) {
	err := w.Destroy(ctx, ptr)
	switch {
	case err == nil, state.IsNotFoundError(err):
		return true, nil
	case state.IsPendingFinalizersError(err):
		// A finalizer was added since the read: wait for it to go.
		return false, nil
	default:
		return false, err
	}
}
