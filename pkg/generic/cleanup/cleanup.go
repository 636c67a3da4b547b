package cleanup

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/xform"
	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// Settings configures a cleanup [Controller]. Exactly one of
// DependentsQuery and ListDependents must be set.
type Settings[I, D typed.ResourceWithDefinition] struct {
	// Name is the controller's name and the name of its finalizer.
	Name string
	// DependentsQuery returns the label query that selects the dependents
	// of an input among the resources of type D.
	DependentsQuery func(in I) []resource.LabelQueryOption
	// ListDependents returns the dependents of an input that still exist.
	// It may read the input and dependent types through the Reader.
	ListDependents func(ctx context.Context, r controller.Reader, logger *zap.Logger, in I) ([]D, error)
}

// Action is what the controller does to the dependents of a tearing-down
// input.
type Action int

const (
	// ActionWait waits for the dependents to go (the default).
	ActionWait Action = iota
	// ActionTeardown tears the dependents down and waits for them to go.
	ActionTeardown
	// ActionDestroy tears the dependents down and destroys those without
	// finalizers, waiting for the others.
	ActionDestroy
)

// Option configures a cleanup [Controller].
type Option func(*Options)

// Options are the options of a cleanup [Controller].
type Options struct {
	action Action
	retry  controller.RetryPolicy
	extras []extraDependents
}

// extraDependents is a further dependent type ([WithExtraDependents]).
type extraDependents struct {
	kind   resource.Kind
	defErr error
	// in is the input type the query takes.
	in    reflect.Type
	query func(in resource.Resource) []resource.LabelQueryOption
}

// WithExtraDependents adds a dependent type D: the input's dependents are
// then the resources of type D (in D's default namespace) that query
// selects as well as those of the controller's own dependent type, and
// its finalizer goes once they are all gone; [WithDependentAction] acts
// on them too (D is then a shared output as well). D is given, the input
// type I is inferred from query and must be the controller's:
//
//	cleanup.WithExtraDependents[*Machine](func(c *Cluster) []resource.LabelQueryOption {
//		return []resource.LabelQueryOption{resource.LabelEqual("cluster", c.Metadata().ID())}
//	})
//
// A nil query, a D whose definition is invalid, of the input or the
// dependent type or given twice, and an I other than the controller's
// are refused at registration (rule G2).
func WithExtraDependents[D, I typed.ResourceWithDefinition](query func(in I) []resource.LabelQueryOption) Option {
	def, err := xform.DefinitionOf[D]()
	if query == nil && err == nil {
		err = fmt.Errorf("nil query for %s", def.Type)
	}
	x := extraDependents{kind: xform.DefinitionKind(def), defErr: err, in: reflect.TypeFor[I](),
		query: func(in resource.Resource) []resource.LabelQueryOption { return query(in.(I)) }}
	return func(o *Options) { o.extras = append(o.extras, x) }
}

// WithDependentAction sets what the controller does to the dependents of a
// tearing-down input (default [ActionWait]).
func WithDependentAction(a Action) Option {
	return func(o *Options) { o.action = a }
}

// Controller is a cleanup controller; it implements controller.Controller.
type Controller[I, D typed.ResourceWithDefinition] struct {
	settings  Settings[I, D]
	configErr error
	inKind    resource.Kind
	depKind   resource.Kind
	opts      Options
}

// NewController returns a cleanup controller. Nil options are skipped. It
// never fails: a misconfiguration is reported by [Controller.Validate],
// which the Runtime calls at registration.
func NewController[I, D typed.ResourceWithDefinition](settings Settings[I, D], opts ...Option) *Controller[I, D] {
	c := &Controller[I, D]{settings: settings}
	opt.Apply(&c.opts, opts)
	var inErr, depErr error
	c.inKind, c.depKind, inErr, depErr = xform.KindsOf[I, D]()
	c.configErr = c.check(inErr, depErr)
	return c
}

