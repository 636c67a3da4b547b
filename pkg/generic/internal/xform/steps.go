package xform

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TransformFunc returns the Modify function that runs the user's
// TransformFunc tf for the input in on the output, recovering a panic.
func TransformFunc[I, O generic.ResourceWithDefinition](ctx context.Context, r controller.Reader, logger *zap.Logger, in I,
	tf func(context.Context, controller.Reader, *zap.Logger, I, O) error,
) func(resource.Resource) error {
	return func(res resource.Resource) error {
		o, err := As[O](res)
		if err != nil {
			return err
		}
		return Call(logger, "TransformFunc", in.Metadata(), func() error { return tf(ctx, r, logger, in, o) })
	}
}

// RunExtra runs the user's TransformExtraOutputFunc extra for the input in
// with written, its output as stored, recovering a panic.
func RunExtra[I, O generic.ResourceWithDefinition](ctx context.Context, rw controller.ReaderWriter, logger *zap.Logger, in I, written resource.Resource,
	extra func(context.Context, controller.ReaderWriter, *zap.Logger, I, O) error,
) error {
	o, err := As[O](written)
	if err != nil {
		return err
	}
	return Call(logger, "TransformExtraOutputFunc", in.Metadata(), func() error { return extra(ctx, rw, logger, in, o) })
}

// ReleaseFinalizer removes the finalizer fin from the input in, if in has
// it and the user's FinalizerRemovalFunc veto (when set) agrees, and
// reports whether it wrote the input.
func ReleaseFinalizer[I generic.ResourceWithDefinition](ctx context.Context, rw controller.ReaderWriter, logger *zap.Logger, fin resource.Finalizer, in I,
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
