package transform

import (
	"context"
	"fmt"

	"github.com/siderolabs/gen/optional"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/xform"
	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// Settings configures a transform [Controller].
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
	// no output: None means the input has no output (and an existing one is
	// destroyed).
	MapMetadataOptionalFunc func(I) optional.Optional[O]
	// TransformFunc fills the output from the input. It receives a copy of
	// the stored output (or the mapped one when absent); the output is
	// written only if the result differs. It may read the controller's
	// inputs and outputs through the Reader. An error (or a panic) fails
	// this input for the pass and keeps its output as it was. Required.
	TransformFunc func(context.Context, controller.Reader, *zap.Logger, I, O) error
	// TransformExtraOutputFunc, when set, runs after the output is written,
	// with the output as stored, and may write the extra outputs
	// ([WithExtraOutputs]). An error fails this input for the pass.
	TransformExtraOutputFunc func(context.Context, controller.ReaderWriter, *zap.Logger, I, O) error
	// FinalizerRemovalFunc, when set, is asked before the controller's
	// finalizer is removed from an input: an error vetoes the removal for
	// now and fails the input for the pass, so it is asked again on the
	// retry. It is used only with [WithInputFinalizers], and ignored
	// without.
	FinalizerRemovalFunc func(context.Context, controller.Reader, *zap.Logger, I) error
	// FinalizerRemovalExtraOutputFunc is FinalizerRemovalFunc with a
	// ReaderWriter: besides vetoing the removal (an error), it may write
	// the controller's extra outputs ([WithExtraOutputs]) before the
	// finalizer goes. Setting both is refused (rule G2). It is used only
	// with [WithInputFinalizers].
	FinalizerRemovalExtraOutputFunc func(context.Context, controller.ReaderWriter, *zap.Logger, I) error
}

// removal returns the finalizer-removal hook of the settings.
func (s *Settings[I, O]) removal() xform.Removal[I] {
	return xform.Removal[I]{Reader: s.FinalizerRemovalFunc, Writer: s.FinalizerRemovalExtraOutputFunc}
}

// Controller is a transform controller; it implements controller.Controller.
// Build it with [NewController]. A Controller runs in one Runtime at a time.
type Controller[I, O typed.ResourceWithDefinition] struct {
	settings Settings[I, O]
	// configErr, when set, is the misconfiguration Validate reports.
	configErr error
	inKind    resource.Kind
	outKind   resource.Kind
	// filter selects the inputs when list options are filtered in the
	// controller rather than by List (see listInputs).
	filter state.ListOptions
	opts   ControllerOptions
}

// NewController returns a transform controller. Nil options are skipped.
// It never fails: a misconfiguration is reported by [Controller.Validate],
// which the Runtime calls at registration (see the package documentation).
func NewController[I, O typed.ResourceWithDefinition](settings Settings[I, O], opts ...ControllerOption) *Controller[I, O] {
	c := &Controller[I, O]{settings: settings, opts: DefaultControllerOptions()}
	opt.Apply(&c.opts, opts)
	opt.Apply(&c.filter, c.opts.listOptions)
	var inErr, outErr error
	c.inKind, c.outKind, inErr, outErr = xform.KindsOf[I, O]()
	c.configErr = c.check(inErr, outErr)
	return c
}

// check returns the controller's misconfiguration, if any.
func (c *Controller[I, O]) check(inErr, outErr error) error {
	s := c.settings
	cfg := xform.Config{
		Name: s.Name, InErr: inErr, OutErr: outErr, In: c.inKind, Out: c.outKind,
		Transform: s.TransformFunc != nil, OutputKind: c.opts.outputKind, ExtraOutputs: c.opts.extraOutputs,
		InputFinalizers: c.opts.inputFinalizers,
	}
	return cfg.Check(c.checkMapping, c.checkInputOptions)
}

// checkInputOptions checks the options about inputs: the extra inputs,
// then the input list options.
func (c *Controller[I, O]) checkInputOptions() error {
	if err := c.checkExtraInputs(); err != nil {
		return err
	}
	return c.checkListOptions()
}

// checkListOptions refuses input list options that no List can apply (a
// label query with an unusable term, rule S15 of pkg/state).
func (c *Controller[I, O]) checkListOptions() error {
	if err := c.filter.LabelQueries.Validate(); err != nil {
		return xform.Invalid("WithInputListOptions: %v", err)
	}
	return nil
}

// mapping returns the controller's mapping of inputs to outputs.
func (c *Controller[I, O]) mapping() xform.Mapping[I, O] {
	return xform.Mapping[I, O]{Plain: c.settings.MapMetadataFunc, Optional: c.settings.MapMetadataOptionalFunc, Out: c.outKind}
}