// check returns the controller's misconfiguration, if any.
func (c *Controller[I, D]) check(inErr, depErr error) error {
	s := c.settings
	switch {
	case s.Name == "":
		return xform.Invalid("Settings.Name is empty")
	case inErr != nil:
		return xform.Invalid("input type: %w", inErr)
	case depErr != nil:
		return xform.Invalid("dependent type: %w", depErr)
	case c.inKind.Type() == c.depKind.Type():
		return xform.Invalid("input and dependents have the same type %q", c.inKind.Type())
	case s.DependentsQuery == nil && s.ListDependents == nil:
		return xform.Invalid("Settings.DependentsQuery and Settings.ListDependents are both nil: exactly one must be set")
	case s.DependentsQuery != nil && s.ListDependents != nil:
		return xform.Invalid("Settings.DependentsQuery and Settings.ListDependents are both set: exactly one must be")
	case c.opts.action < ActionWait || c.opts.action > ActionDestroy:
		return xform.Invalid("WithDependentAction(%d): not ActionWait, ActionTeardown or ActionDestroy", c.opts.action)
	}
	return c.checkExtras()
}

// checkExtras checks the dependent types of WithExtraDependents.
func (c *Controller[I, D]) checkExtras() error {
	seen := map[resource.Type]bool{c.inKind.Type(): true, c.depKind.Type(): true}
	for _, x := range c.opts.extras {
		switch {
		case x.defErr != nil:
			return xform.Invalid("WithExtraDependents: %w", x.defErr)
		case x.in != reflect.TypeFor[I]():
			return xform.Invalid("WithExtraDependents for %s: its query takes a %v, the controller's inputs are %v", resource.KindString(x.kind), x.in, reflect.TypeFor[I]())
		case seen[x.kind.Type()]:
			return xform.Invalid("WithExtraDependents: %s is the input type, the dependent type, or given twice", resource.KindString(x.kind))
		}
		seen[x.kind.Type()] = true
	}
	return nil
}

// Validate reports a configuration that cannot work (controller.Validator):
// an error of the invalid class naming the setting at fault. The Runtime
// calls it at registration and refuses a misconfigured controller.
func (c *Controller[I, D]) Validate() error { return c.configErr }

// Name returns Settings.Name.
func (c *Controller[I, D]) Name() string { return c.settings.Name }

// Inputs returns the input type as a strong input and the dependent type
// as a weak one.
func (c *Controller[I, D]) Inputs() []controller.Input {
	inputs := []controller.Input{
		{Namespace: c.inKind.Namespace(), Type: c.inKind.Type(), Kind: controller.InputStrong},
		{Namespace: c.depKind.Namespace(), Type: c.depKind.Type(), Kind: controller.InputWeak},
	}
	for _, x := range c.opts.extras {
		inputs = append(inputs, controller.Input{Namespace: x.kind.Namespace(), Type: x.kind.Type(), Kind: controller.InputWeak})
	}
	return inputs
}

// Outputs returns the dependent type as a shared output when the
// controller acts on dependents, and nothing otherwise.
func (c *Controller[I, D]) Outputs() []controller.Output {
	if c.opts.action == ActionWait {
		return nil
	}
	outputs := []controller.Output{{Type: c.depKind.Type(), Kind: controller.OutputShared, Namespace: c.depKind.Namespace()}}
	for _, x := range c.opts.extras {
		outputs = append(outputs, controller.Output{Type: x.kind.Type(), Kind: controller.OutputShared, Namespace: x.kind.Namespace()})
	}
	return outputs
}

// Run reconciles on every wake-up until ctx is canceled; see the package
// documentation. A failing input is retried on its own schedule without
// failing Run; Run fails (and the Runtime restarts it with backoff) only
// when listing the inputs (or reading one) fails.
func (c *Controller[I, D]) Run(ctx context.Context, r controller.Runtime, logger *zap.Logger) error {
	if c.configErr != nil {
		return fmt.Errorf("cleanup %q: %w", c.settings.Name, c.configErr)
	}
	rs := &runState{retries: xform.NewRetries[resource.ID](ctx), failed: map[resource.ID]stamp{}, waiting: map[resource.ID]struct{}{}}
	retryLog := xform.RetryLogger(logger)
	return xform.RetryLoop(ctx, r, rs.retries.Next, func(bool) error {
		return c.reconcile(ctx, r, logger, retryLog, rs)
	})
}

// runState is what one Run remembers between its passes: the failing
// inputs, their retry schedule, and each as it was when it failed (a
// change retries it at once); the inputs waiting for their dependents to
// go; the last batch of the change log.
type runState struct {
	retries *xform.Retries[resource.ID]
	failed  map[resource.ID]stamp
	// waiting are the tearing-down inputs that hold the finalizer while
	// dependents remain: a change of a dependent brings each back.
	waiting map[resource.ID]struct{}
	// passes counts the passes; changes is the change log's last batch.
	passes  uint64
	changes *changelog.Batch
}

