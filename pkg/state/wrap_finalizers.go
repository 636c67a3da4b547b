package state

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
)

// AddFinalizer implements [State.AddFinalizer].
func (w *coreWrapper) AddFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	return w.editFinalizers(ctx, ptr, fins, (*resource.Finalizers).Add)
}

// RemoveFinalizer implements [State.RemoveFinalizer].
func (w *coreWrapper) RemoveFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	return w.editFinalizers(ctx, ptr, fins, (*resource.Finalizers).Remove)
}

// editFinalizers applies edit to every finalizer of fins and writes the
// result in any phase with the stored owner, retrying on version conflicts.
// Nothing is written when no edit reports a change (rule S5).
func (w *coreWrapper) editFinalizers(ctx context.Context, ptr resource.Pointer, fins []resource.Finalizer, edit func(*resource.Finalizers, resource.Finalizer) bool) error {
	if err := resource.ValidatePointer(ptr); err != nil {
		return err
	}
	for _, fin := range fins {
		if fin == "" {
			return NewInvalidError(resource.PointerOf(ptr), "empty finalizer")
		}
	}
	for {
		if ctx.Err() != nil {
			return stopped(ctx, "edit finalizers of", ptr)
		}
		cur, md, err := w.coreGet(ctx, ptr)
		if err != nil {
			return err
		}
		upd, err := DeepCopyOf(cur)
		if err != nil {
			return err
		}
		changed := false
		for _, fin := range fins {
			if edit(upd.Metadata().Finalizers(), fin) {
				changed = true
			}
		}
		if !changed {
			return nil
		}
		err = w.updateGiven(ctx, upd, UpdateOptions{Owner: md.Owner()}, []UpdateOption{WithUpdateOwner(md.Owner()), WithExpectedPhaseAny()})
		if isVersionConflict(err) {
			continue
		}
		return err
	}
}