func (c *Controller[I, O]) checkMapping() error {
	s := c.settings
	if err := c.mapping().Check(); err != nil {
		return err
	}
	switch {
	case s.FinalizerRemovalFunc != nil && s.FinalizerRemovalExtraOutputFunc != nil:
		return xform.Invalid("Settings.FinalizerRemovalFunc and Settings.FinalizerRemovalExtraOutputFunc are both set: give one (the second may also write extra outputs)")
	}
	return c.opts.gate.Check(c.ownFinalizer(), c.opts.ignoreTearingDown)
}

// ownFinalizer returns the controller's input finalizer, "" when it
// holds none.
func (c *Controller[I, O]) ownFinalizer() resource.Finalizer {
	if c.opts.inputFinalizers.On() {
		return c.settings.Name
	}
	return ""
}

// gated reports whether a teardown gate holds the teardown of the input
// md.
func (c *Controller[I, O]) gated(md *resource.Metadata) bool {
	return md.Phase() == resource.PhaseTearingDown && c.opts.gate.Set() && c.opts.gate.Holds(*md.Finalizers(), c.ownFinalizer())
}

func (c *Controller[I, O]) checkExtraInputs() error {
	for _, in := range c.opts.extraInputs {
		name := in.Type + "(" + in.Namespace + ")"
		switch {
		case in.Kind != controller.InputWeak && in.Kind != controller.InputStrong:
			return xform.Invalid("WithExtraInputs: %s has the input kind %v; only controller.InputWeak and controller.InputStrong are allowed", name, in.Kind)
		case in.Type == c.inKind.Type() && in.Namespace == c.inKind.Namespace():
			return xform.Invalid("WithExtraInputs: %s is the input kind, already declared", name)
		case in.Type == c.outKind.Type():
			return xform.Invalid("WithExtraInputs: %s is of the output type, already declared", name)
		}
	}
	return nil
}

// Validate reports a configuration that cannot work (controller.Validator):
// an error of the invalid class naming the setting at fault. The Runtime
// calls it at registration and refuses a misconfigured controller.
func (c *Controller[I, O]) Validate() error { return c.configErr }

// Name returns Settings.Name.
func (c *Controller[I, O]) Name() string { return c.settings.Name }

// Inputs returns the input type in its default namespace (strong with input
// finalizers, weak otherwise), the output type as a destroy-ready input (to
// finish destroying torn-down outputs), and the extra inputs.
func (c *Controller[I, O]) Inputs() []controller.Input {
	primary := controller.InputWeak
	if c.opts.inputFinalizers.On() {
		primary = controller.InputStrong
	}
	inputs := make([]controller.Input, 0, 2+len(c.opts.extraInputs))
	inputs = append(inputs,
		controller.Input{Namespace: c.inKind.Namespace(), Type: c.inKind.Type(), Kind: primary},
		controller.Input{Namespace: c.outKind.Namespace(), Type: c.outKind.Type(), Kind: controller.InputDestroyReady},
	)
	return append(inputs, c.opts.extraInputs...)
}

// Outputs returns the output type (exclusive unless [WithOutputKind] says
// otherwise) and the extra outputs.
func (c *Controller[I, O]) Outputs() []controller.Output {
	outputs := make([]controller.Output, 0, 1+len(c.opts.extraOutputs))
	outputs = append(outputs, controller.Output{Type: c.outKind.Type(), Kind: c.opts.outputKind, Namespace: c.outKind.Namespace()})
	return append(outputs, c.opts.extraOutputs...)
}

// Run reconciles on every wake-up until ctx is canceled. An input that fails
// (or an output that cannot be destroyed) is retried on its own schedule,
// with exponential backoff, without failing Run; Run fails, and the
// Runtime restarts it with backoff, only when the controller as a whole
// cannot work: listing its inputs or outputs fails. A misconfigured
// controller (one that a Runtime registered without calling Validate)
// fails at once with Validate's error.
func (c *Controller[I, O]) Run(ctx context.Context, r controller.Runtime, logger *zap.Logger) error {
	if c.configErr != nil {
		return fmt.Errorf("transform %q: %w", c.settings.Name, c.configErr)
	}
	rs := newRunState(ctx)
	retryLog := xform.RetryLogger(logger)
	return xform.RetryLoop(ctx, r, rs.retries.Next, func(event bool) error {
		return c.reconcile(ctx, r, logger, retryLog, rs, event)
	})
}
