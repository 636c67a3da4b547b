package qtransform

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/xform"
	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// readOnly is the option of the controller's reads, the shared snapshots
// (rule S7), built once: a read's options are otherwise an allocation
// (the variadic slice, which the reader keeps beyond the call's frame).
// Readers only read it.
var readOnly = []state.GetOption{state.WithReadOnlyGet()}

// Reconcile reconciles the input ptr (see the package documentation). Its
// error says what failed (a user function by name, or the state operation
// and the resource it was about); it does not repeat ptr or the
// controller's name, which the Runtime reports with it.
func (c *QController[I, O]) Reconcile(ctx context.Context, logger *zap.Logger, r controller.QRuntime, ptr resource.Pointer) error {
	if c.configErr != nil {
		return c.misconfigured()
	}
	if resource.KindOf(ptr) != c.inKind {
		return state.NewInvalidError(nil, "not of the input kind %s", resource.KindString(c.inKind))
	}
	if err := c.ensureLoaded(ctx, logger, r); err != nil {
		return err
	}
	res, err := r.Get(ctx, ptr, readOnly...) // handed on read-only (S7)
	switch {
	case state.IsNotFoundError(err):
		c.inputs.gone(ptr.ID())
		_, err = c.destroyOutputs(ctx, r, ptr.ID())
	case err != nil:
	default:
		var in I
		if in, err = cast.To[I](res); err != nil {
			break
		}
		md := in.Metadata()
		switch {
		case md.Phase() == resource.PhaseRunning:
			err = c.running(ctx, logger, r, in)
		case c.opts.ignoreTearingDown || c.gated(md):
			_, _, err = c.active(ctx, logger, r, in, 0)
		default:
			err = c.release(ctx, logger, r, in)
		}
	}
	return err
}

// gated reports whether a teardown gate holds the teardown of the input
// md (which is tearing down).
func (c *QController[I, O]) gated(md *resource.Metadata) bool {
	return c.opts.gate.Set() && c.opts.gate.Holds(*md.Finalizers(), c.ownFinalizer())
}

// running brings the output of a running input up to date, unless the
// input was fully processed as it is and nothing woke it up since (see
// processed).
func (c *QController[I, O]) running(ctx context.Context, logger *zap.Logger, r controller.QRuntime, in I) error {
	md := in.Metadata()
	created := md.Created().UnixNano()
	gen, skip, at := c.inputs.start(md.ID(), created, md.Version())
	if skip {
		return nil
	}
	version, at, err := c.active(ctx, logger, r, in, at)
	if err == nil && !version.Equal(resource.VersionUndefined) {
		c.inputs.finish(at, md.ID(), created, version, gen)
	}
	return err
}

// active brings the output of a running input (or a tearing-down one,
// when those are ignored) up to date. It returns the input's version once
// fully processed (the next one when it added its finalizer: its own write
// need not be processed again), or undefined when the input waits for an
// earlier output to go. at is where the Reconcile found the input's record
// (0: unknown); active returns where it is now.
func (c *QController[I, O]) active(ctx context.Context, logger *zap.Logger, r controller.QRuntime, in I, at ref) (resource.Version, ref, error) {
	md := in.Metadata()
	out, ok, err := c.mapOutput(logger, in)
	switch {
	case err != nil:
		return resource.VersionUndefined, at, err
	case !ok:
		v, err := c.unmapped(ctx, logger, r, in)
		return v, at, err
	}
	outID := out.Metadata().ID()
	known, retired, at := c.inputs.claim(at, md.ID(), outID)
	for _, id := range retired {
		// Outputs with finalizers come back through the destroy-ready input.
		if _, err := c.destroyOutput(ctx, r, md.ID(), id); err != nil {
			return resource.VersionUndefined, at, err
		}
	}
	v, err := c.write(ctx, logger, r, in, out, known)
	return v, at, err
}

