package destroy

import (
	"context"
	"fmt"

	"github.com/siderolabs/gen/optional"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/xform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// Controller is a QController that destroys the resources of type I (in
// I's default namespace) that are tearing down with no finalizers left,
// whoever owns them: it acts for each resource's owner
// (controller.WithOwner). It is the controller a daemon runs for a kind
// whose resources others tear down and nobody destroys — resources torn
// down by users, or by a controller that lets the finalizer holders go
// first and leaves the destroy to this one. A running resource, or one
// with finalizers, is left alone; a finalizer added between the read and
// the destroy makes the destroy wait for its removal, which queues the
// resource again.
//
// It declares I as its primary input and as a shared output (to destroy
// what others wrote): the Runtime refuses it next to an exclusive owner of
// I (rule C1). [WithOwners] restricts it to resources of given owners.
type Controller[I typed.ResourceWithDefinition] struct {
	kind      resource.Kind
	configErr error
	opts      ctrlOptions
}

// Option configures a [Controller].
type Option func(*ctrlOptions)

type ctrlOptions struct {
	name        string
	concurrency optional.Optional[uint]
	owners      map[resource.Owner]struct{}
}

// WithName names the controller (default "Destroy" followed by the
// type).
func WithName(name string) Option { return func(o *ctrlOptions) { o.name = name } }

// WithConcurrency sets how many resources are destroyed in parallel
// (default 1; 0 is refused at registration).
func WithConcurrency(n uint) Option {
	return func(o *ctrlOptions) { o.concurrency = optional.Some(n) }
}

// WithOwners restricts the controller to the resources owned by one of
// owners ("" for those without owner); by default it destroys every
// ready resource of I, whoever owns it.
func WithOwners(owners ...resource.Owner) Option {
	return func(o *ctrlOptions) {
		if o.owners == nil {
			o.owners = map[resource.Owner]struct{}{}
		}
		for _, owner := range owners {
			o.owners[owner] = struct{}{}
		}
	}
}

// NewController returns a destroy Controller of type I. Nil options are
// skipped; a misconfiguration is reported by [Controller.Validate] at
// registration (rule G2): a type whose definition is invalid, an empty
// name, a concurrency of 0.
func NewController[I typed.ResourceWithDefinition](opts ...Option) *Controller[I] {
	c := &Controller[I]{}
	def, err := xform.DefinitionOf[I]()
	c.kind = xform.DefinitionKind(def)
	c.opts.name = "Destroy" + def.Type
	for _, o := range opts {
		if o != nil {
			o(&c.opts)
		}
	}
	switch n, ok := c.opts.concurrency.Get(); {
	case err != nil:
		c.configErr = xform.Invalid("resource type: %w", err)
	case c.opts.name == "":
		c.configErr = xform.Invalid("WithName(\"\"): the name is empty")
	case ok && n == 0:
		c.configErr = xform.Invalid("WithConcurrency(0): at least 1 resource must be destroyed at a time")
	}
	return c
}

// Validate reports a configuration that cannot work (controller.Validator).
func (c *Controller[I]) Validate() error { return c.configErr }

// Name returns the controller's name.
func (c *Controller[I]) Name() string { return c.opts.name }

// Settings declares I as the primary input and a shared output.
func (c *Controller[I]) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs:      []controller.Input{{Namespace: c.kind.Namespace(), Type: c.kind.Type(), Kind: controller.InputQPrimary}},
		Outputs:     []controller.Output{{Type: c.kind.Type(), Kind: controller.OutputShared, Namespace: c.kind.Namespace()}},
		Concurrency: c.opts.concurrency,
	}
}

// Reconcile destroys ptr if it is tearing down with no finalizers (and
// of one of the owners of WithOwners, when given), acting for its owner.
func (c *Controller[I]) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, ptr resource.Pointer) error {
	if c.configErr != nil {
		return fmt.Errorf("destroy %q: %w", c.opts.name, c.configErr)
	}
	res, err := r.Get(ctx, ptr, state.WithReadOnlyGet())
	switch {
	case state.IsNotFoundError(err):
		return nil
	case err != nil:
		return err
	}
	md := res.Metadata()
	if md.Phase() != resource.PhaseTearingDown || !md.Finalizers().Empty() {
		return nil
	}
	if _, ok := c.opts.owners[md.Owner()]; c.opts.owners != nil && !ok {
		return nil
	}
	_, err = destroy(ctx, r, md.Owner(), ptr)
	return err
}

// MapInput is never called: the controller has no mapped input.
func (c *Controller[I]) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}
