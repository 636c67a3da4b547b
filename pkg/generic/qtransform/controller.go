package qtransform

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/siderolabs/gen/optional"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/xform"
	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/internal/processed"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// Settings configures a [QController].
type Settings[I, O typed.ResourceWithDefinition] struct {
	// Name is the controller's name, the owner of its outputs and the name
	// of its input finalizers.
	Name string
	// MapMetadataFunc returns the output of an input: a new resource of
	// type O, which the function keeps no reference to (the controller
	// changes it, and may store it as the output), in O's default namespace, with
	// at least its ID set. Its spec (and labels and annotations) are the
	// starting point of TransformFunc when the output does not exist yet;
	// for an existing output only its identity is used. Exactly one of
	// MapMetadataFunc and MapMetadataOptionalFunc must be set.
	MapMetadataFunc func(I) O
	// MapMetadataOptionalFunc is MapMetadataFunc for inputs that may have
	// no output: None means the input has none (an existing one is torn
	// down and destroyed, and the controller's finalizer, not needed, is
	// released: rule G1f in the package documentation).
	MapMetadataOptionalFunc func(I) optional.Optional[O]
	// UnmapMetadataFunc returns the input of an output: a resource of type
	// I in I's default namespace, with at least its ID set (the spec is not
	// used). It is the reverse of MapMetadataFunc. Required with
	// [WithoutInputFinalizers], where it is the only way to find the
	// outputs of inputs that went away while no Runtime ran; optional with
	// input finalizers (the default), where it lets the controller clean up,
	// at start, the outputs that no input maps to any more (see the package
	// documentation).
	UnmapMetadataFunc func(O) I
	// TransformFunc fills the output from the input, on a copy of the
	// stored output; the output is written only if the result differs. An
	// error (or a panic) fails the item, which the Runtime retries with
	// backoff (a controller.RequeueError: after its interval). Required.
	TransformFunc func(context.Context, controller.Reader, *zap.Logger, I, O) error
	// TransformExtraOutputFunc, when set, runs after the output is written,
	// with the output as stored, and may write the extra outputs.
	TransformExtraOutputFunc func(context.Context, controller.ReaderWriter, *zap.Logger, I, O) error
	// FinalizerRemovalFunc, when set, is asked before the controller's
	// finalizer is removed from a tearing-down input, after its output is
	// destroyed: an error vetoes the removal for now and fails the item,
	// which the Runtime retries with backoff. It is ignored with
	// [WithoutInputFinalizers].
	FinalizerRemovalFunc func(context.Context, controller.Reader, *zap.Logger, I) error
	// FinalizerRemovalExtraOutputFunc is FinalizerRemovalFunc with a
	// ReaderWriter: besides vetoing the removal (an error), it may write
	// the controller's extra outputs ([WithExtraOutputs]) — a last status,
	// a record of the teardown — before the finalizer goes. Setting both
	// is refused (rule G2). It is ignored with [WithoutInputFinalizers].
	FinalizerRemovalExtraOutputFunc func(context.Context, controller.ReaderWriter, *zap.Logger, I) error
}

// removal returns the finalizer-removal hook of the settings.
func (s *Settings[I, O]) removal() xform.Removal[I] {
	return xform.Removal[I]{Reader: s.FinalizerRemovalFunc, Writer: s.FinalizerRemovalExtraOutputFunc}
}

// QController is a qtransform controller; it implements
// controller.QController. Build it with [NewQController]; a QController
// serves one Runtime.
type QController[I, O typed.ResourceWithDefinition] struct {
	settings Settings[I, O]
	// configErr, when set, is the misconfiguration Validate reports.
	configErr error
	inKind    resource.Kind
	outKind   resource.Kind
	// mappers are the extra mapped inputs' mappers, by kind (immutable).
	mappers map[resource.Kind]mapperFunc
	opts    ControllerOptions

	// loaded is set once inputs was loaded from the existing outputs.
	loaded atomic.Bool
	// loadMu serializes the loading of inputs (see ensureLoaded).
	loadMu sync.Mutex
	// inputs holds, per input, the outputs written for it and whether it
	// was fully processed.
	inputs *inputs

	// ownFinalizers is ownFinalizer alone in a slice (nil when the
	// controller holds no input finalizer), made once for every write's
	// AddFinalizer (see xform.Write.Finalizers).
	ownFinalizers []resource.Finalizer
	// appliers lend each write the function it hands to Modify (see
	// xform.Applier): Reconcile runs on several workers at once.
	appliers sync.Pool
}