// write writes the output out of the running input in (or a tearing-down
// one, when those are ignored), known when the input had an output, and
// returns what active returns.
func (c *QController[I, O]) write(ctx context.Context, logger *zap.Logger, r controller.QRuntime, in I, out O, known bool) (resource.Version, error) {
	md := in.Metadata()
	tearingDown := md.Phase() == resource.PhaseTearingDown
	applier := c.appliers.Get().(*xform.Applier[I, O])
	w := xform.Write[I, O]{
		In: in, Out: out, Absent: !known, Name: c.settings.Name, Finalizer: c.ownFinalizer(), Finalizers: c.ownFinalizers,
		Transform: c.settings.TransformFunc, Extra: c.settings.TransformExtraOutputFunc, FinalizerRemoval: c.settings.removal(),
		Gated: tearingDown && !c.opts.ignoreTearingDown, Applier: applier,
	}
	done, err := w.Run(ctx, r, logger)
	c.appliers.Put(applier) // it keeps nothing of the write
	if err == nil && done.DestroyOutput {
		err = c.destroySignalled(ctx, logger, r, in, w.Gated)
		if err != nil || c.inputs.has(md.ID()) {
			// Output with finalizers: its destroy-ready event brings the
			// input back.
			return resource.VersionUndefined, err
		}
	}
	switch {
	case err != nil, done.Waiting:
		// A waiting input comes back through the destroy-ready input once
		// the old output has no finalizers.
		return resource.VersionUndefined, err
	case md.Phase() == resource.PhaseTearingDown:
		// Kept while tearing down (WithIgnoreTearingDownInputs): not
		// recorded as processed.
		return resource.VersionUndefined, nil
	case done.FinalizerAdded:
		// One write, unless it met a conflict: then the version differs,
		// and the input is processed again, which is harmless.
		return md.Version().Next(), nil
	default:
		return md.Version(), nil
	}
}

// destroySignalled destroys the outputs of the input in, whose
// TransformFunc signalled generic.ErrDestroyOutput, as if the input were
// gone; a tearing-down input whose teardown is not gated (only with
// WithIgnoreTearingDownInputs) then gives its finalizer back.
func (c *QController[I, O]) destroySignalled(ctx context.Context, logger *zap.Logger, r controller.QRuntime, in I, gated bool) error {
	md := in.Metadata()
	gone, err := c.destroyOutputs(ctx, r, md.ID())
	if err != nil || !gone || md.Phase() == resource.PhaseRunning || gated {
		return err
	}
	return c.releaseFinalizer(ctx, logger, r, in)
}

// mapOutput maps an input to its output with MapMetadataFunc (or
// MapMetadataOptionalFunc: ok is false for None).
func (c *QController[I, O]) mapOutput(logger *zap.Logger, in I) (out O, ok bool, err error) {
	return c.mapping().Map(logger, in)
}

// unmapped handles an input that MapMetadataOptionalFunc maps to no
// output: its outputs are destroyed (as if it were gone; those with
// finalizers come back through the destroy-ready input), then the
// controller's finalizer, which nothing needs any more, is released
// (FinalizerRemovalFunc agreeing). It returns the input's version once
// done, as active does.
func (c *QController[I, O]) unmapped(ctx context.Context, logger *zap.Logger, r controller.QRuntime, in I) (resource.Version, error) {
	md := in.Metadata()
	gone, err := c.destroyOutputs(ctx, r, md.ID())
	if err != nil || !gone {
		return resource.VersionUndefined, err
	}
	removed := false
	if c.opts.inputFinalizers.On() {
		if removed, err = xform.ReleaseFinalizer(ctx, r, logger, c.settings.Name, in, c.settings.removal()); err != nil {
			return resource.VersionUndefined, err
		}
	}
	switch {
	case md.Phase() == resource.PhaseTearingDown:
		return resource.VersionUndefined, nil
	case removed:
		return md.Version().Next(), nil
	}
	return md.Version(), nil
}

// release destroys the outputs of a tearing-down input, then gives its
// finalizer back. An input that holds the finalizer but that the index
// does not know (the controller started after the input's output was
// written, without UnmapMetadataFunc to load the index) has the output it
// maps to, which the index then learns.
func (c *QController[I, O]) release(ctx context.Context, logger *zap.Logger, r controller.QRuntime, in I) error {
	inID := in.Metadata().ID()
	var buf [1]resource.ID // an input's one output, unless it retired others
	ids := c.inputs.all(inID, buf[:0])
	if len(ids) == 0 && c.opts.inputFinalizers.On() && in.Metadata().Finalizers().Has(c.settings.Name) {
		out, ok, err := c.mapOutput(logger, in)
		if err != nil {
			return err
		}
		if ok {
			c.inputs.claim(0, inID, out.Metadata().ID())
			ids = c.inputs.all(inID, buf[:0])
		}
	}
	gone, err := c.destroyAll(ctx, r, inID, ids)
	if err != nil || !gone {
		return err
	}
	return c.releaseFinalizer(ctx, logger, r, in)
}

