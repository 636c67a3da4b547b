package lagwatch

import (
	"context"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// qcontroller is the scenario's QController: primary parents, mapped
// children, each child mapped to the parent its label "parent" names, in
// its previous version (rule Q4, extended) and its current one.
type qcontroller struct {
	reconcile func(ctx context.Context, r controller.QRuntime, p resource.Pointer) error
}

func (*qcontroller) Name() string { return "lagwatch-counter" }

func (*qcontroller) Settings() controller.QSettings {
	return controller.QSettings{Inputs: []controller.Input{
		{Namespace: ParentNamespace, Type: conformance.IntResourceType, Kind: controller.InputQPrimary},
		{Namespace: ChildNamespace, Type: conformance.IntResourceType, Kind: controller.InputQMapped},
	}}
}

func (q *qcontroller) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
	return q.reconcile(ctx, r, p)
}

func (*qcontroller) MapInput(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
	var out []resource.Pointer
	add := func(md *resource.Metadata) {
		if parent, ok := md.Labels().Get("parent"); ok {
			out = append(out, resource.NewPointer(ParentNamespace, conformance.IntResourceType, parent))
		}
	}
	if prev, ok := controller.PreviousOf(p); ok {
		add(prev.Metadata())
	}
	if gone, ok := controller.AsDestroyed(p); ok {
		add(gone.Metadata())
		return out, nil
	}
	res, err := r.Get(ctx, p, state.WithReadOnlyGet())
	if state.IsNotFoundError(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	add(res.Metadata())
	return out, nil
}