// NewQController returns a qtransform controller. Nil options are
// skipped. It never fails: a misconfiguration is reported by
// [QController.Validate], which the Runtime calls at registration (see the
// package documentation).
func NewQController[I, O typed.ResourceWithDefinition](settings Settings[I, O], opts ...ControllerOption) *QController[I, O] {
	c := &QController[I, O]{
		settings: settings,
		opts:     DefaultControllerOptions(),
		mappers:  map[resource.Kind]mapperFunc{},
		inputs:   newInputs(),
	}
	opt.Apply(&c.opts, opts)
	if fin := c.ownFinalizer(); fin != "" {
		c.ownFinalizers = []resource.Finalizer{fin}
	}
	c.appliers.New = func() any { return new(xform.Applier[I, O]) }
	var inErr, outErr error
	c.inKind, c.outKind, inErr, outErr = xform.KindsOf[I, O]()
	c.configErr = c.check(inErr, outErr)
	return c
}

// check returns the controller's misconfiguration, if any.
func (c *QController[I, O]) check(inErr, outErr error) error {
	s := c.settings
	cfg := xform.Config{
		Name: s.Name, InErr: inErr, OutErr: outErr, In: c.inKind, Out: c.outKind,
		Transform: s.TransformFunc != nil, OutputKind: c.opts.outputKind, ExtraOutputs: c.opts.extraOutputs,
		InputFinalizers: c.opts.inputFinalizers,
	}
	return cfg.Check(c.checkMapping, c.checkOptions)
}

// mapping returns the controller's mapping of inputs to outputs.
func (c *QController[I, O]) mapping() xform.Mapping[I, O] {
	return xform.Mapping[I, O]{Plain: c.settings.MapMetadataFunc, Optional: c.settings.MapMetadataOptionalFunc, Out: c.outKind}
}

func (c *QController[I, O]) checkMapping() error {
	if err := c.mapping().Check(); err != nil {
		return err
	}
	switch {
	case c.settings.UnmapMetadataFunc == nil && !c.opts.inputFinalizers.On():
		return xform.Invalid("Settings.UnmapMetadataFunc is nil; it is required with WithoutInputFinalizers")
	case c.settings.FinalizerRemovalFunc != nil && c.settings.FinalizerRemovalExtraOutputFunc != nil:
		return xform.Invalid("Settings.FinalizerRemovalFunc and Settings.FinalizerRemovalExtraOutputFunc are both set: give one (the second may also write extra outputs)")
	}
	return c.opts.gate.Check(c.ownFinalizer(), c.opts.ignoreTearingDown)
}

// checkOptions checks the concurrency and the extra mapped inputs, and
// indexes the mappers.
func (c *QController[I, O]) checkOptions() error {
	if n, ok := c.opts.concurrency.Get(); ok && n == 0 {
		return xform.Invalid("WithConcurrency(0): at least 1 item must be reconciled at a time")
	}
	for _, in := range c.opts.mappedInputs {
		if in.defErr != nil {
			return xform.Invalid("WithExtraMappedInput: %w", in.defErr)
		}
		if in.kind.Type() == c.outKind.Type() {
			return xform.Invalid("WithExtraMappedInput: %s is of the output type, already declared", resource.KindString(in.kind))
		}
		if _, dup := c.mappers[in.kind]; dup {
			return xform.Invalid("WithExtraMappedInput: %s declared twice", resource.KindString(in.kind))
		}
		c.mappers[in.kind] = in.mapper
	}
	return nil
}