// stamp identifies a resource as it was: versions start over when it is
// created again.
type stamp struct {
	created int64
	version resource.Version
}

func stampOf(md *resource.Metadata) stamp {
	return stamp{created: md.Created().UnixNano(), version: md.Version()}
}

// reconcile runs one pass (rule G3): over every input (a full pass: the
// first of a Run, or when the Runtime's change log cannot say what
// changed), or else over the inputs changed since the previous pass, the
// failing ones and those waiting for their dependents. An input waiting
// out the backoff of a failure is skipped unless it changed since.
func (c *Controller[I, D]) reconcile(ctx context.Context, r controller.Runtime, logger, retryLog *zap.Logger, rs *runState) error {
	p := pass[I, D]{c: c, ctx: ctx, r: r, logger: logger, retryLog: retryLog, rs: rs, now: time.Now()}
	if ids, ok := p.changed(); ok {
		return p.incremental(ids)
	}
	list, err := r.List(ctx, c.inKind, state.WithReadOnlyList())
	if err != nil {
		return fmt.Errorf("list inputs %s: %w", resource.KindString(c.inKind), err)
	}
	listed := make(map[resource.ID]struct{}, rs.retries.Len())
	clear(rs.waiting)
	for _, item := range list.Items {
		if ctx.Err() != nil {
			return nil // stopping
		}
		listed[item.Metadata().ID()] = struct{}{}
		p.item(item)
	}
	for id := range rs.failed {
		if _, ok := listed[id]; !ok {
			rs.forget(id)
		}
	}
	return nil
}

// pass is one reconcile pass.
type pass[I, D typed.ResourceWithDefinition] struct {
	c                *Controller[I, D]
	ctx              context.Context
	r                controller.Runtime
	logger, retryLog *zap.Logger
	rs               *runState
	now              time.Time
}

