package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Teardown implements [State.Teardown]: it moves the resource to the
// tearing-down phase with one write (none when it is already tearing down)
// and reports whether its finalizers are empty. The stored owner must be the
// one given by [WithTeardownOwner] (empty by default).
func (w *coreWrapper) Teardown(ctx context.Context, ptr resource.Pointer, opts ...TeardownOption) (bool, error) {
	if err := resource.ValidatePointer(ptr); err != nil {
		return false, err
	}
	var o TeardownOptions
	opt.Apply(&o, opts)
	ready, _, _, err := w.teardown(ctx, ptr, o.Owner)
	return ready, err
}

// teardown is Teardown; seen reports whether the resource was read at
// least once (it existed at the call), whatever the outcome, and committed
// is the version it wrote (undefined when it wrote nothing).
func (w *coreWrapper) teardown(ctx context.Context, ptr resource.Pointer, owner resource.Owner) (ready, seen bool, committed resource.Version, err error) {
	for {
		if ctx.Err() != nil {
			return false, seen, committed, stopped(ctx, "teardown", ptr)
		}
		cur, md, err := w.coreGet(ctx, ptr)
		if err != nil {
			return false, seen, committed, err
		}
		seen = true
		if md.Owner() != owner {
			return false, seen, committed, NewOwnerConflictError(resource.PointerOf(ptr), "owner is %q, not %q", md.Owner(), owner)
		}
		if md.Phase() == resource.PhaseTearingDown {
			return md.Finalizers().Empty(), seen, committed, nil
		}
		upd, err := DeepCopyOf(cur)
		if err != nil {
			return false, seen, committed, err
		}
		upd.Metadata().SetPhase(resource.PhaseTearingDown)
		err = w.updateOwnedBy(ctx, upd, owner)
		if isVersionConflict(err) {
			continue
		}
		if err != nil {
			return false, seen, committed, err
		}
		umd := upd.Metadata() // the stored snapshot when the core kept it: read only
		return umd.Finalizers().Empty(), seen, umd.Version(), nil
	}
}

// TeardownAndDestroy implements [State.TeardownAndDestroy]: it tears the
// resource down, waits until it has no finalizers and destroys it.
//
// Its goal is that the resource is gone, and it is idempotent: a resource
// that existed at the call and is gone — destroyed by this call or by
// anyone else, concurrent TeardownAndDestroy calls included — ends the call
// with nil. Not-found is returned only when the resource did not exist at
// the call. The call knows the resource existed when its own read found
// it, or when the resource was destroyed through this State (by any
// Destroy or TeardownAndDestroy call on it) after the call began, even if
// that was before its first read; a resource destroyed by another process
// (a shared backend) before the call's first read cannot be told from one
// that never existed, and gives not-found. A finalizer added between the
// wait and the destroy makes it wait again; a resource found running again
// (destroyed and created anew meanwhile) is torn down again.
func (w *coreWrapper) TeardownAndDestroy(ctx context.Context, ptr resource.Pointer, opts ...TeardownAndDestroyOption) error {
	if err := resource.ValidatePointer(ptr); err != nil {
		return err
	}
	var o TeardownAndDestroyOptions
	opt.Apply(&o, opts)
	ptr = resource.PointerOf(ptr)
	call := w.td.join(ptr)
	defer w.td.leave(ptr, call)
	if _, seen, _, err := w.teardown(ctx, ptr, o.Owner); err != nil {
		if seen || w.td.wasDestroyed(call) {
			return notFoundIsDone(err)
		}
		return err
	}
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan Event, 1)
	if err := w.Watch(watchCtx, ptr, ch); err != nil {
		return err
	}
	for {
		ev, md, err := nextEvent(ctx, ptr, ch)
		if err != nil {
			return err
		}
		if ev.Type == Destroyed {
			return nil
		}
		if md.Phase() != resource.PhaseTearingDown {
			if _, _, _, err := w.teardown(ctx, ptr, o.Owner); err != nil {
				return notFoundIsDone(err)
			}
			continue
		}
		if !md.Finalizers().Empty() {
			continue
		}
		err = w.Destroy(ctx, ptr, WithDestroyOwner(o.Owner))
		if IsPendingFinalizersError(err) {
			// A finalizer was added since the event: wait for the next one.
			continue
		}
		return notFoundIsDone(err)
	}
}

// notFoundIsDone maps a not-found error to nil: the resource is gone, as
// the caller wanted.
func notFoundIsDone(err error) error {
	if IsNotFoundError(err) {
		return nil
	}
	return err
}

// ErrTearingDown is the cause of a [State.ContextWithTeardown] context
// canceled because the resource started tearing down.
var ErrTearingDown = errors.New("resource is tearing down")

// ErrDestroyed is the cause of a [State.ContextWithTeardown] context
// canceled because the resource is destroyed (or was absent).
var ErrDestroyed = errors.New("resource is destroyed")

// ContextWithTeardown implements [State.ContextWithTeardown]. The returned
// context is a child of ctx, canceled with cause [ErrTearingDown] when the
// resource starts tearing down, [ErrDestroyed] when it is destroyed or
// absent (then already on return), or the watch's error if watching fails.
// The goroutine that watches ends when the returned context is done. A ctx
// that is done (before the call, or before the resource's current state
// arrived) gives its error together with a done context, so that a caller
// waiting on it never blocks nor panics.
//
// A watch failure cancels the context with a cause that says so: an
// Errored event (the cause wraps its error), a stream the core closed
// (wraps [ErrWatchClosed]), or an event whose resource is missing, has no
// metadata, names another resource or panics in Metadata. The watching
// goroutine never calls a method of the core's resources outside a
// recovery.
func (w *coreWrapper) ContextWithTeardown(ctx context.Context, ptr resource.Pointer) (context.Context, error) {
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return ctx, context.Cause(ctx)
	}
	ptr = resource.PointerOf(ptr)
	tctx, cancel := context.WithCancelCause(ctx)
	ch := make(chan Event, 1)
	if err := w.Watch(tctx, ptr, ch); err != nil {
		cancel(err)
		return nil, err
	}
	// The first event is the current state (rule S8): decide synchronously,
	// so that an absent or tearing-down resource gives a context that is
	// already canceled on return.
	if teardownCause(tctx, ptr, ch, cancel) {
		if ctx.Err() != nil {
			// ctx ended while waiting: its error, with a done context.
			return tctx, context.Cause(ctx)
		}
		return tctx, nil
	}
	go func() {
		for !teardownCause(tctx, ptr, ch, cancel) {
		}
	}()
	return tctx, nil
}

// teardownCause waits for the next change of ptr on ch and, when it says
// the resource is gone or tearing down, or the watch failed (see
// nextEvent), cancels with the right cause and reports true; it reports
// true too when tctx is done.
func teardownCause(tctx context.Context, ptr resource.Pointer, ch <-chan Event, cancel context.CancelCauseFunc) bool {
	ev, md, err := nextEvent(tctx, ptr, ch)
	switch {
	case tctx.Err() != nil:
		return true
	case err != nil:
		cancel(err)
		return true
	case ev.Type == Destroyed:
		cancel(fmt.Errorf("resource %s: %w", resource.PointerString(ptr), ErrDestroyed))
		return true
	case md.Phase() == resource.PhaseTearingDown:
		cancel(fmt.Errorf("resource %s: %w", resource.PointerString(ptr), ErrTearingDown))
		return true
	}
	return false
}
