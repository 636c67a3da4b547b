package xform

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// Write is the write sequence of the transform controllers for one input
// whose output is to be brought up to date: add the controller's input
// finalizer, write the output (TransformFunc), run TransformExtraOutputFunc
// on the output as stored, and, for a tearing-down input whose output is
// kept (WithIgnoreTearingDownInputs), release the finalizer.
type Write[I, O typed.ResourceWithDefinition] struct {
	// In is the input, Out its mapped output (the caller's own value).
	In  I
	Out O
	// Finalizer is the controller's input finalizer; empty when the
	// controller holds none (input finalizers off).
	Finalizer resource.Finalizer
	// Finalizers, when set, is Finalizer alone in a slice the caller made
	// once, which the write passes to AddFinalizer (otherwise a slice is
	// made per write: an allocation).
	Finalizers []resource.Finalizer
	// Absent says the output most likely does not exist (the controller
	// never wrote it): the output is then filled in place and created,
	// falling back to Modify if it exists after all (see writeOutput).
	Absent bool
	// The user's functions: Transform is required, Extra and
	// FinalizerRemoval may be unset.
	Transform        func(context.Context, controller.Reader, *zap.Logger, I, O) error
	Extra            func(context.Context, controller.ReaderWriter, *zap.Logger, I, O) error
	FinalizerRemoval Removal[I]
	// Applier, when set, is the function the write hands to Modify (see
	// [Applier]); otherwise one is made for the write.
	Applier *Applier[I, O]
	// Gated: the input is tearing down but a teardown gate holds (see
	// [Gate]): the output is written as for a running input, and the
	// finalizer is kept.
	Gated bool
	// Name names the controller in the error of an outcome signal
	// returned where it cannot be honoured ([Misplaced]).
	Name string
}

// Written says what a [Write] did.
type Written struct {
	// FinalizerAdded: the input finalizer was added with one write, so the
	// input's version is now the next one (set even when a later step
	// failed: that write happened).
	FinalizerAdded bool
	// Waiting: a previous incarnation of the output is still tearing down
	// with finalizers; nothing more was written, and that output's
	// destroy-ready event brings the controller back.
	Waiting bool
	// FinalizerRemoved: the input is tearing down and its finalizer was
	// released with one write.
	FinalizerRemoved bool
	// Skipped: TransformFunc signalled generic.ErrSkip; nothing was
	// written (the input finalizer aside).
	Skipped bool
	// DestroyOutput: TransformFunc signalled generic.ErrDestroyOutput;
	// nothing was written, and the caller destroys the output.
	DestroyOutput bool
}

// Run runs the sequence with rw, logging on logger. A failed user function
// comes back as a *FuncError or *generic.PanicError, a failed state
// operation named after what failed ("add finalizer", "write output
// <pointer>", "remove finalizer").
func (w *Write[I, O]) Run(ctx context.Context, rw controller.ReaderWriter, logger *zap.Logger) (done Written, err error) {
	md := w.In.Metadata()
	tearingDown := md.Phase() == resource.PhaseTearingDown // only when those are ignored
	if w.Finalizer != "" && !tearingDown && !md.Finalizers().Has(w.Finalizer) {
		fins := w.Finalizers
		if len(fins) != 1 || fins[0] != w.Finalizer {
			fins = []resource.Finalizer{w.Finalizer}
		}
		if err := rw.AddFinalizer(ctx, md, fins...); err != nil {
			return done, fmt.Errorf("add finalizer: %w", err)
		}
		done.FinalizerAdded = true
	}
	written, waiting, err := w.output(ctx, rw, logger)
	switch SignalOf(err) {
	case SignalSkip:
		done.Skipped, err = true, nil
	case SignalDestroyOutput:
		done.DestroyOutput = true
		return done, nil
	}
	if err != nil {
		return done, err
	}
	if waiting {
		logger.Debug("output of a previous input is still tearing down", zap.String("output", resource.PointerString(w.Out.Metadata())))
		done.Waiting = true
		return done, nil
	}
	if w.Extra != nil && !done.Skipped {
		if err := w.extra(ctx, rw, logger, written); err != nil {
			return done, Misplaced(w.Name, "TransformExtraOutputFunc", err)
		}
	}
	if tearingDown && w.Finalizer != "" && !w.Gated {
		done.FinalizerRemoved, err = ReleaseFinalizer(ctx, rw, logger, w.Finalizer, w.In, w.FinalizerRemoval)
	}
	return done, err
}