// ownFinalizer returns the controller's input finalizer, "" when it
// holds none.
func (c *QController[I, O]) ownFinalizer() resource.Finalizer {
	if c.opts.inputFinalizers.On() {
		return c.settings.Name
	}
	return ""
}

// mapperName names the mapper functions of WithExtraMappedInput in errors.
const mapperName = "WithExtraMappedInput mapper"

// misconfigured is the error of every call of a misconfigured controller
// (one that a Runtime registered without calling Validate).
func (c *QController[I, O]) misconfigured() error {
	return fmt.Errorf("qtransform %q: %w", c.settings.Name, c.configErr)
}

// Validate reports a configuration that cannot work (controller.Validator):
// an error of the invalid class naming the setting at fault. The Runtime
// calls it at registration and refuses a misconfigured controller.
func (c *QController[I, O]) Validate() error { return c.configErr }

// ProcessedInputs is for the Runtime (processed.Source; its type is
// internal): it reports whether an input, at its version, was fully
// processed and nothing woke it since — the controller's own write of
// its finalizer to the input, typically — so that the Runtime does not
// queue that change again (rule Q1, extended): its Reconcile would
// return at once.
func (c *QController[I, O]) ProcessedInputs() processed.Func { return c.inputs.processed }

// RunHook runs the hook of [WithRunHook] (controller.QRunHook); without
// one it returns nil at once.
func (c *QController[I, O]) RunHook(ctx context.Context, logger *zap.Logger, r controller.QRuntime) error {
	if c.opts.runHook == nil || c.configErr != nil {
		return nil
	}
	return c.opts.runHook(ctx, logger, r)
}

// HasRunHook reports whether the controller has a hook of [WithRunHook]
// to run. The Runtime calls RunHook only when it has: a controller built
// without one adds no step to a simulated run (see package sim), where
// each call of a RunHook is a step of its own.
func (c *QController[I, O]) HasRunHook() bool { return c.opts.runHook != nil && c.configErr == nil }

// ShutdownHook calls the hook of [WithShutdownHook]
// (controller.QShutdownHook), if any.
func (c *QController[I, O]) ShutdownHook(logger *zap.Logger) {
	if c.opts.shutdownHook != nil {
		c.opts.shutdownHook(logger)
	}
}

// Name returns Settings.Name.
func (c *QController[I, O]) Name() string { return c.settings.Name }

// Settings declares the input type as the primary input, the output type
// as a mapped destroy-ready input, the extra mapped inputs, the output type
// (exclusive unless [WithOutputKind] says otherwise), the extra outputs,
// and the concurrency.
func (c *QController[I, O]) Settings() controller.QSettings {
	inputs := make([]controller.Input, 0, 2+len(c.opts.mappedInputs))
	inputs = append(inputs,
		controller.Input{Namespace: c.inKind.Namespace(), Type: c.inKind.Type(), Kind: controller.InputQPrimary},
		controller.Input{Namespace: c.outKind.Namespace(), Type: c.outKind.Type(), Kind: controller.InputQMappedDestroyReady},
	)
	for _, in := range c.opts.mappedInputs {
		inputs = append(inputs, controller.Input{Namespace: in.kind.Namespace(), Type: in.kind.Type(), Kind: in.inputKind})
	}
	outputs := make([]controller.Output, 0, 1+len(c.opts.extraOutputs))
	outputs = append(outputs, controller.Output{Type: c.outKind.Type(), Kind: c.opts.outputKind, Namespace: c.outKind.Namespace()})
	outputs = append(outputs, c.opts.extraOutputs...)
	return controller.QSettings{Inputs: inputs, Outputs: outputs, Concurrency: c.opts.concurrency}
}

func (c *QController[I, O]) outPointer(id resource.ID) resource.Pointer {
	return resource.NewPointer(c.outKind.Namespace(), c.outKind.Type(), id)
}

func (c *QController[I, O]) inPointer(id resource.ID) resource.Pointer {
	return resource.NewPointer(c.inKind.Namespace(), c.inKind.Type(), id)
}

