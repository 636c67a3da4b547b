package xform

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// ReleaseFinalizer removes the finalizer fin from the input in, if in has
// it and the user's FinalizerRemovalFunc veto (when set) agrees, and
// reports whether it wrote the input.
func ReleaseFinalizer[I typed.ResourceWithDefinition](ctx context.Context, rw controller.ReaderWriter, logger *zap.Logger, fin resource.Finalizer, in I,
	veto func(context.Context, controller.Reader, *zap.Logger, I) error,
) (removed bool, err error) {
	md := in.Metadata()
	if !md.Finalizers().Has(fin) {
		return false, nil
	}
	if veto != nil {
		if err := Call(logger, "FinalizerRemovalFunc", md, func() error { return veto(ctx, rw, logger, in) }); err != nil {
			return false, fmt.Errorf("remove finalizer %q: %w", fin, err)
		}
	}
	if err := rw.RemoveFinalizer(ctx, md, fin); err != nil {
		return false, fmt.Errorf("remove finalizer %q: %w", fin, err)
	}
	return true, nil
}