// output writes the output with Transform (see writeOutput); the output as
// stored comes back when Extra needs it.
func (w *Write[I, O]) output(ctx context.Context, rw controller.ReaderWriter, logger *zap.Logger) (written resource.Resource, waiting bool, err error) {
	var fn func(resource.Resource) error
	if a := w.Applier; a != nil {
		a.set(w.In, w.Transform, ctx, rw, logger)
		defer a.set(*new(I), nil, nil, nil, nil) // keeps nothing of the write
		fn = a.fn
	} else {
		// The function escapes (into Modify): it captures copies, not w,
		// which stays on the caller's stack (one allocation per write, not
		// two).
		in, transform := w.In, w.Transform
		fn = func(res resource.Resource) error { return applyTransform(ctx, rw, logger, in, transform, res) }
	}
	out := w.Out
	written, waiting, err = writeOutput(ctx, rw, out, fn, outputWrite{withResult: w.Extra != nil, absent: w.Absent})
	if err != nil && !IsUserFailure(err) {
		// A failed state operation, not fn: say it was the write.
		err = Named("write output", out.Metadata(), err)
	}
	return written, waiting, err
}

// applyTransform applies transform, the input in's, to res, its output.
func applyTransform[I, O typed.ResourceWithDefinition](ctx context.Context, rw controller.ReaderWriter, logger *zap.Logger, in I, transform func(context.Context, controller.Reader, *zap.Logger, I, O) error, res resource.Resource) error {
	o, err := cast.To[O](res)
	if err != nil {
		return err
	}
	return Call(logger, "TransformFunc", in.Metadata(), func() error { return transform(ctx, rw, logger, in, o) })
}

// Applier is the function that a [Write] hands to the state's Modify to
// apply its Transform, made once for many writes: a caller that runs its
// Writes one after the other (one goroutine) keeps one Applier and sets
// it in each, instead of a function made per write (an allocation). The
// zero value is ready to use; it keeps nothing of a write once the write
// returned.
type Applier[I, O typed.ResourceWithDefinition] struct {
	in        I
	transform func(context.Context, controller.Reader, *zap.Logger, I, O) error
	ctx       context.Context
	rw        controller.ReaderWriter
	logger    *zap.Logger
	// fn is a.apply, bound once.
	fn func(resource.Resource) error
}

// set makes the Applier apply transform, in's, with ctx, rw and logger.
func (a *Applier[I, O]) set(in I, transform func(context.Context, controller.Reader, *zap.Logger, I, O) error, ctx context.Context, rw controller.ReaderWriter, logger *zap.Logger) {
	if a.fn == nil {
		a.fn = a.apply
	}
	a.in, a.transform, a.ctx, a.rw, a.logger = in, transform, ctx, rw, logger
}

func (a *Applier[I, O]) apply(res resource.Resource) error {
	return applyTransform(a.ctx, a.rw, a.logger, a.in, a.transform, res)
}

// extra runs Extra with written, the output as stored.
func (w *Write[I, O]) extra(ctx context.Context, rw controller.ReaderWriter, logger *zap.Logger, written resource.Resource) error {
	o, err := cast.To[O](written)
	if err != nil {
		return err
	}
	return Call(logger, "TransformExtraOutputFunc", w.In.Metadata(), func() error { return w.Extra(ctx, rw, logger, w.In, o) })
}
