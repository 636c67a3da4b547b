package destroy

import (
	"context"
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Input returns the input a Controller declares to be woken up when one of
// its outputs of kind is tearing down with no finalizers.
func Input(kind resource.Kind) controller.Input {
	return controller.Input{Namespace: kind.Namespace(), Type: kind.Type(), Kind: controller.InputDestroyReady}
}

// QInput returns the input a QController declares to have MapInput called
// when one of its outputs of kind is tearing down with no finalizers.
func QInput(kind resource.Kind) controller.Input {
	return controller.Input{Namespace: kind.Namespace(), Type: kind.Type(), Kind: controller.InputQMappedDestroyReady}
}

// Ready destroys every resource of the kinds that is owned by owner (the
// controller behind rw), tearing down and without finalizers, and returns
// the pointers it destroyed. It lists every kind, so its cost grows with
// the number of resources of the kinds. Failures are joined; the other
// resources are still processed.
func Ready(ctx context.Context, rw controller.ReaderWriter, owner string, kinds ...resource.Kind) ([]resource.Pointer, error) {
	var (
		destroyed []resource.Pointer
		errs      []error
	)
	for _, kind := range kinds {
		list, err := rw.List(ctx, kind, state.WithReadOnlyList())
		if err != nil {
			errs = append(errs, fmt.Errorf("list %s: %w", resource.KindString(kind), err))
			continue
		}
		for _, r := range list.Items {
			if !isReady(r.Metadata(), owner) {
				continue
			}
			ptr := resource.PointerOf(r.Metadata())
			ok, err := destroy(ctx, rw, owner, ptr)
			switch {
			case err != nil:
				errs = append(errs, err)
			case ok:
				destroyed = append(destroyed, ptr)
			}
		}
	}
	return destroyed, errors.Join(errs...)
}

// IfReady destroys ptr if it is owned by owner (the controller behind rw),
// tearing down and without finalizers, and reports whether it destroyed
// it. An absent resource is not an error.
func IfReady(ctx context.Context, rw controller.ReaderWriter, owner string, ptr resource.Pointer) (bool, error) {
	r, err := rw.Get(ctx, ptr, state.WithReadOnlyGet())
	switch {
	case state.IsNotFoundError(err):
		return false, nil
	case err != nil:
		return false, err
	}
	if !isReady(r.Metadata(), owner) {
		return false, nil
	}
	return destroy(ctx, rw, owner, ptr)
}

func isReady(md *resource.Metadata, owner string) bool {
	return md.Owner() == owner && md.Phase() == resource.PhaseTearingDown && md.Finalizers().Empty()
}

// destroy destroys ptr; a resource gone meanwhile or given a finalizer
// since it was read is not an error (the latter is not destroyed).
func destroy(ctx context.Context, w controller.Writer, owner string, ptr resource.Pointer) (bool, error) {
	err := w.Destroy(ctx, ptr, controller.WithOwner(owner))
	switch {
	case err == nil:
		return true, nil
	case state.IsNotFoundError(err), state.IsPendingFinalizersError(err):
		return false, nil
	default:
		return false, fmt.Errorf("destroy %s: %w", resource.PointerString(ptr), err)
	}
}
