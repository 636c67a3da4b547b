package adapter

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ controller.UncachedReader = (*Adapter)(nil)

// notUncached returns the invalid-class error of an uncached read of a
// target that no input declared Uncached covers.
func (a *Adapter) notUncached(call, target, input string) error {
	return state.NewInvalidError(nil, "controller %q: %s %s: not an input declared Uncached; declare it as controller.Input{%s, Uncached: true} to read it bypassing the cache",
		a.name, call, target, input)
}

// GetUncached reads from the state, bypassing the cache, a resource that
// an input declared Uncached covers (controller.UncachedReader): a private
// copy, or with [state.WithReadOnlyGet] the shared snapshot (rule S7).
func (a *Adapter) GetUncached(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (r resource.Resource, err error) {
	defer func() { a.getEnded(ptr, opts, r, err) }()
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, err
	}
	if !a.access.Load().canReadUncached(ptr) {
		return nil, a.notUncached("GetUncached", resource.PointerString(ptr),
			"Namespace: "+quote(ptr.Namespace())+", Type: "+quote(ptr.Type())+", ID: optional.Some("+quote(ptr.ID())+") or none")
	}
	return a.stateGet(ctx, ptr, opts)
}

// ListUncached lists from the state, bypassing the cache, a kind that an
// input declared Uncached without an ID covers (controller.UncachedReader).
func (a *Adapter) ListUncached(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (l resource.List, err error) {
	defer func() { a.listEnded(kind, opts, l, err) }()
	if err := resource.ValidateKind(kind); err != nil {
		return resource.List{}, err
	}
	if !a.access.Load().canListUncached(kind) {
		return resource.List{}, a.notUncached("ListUncached", resource.KindString(kind),
			"Namespace: "+quote(kind.Namespace())+", Type: "+quote(kind.Type()))
	}
	if err := checkListOptions(kind, opts); err != nil {
		return resource.List{}, err
	}
	return a.stateList(ctx, kind, opts)
}

func quote(s string) string { return `"` + s + `"` }
