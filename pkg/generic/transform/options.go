package transform

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/xform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// ControllerOption configures a transform [Controller].
type ControllerOption func(*ControllerOptions)

// ControllerOptions are the options of a transform [Controller]; build them
// with the With* functions.
type ControllerOptions struct {
	extraInputs       []controller.Input
	extraOutputs      []controller.Output
	listOptions       []state.ListOption
	outputKind        controller.OutputKind
	inputFinalizers   xform.Switch
	ignoreTearingDown bool
	gate              xform.Gate
	retry             controller.RetryPolicy
}

// DefaultControllerOptions returns the defaults: no extra inputs or outputs,
// no input finalizers, tearing-down inputs lose their outputs, every input
// of the kind is transformed, and the output type is exclusive.
func DefaultControllerOptions() ControllerOptions {
	return ControllerOptions{outputKind: controller.OutputExclusive, inputFinalizers: xform.NewSwitch(false)}
}

// WithExtraInputs declares more inputs (weak or strong), which the
// controller is woken up for and TransformFunc may read. With extra inputs,
// every pass transforms every input.
func WithExtraInputs(inputs ...controller.Input) ControllerOption {
	return func(o *ControllerOptions) { o.extraInputs = append(o.extraInputs, inputs...) }
}

// WithExtraOutputs declares more output types, which
// TransformExtraOutputFunc may write. The controller does not clean them up:
// their lifecycle is the extra function's business.
func WithExtraOutputs(outputs ...controller.Output) ControllerOption {
	return func(o *ControllerOptions) { o.extraOutputs = append(o.extraOutputs, outputs...) }
}

// WithInputFinalizers makes the controller hold a finalizer, named after
// the controller, on every input that has an output: it is added before the
// output is first written, and removed from a tearing-down input only once
// the output is destroyed (and FinalizerRemovalFunc agrees). The primary
// input is then declared strong. Off by default (see the package doc's
// "Input finalizers" for why transform and qtransform differ).
func WithInputFinalizers() ControllerOption {
	return func(o *ControllerOptions) { o.inputFinalizers.Set(true) }
}

// WithoutInputFinalizers keeps the controller's finalizers off its inputs:
// the default of a transform Controller, spelled as in qtransform (whose
// default is the other way round), so that a configuration can say either
// explicitly. Given together with [WithInputFinalizers] it is a
// contradiction, refused at registration (rule G2).
func WithoutInputFinalizers() ControllerOption {
	return func(o *ControllerOptions) { o.inputFinalizers.Set(false) }
}

// WithIgnoreTearingDownInputs treats a tearing-down input like a running
// one: its output is kept and updated, and destroyed only once the input is
// destroyed. Combined with [WithInputFinalizers], the finalizer is removed
// from a tearing-down input as soon as its output is up to date.
func WithIgnoreTearingDownInputs() ControllerOption {
	return func(o *ControllerOptions) { o.ignoreTearingDown = true }
}

// WithIgnoreTeardownUntil ignores an input's teardown until the input
// holds no finalizer but the given ones and the controller's own (rule
// G1, teardown gates, in the package documentation): meanwhile its output
// is kept and computed as for a running input, and the controller's
// finalizer (with [WithInputFinalizers]) stays; then the teardown
// proceeds as usual. At least one finalizer must be named, none empty
// (rule G2).
func WithIgnoreTeardownUntil(finalizers ...resource.Finalizer) ControllerOption {
	return func(o *ControllerOptions) { o.gate.Until(finalizers) }
}

// WithIgnoreTeardownWhile ignores an input's teardown while the input
// holds one of the given finalizers (rule G1, teardown gates): meanwhile
// its output is kept and computed, and the controller's finalizer stays.
// At least one finalizer must be named, none empty, and not the
// controller's own (rule G2). Given with [WithIgnoreTeardownUntil], the
// teardown is ignored while either gate holds.
func WithIgnoreTeardownWhile(finalizers ...resource.Finalizer) ControllerOption {
	return func(o *ControllerOptions) { o.gate.While(finalizers) }
}

// WithInputListOptions restricts the inputs to those the list options
// select (label and ID queries). An input that stops matching loses its
// output (and, with input finalizers, gets its finalizer back). Nil list
// options are skipped.
func WithInputListOptions(opts ...state.ListOption) ControllerOption {
	return func(o *ControllerOptions) {
		for _, opt := range opts {
			if opt != nil {
				o.listOptions = append(o.listOptions, opt)
			}
		}
	}
}

// WithOutputKind sets how the controller owns its output type:
// controller.OutputExclusive (the default) or controller.OutputShared.
func WithOutputKind(kind controller.OutputKind) ControllerOption {
	return func(o *ControllerOptions) { o.outputKind = kind }
}
