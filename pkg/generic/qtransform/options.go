package qtransform

import (
	"context"
	"fmt"

	"github.com/siderolabs/gen/optional"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	pmapper "github.com/resgraph/resgraph/pkg/controller/mapper"
	"github.com/resgraph/resgraph/pkg/generic/internal/xform"
	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// ControllerOption configures a [QController].
type ControllerOption func(*ControllerOptions)

// ControllerOptions are the options of a [QController]; build them with the
// With* functions.
type ControllerOptions struct {
	concurrency       optional.Optional[uint]
	mappedInputs      []mappedInput
	extraOutputs      []controller.Output
	outputKind        controller.OutputKind
	inputFinalizers   xform.Switch
	ignoreTearingDown bool
	gate              xform.Gate
	runHook           func(context.Context, *zap.Logger, controller.QRuntime) error
	shutdownHook      func(*zap.Logger)
	retry             controller.RetryPolicy // see WithRetryPolicy
}

// DefaultControllerOptions returns the defaults: the Runtime's default
// concurrency (1), no extra inputs or outputs, input finalizers,
// tearing-down inputs lose their outputs, and the output type is exclusive.
func DefaultControllerOptions() ControllerOptions {
	return ControllerOptions{outputKind: controller.OutputExclusive, inputFinalizers: xform.NewSwitch(true)}
}

// mapperFunc maps a changed pointer of an extra input to primary inputs.
type mapperFunc func(ctx context.Context, logger *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error)

// mappedInput is an extra input declared by [WithExtraMappedInput].
type mappedInput struct {
	kind resource.Kind
	// inputKind is InputQMapped or InputQMappedDestroyReady.
	inputKind controller.InputKind
	// defErr is the error of the input type's definition, if any.
	defErr error
	mapper mapperFunc
}

// WithConcurrency sets how many inputs are reconciled in parallel (the
// Runtime refuses 0).
func WithConcurrency(n uint) ControllerOption {
	return func(o *ControllerOptions) { o.concurrency = optional.Some(n) }
}

// WithExtraMappedInput declares the resources of type T (in T's default
// namespace) as an extra input: when one changes, mapper returns the
// primary inputs to reconcile again. TransformFunc may read them.
//
// The mapper receives the changed resource as stored (a read-only
// snapshot). When the change destroyed it, the mapper receives its last
// stored version instead — labels, annotations, owner, phase, finalizers,
// version and spec as they were when it was destroyed (rule Q4), however
// the Runtime saw the destruction: live, coalesced with the changes before
// it, or found by a re-list — and [InputDestroyed] reports true on the
// mapper's context. A mapper that maps by a label ("requeue the parent my
// label names") therefore maps the destruction to the same parent as the
// changes before it. (If the state reported the last version without a
// spec, or with another Go type, the mapper gets a T with that metadata and
// an empty spec.) A resource found gone while its destruction is still on
// its way to the controller is not mapped: the destruction's own call maps
// it, with its last version. E is T's element type and is inferred: T must
// be a pointer type, such as a *typed.Resource.
//
// T may be the controller's input type I itself (to reconcile other inputs
// when one changes): the Runtime never runs MapInput and Reconcile of one
// pointer at once (rule Q2), so the mapper and TransformFunc never see the
// same input concurrently.
func WithExtraMappedInput[T interface {
	typed.ResourceWithDefinition
	*E
}, E any](mapper func(context.Context, *zap.Logger, controller.QRuntime, T) ([]resource.Pointer, error)) ControllerOption {
	return WithExtraMappedInputKind(mapper, controller.InputQMapped)
}

// WithExtraMappedDestroyReadyInput declares the resources of type T as an
// extra InputQMappedDestroyReady input: mapper is called only for the
// controller's own resources of T (extra outputs, [WithExtraOutputs])
// that are tearing down with no finalizers left (rule Q4), to requeue the
// primary inputs that finish their teardown. The Runtime refuses it when
// the controller does not output T (rule G2).
func WithExtraMappedDestroyReadyInput[T interface {
	typed.ResourceWithDefinition
	*E
}, E any](mapper func(context.Context, *zap.Logger, controller.QRuntime, T) ([]resource.Pointer, error)) ControllerOption {
	return WithExtraMappedInputKind(mapper, controller.InputQMappedDestroyReady)
}

// WithExtraMappedInputKind is [WithExtraMappedInput] with the input kind
// given: controller.InputQMapped or controller.InputQMappedDestroyReady
// (any other is refused at registration, rule G2).
func WithExtraMappedInputKind[T interface {
	typed.ResourceWithDefinition
	*E
}, E any](mapper func(context.Context, *zap.Logger, controller.QRuntime, T) ([]resource.Pointer, error), kind controller.InputKind) ControllerOption {
	def, defErr := xform.DefinitionOf[T]()
	in := mappedInput{kind: xform.DefinitionKind(def), defErr: defErr, inputKind: kind}
	if defErr == nil && kind != controller.InputQMapped && kind != controller.InputQMappedDestroyReady {
		in.defErr = fmt.Errorf("input kind %v for %s: neither controller.InputQMapped nor controller.InputQMappedDestroyReady", kind, def.Type)
	}
	if mapper == nil && defErr == nil {
		in.defErr = fmt.Errorf("nil mapper for %s", def.Type)
	}
	in.mapper = func(ctx context.Context, logger *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
		var prev []resource.Pointer
		if res, ok := controller.PreviousOf(ptr); ok {
			var err error
			if prev, err = mapper(context.WithValue(ctx, previousKey{}, true), logger, r, asT[T, E](res)); err != nil {
				return nil, err
			}
		}
		if gone, ok := controller.AsDestroyed(ptr); ok {
			cur, err := mapper(context.WithValue(ctx, destroyedKey{}, true), logger, r, asT[T, E](gone.Last()))
			return pmapper.Union(prev, cur), err
		}
		t, ok, err := mappedResource[T](ctx, r, ptr)
		if !ok || err != nil {
			return prev, err
		}
		cur, err := mapper(ctx, logger, r, t)
		return pmapper.Union(prev, cur), err
	}
	return func(o *ControllerOptions) { o.mappedInputs = append(o.mappedInputs, in) }
}

// destroyedKey is the context key [InputDestroyed] reads.
type destroyedKey struct{}

// InputDestroyed reports whether ctx is the context of a
// [WithExtraMappedInput] mapper called for a destroyed input: the mapper's
// resource is then the input's last stored version.
func InputDestroyed(ctx context.Context) bool {
	v, _ := ctx.Value(destroyedKey{}).(bool)
	return v
}

// previousKey is the context key [InputPrevious] reads.
type previousKey struct{}

// InputPrevious reports whether ctx is the context of a
// [WithExtraMappedInput] mapper called with the input's previous version
// (rule Q4, extended): the version before the first change of its
// metadata (labels, annotations, owner, phase, finalizers) since the
// mapper last ran. The mapper is then called a second time with the
// input as it is now (or its last version, when destroyed), and the
// pointers the two calls return are queued, each once.
func InputPrevious(ctx context.Context) bool {
	v, _ := ctx.Value(previousKey{}).(bool)
	return v
}

// asT returns a version of an input that the Runtime kept (a destroyed
// input's last version, an input's previous version) as a T: the state's
// snapshot itself when it is a T, else a T with its metadata and an empty
// spec.
func asT[T interface {
	typed.ResourceWithDefinition
	*E
}, E any](res resource.Resource) T {
	if t, ok := res.(T); ok && t != nil {
		return t
	}
	t := T(new(E))
	*t.Metadata() = res.Metadata().Copy()
	return t
}

// mappedResource reads ptr as a T (a read-only snapshot); ok is false when
// it is gone.
func mappedResource[T resource.Resource](ctx context.Context, r controller.Reader, ptr resource.Pointer) (t T, ok bool, err error) {
	res, err := r.Get(ctx, ptr, readOnly...) // mappers get read-only snapshots (S7)
	switch {
	case err == nil:
		t, err = cast.To[T](res)
		return t, err == nil, err
	case state.IsNotFoundError(err):
		return t, false, nil
	default:
		return t, false, err
	}
}

// WithExtraOutputs declares more output types, which
// TransformExtraOutputFunc may write. The controller does not clean them up.
func WithExtraOutputs(outputs ...controller.Output) ControllerOption {
	return func(o *ControllerOptions) { o.extraOutputs = append(o.extraOutputs, outputs...) }
}

// WithInputFinalizers makes the controller hold a finalizer on every input
// it maps to an output: the default of a QController (see
// [WithoutInputFinalizers] for what it does), spelled as in transform
// (whose default is the other way round), so that a configuration can say
// either explicitly. Given together with [WithoutInputFinalizers] it is a
// contradiction, refused at registration (rule G2).
func WithInputFinalizers() ControllerOption {
	return func(o *ControllerOptions) { o.inputFinalizers.Set(true) }
}

// WithoutInputFinalizers turns the input finalizers off. By default the
// controller holds a finalizer, named after itself, on every input it maps
// to an output: it is added before the output is first written, and when
// the input tears down, the output is torn down and destroyed first, then
// [Settings.FinalizerRemovalFunc] (if set) may veto the removal, and then
// the finalizer goes. Without input finalizers nothing holds the input:
// its output is torn down when the input tears down and destroyed when it
// can be, which may be after the input is gone; FinalizerRemovalFunc is
// then ignored, and [Settings.UnmapMetadataFunc] is required.
func WithoutInputFinalizers() ControllerOption {
	return func(o *ControllerOptions) { o.inputFinalizers.Set(false) }
}

// WithIgnoreTearingDownInputs treats a tearing-down input like a running
// one: its output is kept and updated, and destroyed once the input is
// gone. With input finalizers (the default), the finalizer is removed from
// a tearing-down input as soon as its output is up to date.
func WithIgnoreTearingDownInputs() ControllerOption {
	return func(o *ControllerOptions) { o.ignoreTearingDown = true }
}

// WithIgnoreTeardownUntil ignores an input's teardown until the input
// holds no finalizer but the given ones and the controller's own (rule
// G1, teardown gates, in the package documentation): meanwhile the input
// is transformed as a running one — its output is kept and computed,
// TransformFunc sees the input tearing down — and the controller's
// finalizer stays. Once only those finalizers remain, the teardown
// proceeds as usual: the output is torn down and destroyed, then the
// finalizer goes. At least one finalizer must be named (name the
// controller's own to wait for every other one); an empty one is refused
// (rule G2).
func WithIgnoreTeardownUntil(finalizers ...resource.Finalizer) ControllerOption {
	return func(o *ControllerOptions) { o.gate.Until(finalizers) }
}

// WithIgnoreTeardownWhile ignores an input's teardown while the input
// holds one of the given finalizers (rule G1, teardown gates): meanwhile
// the input is transformed as a running one and the controller's
// finalizer stays; once none of them is left, the teardown proceeds. At
// least one finalizer must be named, none empty, and not the controller's
// own (it stays until the teardown proceeds): refused otherwise (rule
// G2). Given with [WithIgnoreTeardownUntil], the teardown is ignored while
// either gate holds.
func WithIgnoreTeardownWhile(finalizers ...resource.Finalizer) ControllerOption {
	return func(o *ControllerOptions) { o.gate.While(finalizers) }
}

// WithRunHook gives the controller a run hook (controller.QRunHook): the
// Runtime calls hook once the controller starts serving, on a goroutine
// of its own beside the items, until the controller stops; an error is
// logged and hook called again after a backoff. For long-running work
// that is not one input's item: a poller, a task runner's supervision.
func WithRunHook(hook func(ctx context.Context, logger *zap.Logger, r controller.QRuntime) error) ControllerOption {
	return func(o *ControllerOptions) { o.runHook = hook }
}

// WithShutdownHook gives the controller a shutdown hook
// (controller.QShutdownHook): the Runtime calls hook once the controller
// stopped serving (its items and its run hook returned), to stop what it
// started outside them — WithShutdownHook(runner.Stop) for a
// pkg/controller/task Runner.
func WithShutdownHook(hook func(logger *zap.Logger)) ControllerOption {
	return func(o *ControllerOptions) { o.shutdownHook = hook }
}

// WithOutputKind sets how the controller owns its output type:
// controller.OutputExclusive (the default) or controller.OutputShared.
func WithOutputKind(kind controller.OutputKind) ControllerOption {
	return func(o *ControllerOptions) { o.outputKind = kind }
}