// changed takes the change log's batch and returns the IDs of the inputs
// to process (those logged, failing or waiting), sorted and unique, with
// true; false for a full pass.
func (p *pass[I, D]) changed() ([]resource.ID, bool) {
	rs := p.rs
	first := rs.passes == 0
	rs.passes++
	src, ok := p.r.(changelog.Source)
	if !ok {
		return nil, false
	}
	rs.changes = src.TakeChanges(rs.changes)
	if first || rs.changes.Full {
		return nil, false
	}
	ids := rs.changes.IDs(resource.KindOf(p.c.inKind))
	for id := range rs.failed {
		ids = append(ids, id)
	}
	for id := range rs.waiting {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return slices.Compact(ids), true
}

// incremental processes the inputs ids as they are now, each read with a
// Get; one that is gone is forgotten. A read that fails otherwise than
// with "not found" fails the pass (the Run's restart reads everything).
func (p *pass[I, D]) incremental(ids []resource.ID) error {
	readOnly := []state.GetOption{state.WithReadOnlyGet()}
	kind := p.c.inKind
	for _, id := range ids {
		if p.ctx.Err() != nil {
			return nil // stopping
		}
		ptr := resource.NewPointer(kind.Namespace(), kind.Type(), id)
		item, err := p.r.Get(p.ctx, ptr, readOnly...)
		switch {
		case state.IsNotFoundError(err):
			p.rs.forget(id)
		case err != nil:
			return fmt.Errorf("get input %s: %w", resource.PointerString(ptr), err)
		default:
			p.item(item)
		}
	}
	return nil
}

// forget drops what the Run remembers of the input id (it is gone).
func (rs *runState) forget(id resource.ID) {
	rs.retries.Done(id)
	delete(rs.failed, id)
	delete(rs.waiting, id)
}

// item processes one input, unless it waits out the backoff of a failure
// and did not change since.
func (p *pass[I, D]) item(item resource.Resource) {
	rs := p.rs
	md := item.Metadata()
	id := md.ID()
	if failing, due := rs.retries.Waiting(id, p.now); failing {
		if rs.failed[id] != stampOf(md) {
			rs.retries.Changed(id) // retried now
		} else if !due {
			return
		}
	}
	waiting, err := p.c.input(p.ctx, p.r, p.logger, item)
	if waiting {
		rs.waiting[id] = struct{}{}
	} else {
		delete(rs.waiting, id)
	}
	if err != nil {
		if p.ctx.Err() != nil {
			return // stopping: not a failure of the input
		}
		rt := rs.retries.Failed(id, p.now, err, true)
		rs.failed[id] = stampOf(md)
		xform.RetryLater(p.retryLog, p.r, "input", md, err, rt)
		return
	}
	rs.retries.Done(id)
	delete(rs.failed, id)
}

// input holds the finalizer on a running input, and releases it from a
// tearing-down one whose dependents are gone; waiting reports a
// tearing-down input that keeps the finalizer while dependents remain.
func (c *Controller[I, D]) input(ctx context.Context, r controller.Runtime, logger *zap.Logger, item resource.Resource) (waiting bool, err error) {
	in, err := cast.To[I](item)
	if err != nil {
		return false, err
	}
	md := in.Metadata()
	fin := c.settings.Name
	if md.Phase() == resource.PhaseRunning {
		if md.Finalizers().Has(fin) {
			return false, nil
		}
		return false, r.AddFinalizer(ctx, md, fin)
	}
	if !md.Finalizers().Has(fin) {
		return false, nil
	}
	deps, err := c.dependents(ctx, r, logger, in)
	if err != nil {
		return false, err
	}
	if len(deps) == 0 {
		return false, r.RemoveFinalizer(ctx, md, fin)
	}
	if c.opts.action == ActionWait {
		return true, nil
	}
	var errs []error
	for _, md := range deps {
		if err := c.act(ctx, r, md); err != nil {
			errs = append(errs, xform.Named("dependent", md, err))
		}
	}
	return true, errors.Join(errs...)
}

// dependents returns the metadata of the dependents of in that still
// exist: of the dependent type, then of each extra dependent type.
func (c *Controller[I, D]) dependents(ctx context.Context, r controller.Reader, logger *zap.Logger, in I) ([]*resource.Metadata, error) {
	md := in.Metadata()
	var out []*resource.Metadata
	if f := c.settings.ListDependents; f != nil {
		var deps []D
		err := xform.Call(logger, "ListDependents", md, func() error {
			var err error
			deps, err = f(ctx, r, logger, in)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, d := range deps {
			out = append(out, d.Metadata())
		}
	} else {
		var err error
		if out, err = c.listDependents(ctx, r, logger, in, c.depKind, "DependentsQuery",
			func(res resource.Resource) []resource.LabelQueryOption { return c.settings.DependentsQuery(res.(I)) }, cast.To[D]); err != nil {
			return nil, err
		}
	}
	for _, x := range c.opts.extras {
		deps, err := c.listDependents(ctx, r, logger, in, x.kind, "WithExtraDependents query", x.query, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, deps...)
	}
	return out, nil
}

// listDependents lists the resources of kind that query (the user
// function name) selects for in; check, when set, checks each one's Go
// type.
func (c *Controller[I, D]) listDependents(ctx context.Context, r controller.Reader, logger *zap.Logger, in I, kind resource.Kind, name string,
	query func(resource.Resource) []resource.LabelQueryOption, check func(resource.Resource) (D, error),
) ([]*resource.Metadata, error) {
	q, err := xform.CallValue(logger, name, in.Metadata(), func() []resource.LabelQueryOption { return query(in) })
	if err != nil {
		return nil, err
	}
	list, err := r.List(ctx, kind, state.WithReadOnlyList(), state.WithLabelQuery(q...))
	if err != nil {
		return nil, err
	}
	out := make([]*resource.Metadata, 0, len(list.Items))
	for _, item := range list.Items {
		if check != nil {
			if _, err := check(item); err != nil {
				return nil, err
			}
		}
		out = append(out, item.Metadata())
	}
	return out, nil
}

// act tears a dependent down, and destroys it with ActionDestroy when it
// has no finalizers, acting for its owner.
func (c *Controller[I, D]) act(ctx context.Context, w controller.Writer, md *resource.Metadata) error {
	owner := controller.WithOwner(md.Owner())
	ready := md.Finalizers().Empty()
	if md.Phase() == resource.PhaseRunning {
		var err error
		if ready, err = w.Teardown(ctx, md, owner); err != nil {
			return ignoreNotFound(err)
		}
	}
	if c.opts.action != ActionDestroy || !ready {
		return nil
	}
	err := w.Destroy(ctx, md, owner)
	if state.IsPendingFinalizersError(err) {
		return nil // a finalizer was added: the next change brings us back
	}
	return ignoreNotFound(err)
}

func ignoreNotFound(err error) error {
	if state.IsNotFoundError(err) {
		return nil
	}
	return err
}
