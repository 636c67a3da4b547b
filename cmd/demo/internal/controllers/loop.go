package controllers

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

// runLoop is the Run body of the agent's plain controllers: it calls
// reconcile on every wake-up from the Runtime (and from extra, when not nil)
// until ctx is done, then returns nil. A reconcile error ends the loop and
// is returned, so that the Runtime restarts the controller with backoff; a
// successful reconcile resets that backoff.
func runLoop(ctx context.Context, r controller.Runtime, extra <-chan struct{}, reconcile func(context.Context, controller.Runtime) error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		case <-extra: // a nil channel never fires
		}
		if err := reconcile(ctx, r); err != nil {
			return err
		}
		r.ResetRestartBackoff()
	}
}

// modifyOutput is safe.WriterModify of an output that CleanupOutputs
// manages (fresh returns it empty): an output that a cleanup left tearing
// down — it was not wanted any more, and the destroy that followed its
// teardown failed — while it is wanted again is destroyed, then written
// anew (a tearing-down resource cannot be written back to running, so
// Modify alone would fail on every pass for ever).
func modifyOutput[T resource.Resource](ctx context.Context, r controller.Runtime, fresh func() T, fn func(T) error) error {
	err := safe.WriterModify(ctx, r, fresh(), fn)
	if !state.IsPhaseConflictError(err) {
		return err
	}
	if err := r.Destroy(ctx, fresh().Metadata()); err != nil && !state.IsNotFoundError(err) {
		return err
	}
	return safe.WriterModify(ctx, r, fresh(), fn)
}
