package xform

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// Removal is a controller's finalizer-removal hook: the user's
// FinalizerRemovalFunc (a Reader) or FinalizerRemovalExtraOutputFunc (a
// ReaderWriter, which may also write the controller's extra outputs); at
// most one is set (the controllers refuse both, rule G2).
type Removal[I typed.ResourceWithDefinition] struct {
	Reader func(context.Context, controller.Reader, *zap.Logger, I) error
	Writer func(context.Context, controller.ReaderWriter, *zap.Logger, I) error
}

// call runs the hook set, if any, named as the user knows it.
func (h Removal[I]) call(ctx context.Context, rw controller.ReaderWriter, logger *zap.Logger, in I) error {
	md := in.Metadata()
	switch {
	case h.Writer != nil:
		return Call(logger, "FinalizerRemovalExtraOutputFunc", md, func() error { return h.Writer(ctx, rw, logger, in) })
	case h.Reader != nil:
		return Call(logger, "FinalizerRemovalFunc", md, func() error { return h.Reader(ctx, rw, logger, in) })
	}
	return nil
}

// name names the hook set, for errors.
func (h Removal[I]) name() string {
	if h.Writer != nil {
		return "FinalizerRemovalExtraOutputFunc"
	}
	return "FinalizerRemovalFunc"
}

// ReleaseFinalizer removes the finalizer fin (named after the controller)
// from the input in, if in has it and the user's removal hook (when set)
// agrees, and reports whether it wrote the input. An outcome signal
// returned by the hook is a misconfiguration ([Misplaced]).
func ReleaseFinalizer[I typed.ResourceWithDefinition](ctx context.Context, rw controller.ReaderWriter, logger *zap.Logger, fin resource.Finalizer, in I,
	hook Removal[I],
) (removed bool, err error) {
	md := in.Metadata()
	if !md.Finalizers().Has(fin) {
		return false, nil
	}
	if err := hook.call(ctx, rw, logger, in); err != nil {
		return false, fmt.Errorf("remove finalizer %q: %w", fin, Misplaced(fin, hook.name(), err))
	}
	if err := rw.RemoveFinalizer(ctx, md, fin); err != nil {
		return false, fmt.Errorf("remove finalizer %q: %w", fin, err)
	}
	return true, nil
}