// releaseFinalizer removes the controller's finalizer from the input, if
// it holds one and FinalizerRemovalFunc agrees.
func (c *QController[I, O]) releaseFinalizer(ctx context.Context, logger *zap.Logger, r controller.QRuntime, in I) error {
	if !c.opts.inputFinalizers.On() {
		return nil
	}
	_, err := xform.ReleaseFinalizer(ctx, r, logger, c.settings.Name, in, c.settings.removal())
	return err
}

// destroyOutputs tears down and destroys every output of the input inID
// that the index knows and reports whether they are all gone.
func (c *QController[I, O]) destroyOutputs(ctx context.Context, r controller.QRuntime, inID resource.ID) (bool, error) {
	var buf [1]resource.ID
	return c.destroyAll(ctx, r, inID, c.inputs.all(inID, buf[:0]))
}

// destroyAll tears down and destroys the outputs ids of the input inID and
// reports whether they are all gone; those with finalizers are left
// tearing down, and come back through the destroy-ready input.
func (c *QController[I, O]) destroyAll(ctx context.Context, r controller.QRuntime, inID resource.ID, ids []resource.ID) (bool, error) {
	all := true
	for _, id := range ids {
		gone, err := c.destroyOutput(ctx, r, inID, id)
		if err != nil {
			return false, err
		}
		all = all && gone
	}
	return all, nil
}

// destroyOutput tears down and destroys the output outID of the input inID
// and forgets it once it is gone.
func (c *QController[I, O]) destroyOutput(ctx context.Context, r controller.QRuntime, inID, outID resource.ID) (bool, error) {
	ptr := c.outPointer(outID)
	gone, err := xform.RemoveOutput(ctx, r, ptr)
	if err != nil {
		return false, xform.Named("destroy output", ptr, err)
	}
	if gone {
		c.inputs.forget(inID, outID)
	}
	return gone, nil
}

// ensureLoaded loads the index of outputs by input from the controller's
// existing outputs on first use, and destroys the outputs whose input no
// longer exists (they were left by a previous Runtime). An output that
// UnmapMetadataFunc cannot map is logged and left alone, so that it fails
// no input. Calls wait for the load; a failed load is retried by the next
// call.
func (c *QController[I, O]) ensureLoaded(ctx context.Context, logger *zap.Logger, r controller.QRuntime) error {
	if c.loaded.Load() {
		return nil
	}
	if c.settings.UnmapMetadataFunc == nil {
		// Nothing maps an output back: the index fills as the inputs are
		// reconciled (every existing input is, at start).
		c.loaded.Store(true)
		return nil
	}
	c.loadMu.Lock()
	defer c.loadMu.Unlock()
	if c.loaded.Load() {
		return nil
	}
	list, err := r.List(ctx, c.outKind, state.WithReadOnlyList())
	if err != nil {
		return fmt.Errorf("load outputs: %w", err)
	}
	found := map[resource.ID][]resource.ID{}
	for _, res := range list.Items {
		if res.Metadata().Owner() != c.settings.Name {
			continue
		}
		inID, err := c.unmap(logger, res)
		if err != nil {
			// One bad output must not stop every input: it is left alone,
			// and its own destroy-ready event reports the error again.
			logger.Error("cannot map an existing output to its input; leaving it alone",
				zap.String("output", resource.PointerString(res.Metadata())), zap.Error(err))
			continue
		}
		found[inID] = append(found[inID], res.Metadata().ID())
	}
	c.inputs.load(found)
	for _, inID := range slices.Sorted(maps.Keys(found)) { // in order: the same outputs, the same writes
		_, err := r.Get(ctx, c.inPointer(inID), readOnly...)
		switch {
		case state.IsNotFoundError(err):
			if _, err := c.destroyOutputs(ctx, r, inID); err != nil {
				return fmt.Errorf("load outputs: destroy the outputs of %s: %w", resource.PointerString(c.inPointer(inID)), err)
			}
		case err != nil:
			return fmt.Errorf("load outputs: %w", err)
		}
	}
	c.loaded.Store(true)
	return nil
}