// MapInput maps a destroy-ready output back to its input with
// UnmapMetadataFunc, and a changed extra input to primary inputs with its
// mapper.
func (c *QController[I, O]) MapInput(ctx context.Context, logger *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	if c.configErr != nil {
		return nil, c.misconfigured()
	}
	ptrs, err := c.mapInput(ctx, logger, r, ptr)
	for _, p := range ptrs {
		c.inputs.wake(p.ID())
	}
	return ptrs, err
}

// mapInput is MapInput.
func (c *QController[I, O]) mapInput(ctx context.Context, logger *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	kind := resource.KindOf(ptr)
	if kind == c.outKind {
		return c.inputOfOutput(ctx, logger, r, ptr)
	}
	mapper := c.mappers[kind]
	if mapper == nil {
		return nil, state.NewInvalidError(nil, "%s is not a mapped input of the controller", resource.KindString(kind))
	}
	var ptrs []resource.Pointer
	err := xform.Call(logger, mapperName, ptr, func() error {
		var err error
		ptrs, err = mapper(ctx, logger, r, ptr)
		return err
	})
	if state.IsInvalidError(err) {
		// A mapper that cannot work (a bad label term): name the
		// controller, whose configuration holds it.
		return nil, fmt.Errorf("qtransform %q: %w", c.settings.Name, err)
	}
	if err != nil {
		return nil, err
	}
	for _, p := range ptrs {
		if usercode.IsNil(p) || resource.KindOf(p) != c.inKind || p.ID() == "" {
			return nil, state.NewInvalidError(nil, "%s returned %v, not a pointer of the input kind %s",
				mapperName, p, resource.KindString(c.inKind))
		}
	}
	return ptrs, nil
}

// inputOfOutput maps one of the controller's outputs, destroy-ready, to
// its input: the one the index knows, else the one UnmapMetadataFunc
// returns. Without UnmapMetadataFunc, an output that the index does not
// know (written before the Runtime started) is destroyed here, since no
// input claims it, and maps to nothing.
func (c *QController[I, O]) inputOfOutput(ctx context.Context, logger *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	if inID, ok := c.inputs.input(ptr.ID()); ok {
		return []resource.Pointer{c.inPointer(inID)}, nil
	}
	if c.settings.UnmapMetadataFunc != nil {
		return c.unmapOutput(ctx, logger, r, ptr)
	}
	if _, err := xform.DestroyIfReady(ctx, r, ptr); err != nil {
		return nil, fmt.Errorf("destroy output: %w", err)
	}
	return nil, nil
}

// unmapOutput maps one of the controller's outputs to its input with
// UnmapMetadataFunc. An output that is gone (destroyed since it was seen
// tearing down: a controller.DestroyedInput, or not found) maps to
// nothing: what the destroy-ready mapping is for, destroying it, is done.
func (c *QController[I, O]) unmapOutput(ctx context.Context, logger *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	if _, gone := controller.AsDestroyed(ptr); gone {
		return nil, nil
	}
	res, err := r.Get(ctx, ptr, readOnly...)
	switch {
	case state.IsNotFoundError(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if res.Metadata().Owner() != c.settings.Name {
		return nil, nil
	}
	inID, err := c.unmap(logger, res)
	if err != nil {
		return nil, err
	}
	return []resource.Pointer{c.inPointer(inID)}, nil
}

// unmap returns the ID of the input of an output.
func (c *QController[I, O]) unmap(logger *zap.Logger, res resource.Resource) (resource.ID, error) {
	out, err := cast.To[O](res)
	if err != nil {
		return "", err
	}
	md := out.Metadata()
	in, err := xform.CallValue(logger, "UnmapMetadataFunc", md, func() I { return c.settings.UnmapMetadataFunc(out) })
	if err != nil {
		return "", err
	}
	if err := xform.CheckMapped("UnmapMetadataFunc", in, c.inKind); err != nil {
		return "", err
	}
	return in.Metadata().ID(), nil
}
