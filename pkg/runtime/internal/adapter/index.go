package adapter

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ controller.IndexReader = (*Adapter)(nil)

// ListByIndex lists the resources of kind that its custom index lists under
// key (controller.IndexReader), with List's access rule (rule C3): from the
// cache's index once the kind's watch bootstrapped; before, the state's
// List filtered with the index function, which gives the same answer.
func (a *Adapter) ListByIndex(ctx context.Context, kind resource.Kind, index, key string, opts ...state.ListOption) (l resource.List, err error) {
	defer func() { a.tel.CallEnded(telemetry.OpList, kind, err) }()
	if err := resource.ValidateKind(kind); err != nil {
		return resource.List{}, err
	}
	if !a.access.Load().canList(kind) {
		return resource.List{}, a.deny("ListByIndex", resource.KindString(kind), "not a declared input (without ID) or output")
	}
	c := a.caches.Get(resource.KindOf(kind))
	if !c.HasIndex(index) {
		return resource.List{}, state.NewInvalidError(nil, "controller %q: ListByIndex %s: no index %q on this kind (runtime.WithIndex)",
			a.name, resource.KindString(kind), index)
	}
	if c.Ready() {
		l, served, err := c.ListByIndexAt(index, key, opts, a.floor.Load())
		if !served && a.verify(ctx, c, kind) {
			l, served, err = c.ListByIndexAt(index, key, opts, a.floor.Load())
		}
		if served {
			return l, err
		}
	}
	if l, err = a.stateList(ctx, kind, opts); err != nil {
		return resource.List{}, err
	}
	return c.FilterByIndex(l, index, key)
}
