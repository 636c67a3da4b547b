package state

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
)

// AddFinalizer implements [State.AddFinalizer].
func (w *coreWrapper) AddFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	_, err := w.editFinalizers(ctx, ptr, fins, (*resource.Finalizers).Add)
	return err
}

// RemoveFinalizer implements [State.RemoveFinalizer].
func (w *coreWrapper) RemoveFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	_, err := w.editFinalizers(ctx, ptr, fins, (*resource.Finalizers).Remove)
	return err
}

// editFinalizers applies edit to every finalizer of fins and writes the
// result in any phase with the stored owner, retrying on version conflicts.
// Nothing is written when no edit reports a change (rule S5). It returns
// the version it wrote (undefined when it wrote nothing).
func (w *coreWrapper) editFinalizers(ctx context.Context, ptr resource.Pointer, fins []resource.Finalizer, edit func(*resource.Finalizers, resource.Finalizer) bool) (resource.Version, error) {
	none := resource.VersionUndefined
	if err := resource.ValidatePointer(ptr); err != nil {
		return none, err
	}
	for _, fin := range fins {
		if fin == "" {
			return none, NewInvalidError(resource.PointerOf(ptr), "empty finalizer")
		}
	}
	for {
		if ctx.Err() != nil {
			return none, stopped(ctx, "edit finalizers of", ptr)
		}
		cur, md, err := w.coreGet(ctx, ptr)
		if err != nil {
			return none, err
		}
		upd, err := DeepCopyOf(cur)
		if err != nil {
			return none, err
		}
		changed := false
		for _, fin := range fins {
			if edit(upd.Metadata().Finalizers(), fin) {
				changed = true
			}
		}
		if !changed {
			return none, nil
		}
		err = w.updateOwnedBy(ctx, upd, md.Owner())
		switch {
		case isVersionConflict(err):
			continue
		case err != nil:
			return none, err
		}
		// The version written back (rule S2); upd is the stored snapshot
		// when the core kept it, read only.
		return upd.Metadata().Version(), nil
	}
}
