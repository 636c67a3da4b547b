// Package mapper builds the mapping functions of mapped inputs: the
// mapper of a qtransform extra mapped input (qtransform.WithExtraMappedInput)
// and the body of a QController's MapInput. A mapped input's change is
// mapped to the primary resources to reconcile again; the common mappings
// are here:
//
//   - [ByLabel]: the primary resource named by one of the input's labels
//     (a child labelled parent=p1 maps to the parent p1);
//   - [ByID]: the primary resource with the input's ID (a status and its
//     spec, a config and what it configures);
//   - [ByOwner]: the primary resource named by the input's owner (the
//     controller that wrote it: one resource per producing controller).
//
// A mapper reads only the input's metadata, so it maps a destroyed input
// as it mapped it before it was destroyed: the Runtime hands a mapper the
// last stored version of a destroyed mapped input (rule Q4), labels and
// owner included, so "requeue the parent my label names" also requeues it
// when the child goes away.
//
//	qtransform.NewQController(settings,
//		qtransform.WithExtraMappedInput(mapper.ByLabel[*Machine]("cluster", typed.Kind[*Cluster]())),
//	)
//
// In a QController's MapInput, [Func.MapPointer] resolves the pointer the
// Runtime passes (a destroyed input's last version, or the current
// resource) and calls the mapper:
//
//	func (c *C) MapInput(ctx context.Context, l *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
//		return byCluster.MapPointer(ctx, l, r, ptr)
//	}
package mapper

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Func maps a mapped input of type T to the primary resources to
// reconcile. It has the signature of qtransform.WithExtraMappedInput's
// mapper, so a Func is passed there as it is. The input is a shared
// read-only snapshot (rule S7): a Func never changes it.
type Func[T resource.Resource] func(ctx context.Context, logger *zap.Logger, r controller.QRuntime, in T) ([]resource.Pointer, error)

// ByLabel maps an input to the resource of kind target whose ID is the
// value of the input's label key; an input without that label, or with an
// empty value, maps to nothing. An empty key makes every call fail with
// an error of the invalid class. To map only under conditions on other
// labels, see [When] and [ByLabelWhen].
func ByLabel[T resource.Resource](key string, target resource.Kind) Func[T] {
	return func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, in T) ([]resource.Pointer, error) {
		if key == "" {
			return nil, state.NewInvalidError(nil, "mapper.ByLabel: empty label key: give the key of the label that names the target")
		}
		v, _ := in.Metadata().Labels().Get(key)
		return to(target, v), nil
	}
}

// ByID maps an input to the resource of kind target with the input's ID.
func ByID[T resource.Resource](target resource.Kind) Func[T] {
	return func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, in T) ([]resource.Pointer, error) {
		return to(target, in.Metadata().ID()), nil
	}
}

// ByOwner maps an input to the resource of kind target whose ID is the
// input's owner (the name of the controller that wrote it); an input
// without owner maps to nothing.
func ByOwner[T resource.Resource](target resource.Kind) Func[T] {
	return func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, in T) ([]resource.Pointer, error) {
		return to(target, in.Metadata().Owner()), nil
	}
}

// to returns the pointer to the resource id of kind target, none for an
// empty id.
func to(target resource.Kind, id resource.ID) []resource.Pointer {
	if id == "" {
		return nil
	}
	return []resource.Pointer{resource.NewPointer(target.Namespace(), target.Type(), id)}
}

// MapPointer is f in a QController's MapInput: it resolves ptr, as
// MapInput received it, to the input — the last stored version of a
// destroyed input (a *controller.DestroyedInput, rule Q4), otherwise the
// current resource, read as a shared read-only snapshot — and calls f with
// it. When ptr carries the input's previous version (a
// *controller.ChangedInput, or a destroyed input whose metadata changed
// first: rule Q4, extended), f is called with that version too, and the
// results are their union (the previous version's first, no pointer
// twice): a child moved from one parent to another requeues both. An
// input found gone without its last version (destroyed while its change
// was on its way) maps only its previous version, if any: its
// destruction's own call maps it. An input of another Go type than T is
// an error of the invalid class.
func (f Func[T]) MapPointer(ctx context.Context, logger *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	if f == nil {
		return nil, state.NewInvalidError(ptr, "mapper: nil Func")
	}
	var out []resource.Pointer
	if prev, ok := controller.PreviousOf(ptr); ok {
		ptrs, err := f.mapResource(ctx, logger, r, prev)
		if err != nil {
			return nil, err
		}
		out = ptrs
	}
	var in resource.Resource
	if gone, ok := controller.AsDestroyed(ptr); ok {
		in = gone.Last()
	} else {
		res, err := r.Get(ctx, ptr, state.WithReadOnlyGet())
		switch {
		case state.IsNotFoundError(err):
			return out, nil
		case err != nil:
			return nil, fmt.Errorf("mapper: read %s: %w", resource.PointerString(ptr), err)
		}
		in = res
	}
	ptrs, err := f.mapResource(ctx, logger, r, in)
	if err != nil {
		return nil, err
	}
	return Union(out, ptrs), nil
}

// mapResource calls f with in as a T.
func (f Func[T]) mapResource(ctx context.Context, logger *zap.Logger, r controller.QRuntime, in resource.Resource) ([]resource.Pointer, error) {
	t, err := cast.To[T](in)
	if err != nil {
		return nil, err
	}
	return f(ctx, logger, r, t)
}

// Union returns the pointers of a followed by those of b that are not in
// a (nor earlier in b), each once: the results of a mapper called with an
// input's previous and current versions. It reuses a's storage.
func Union(a, b []resource.Pointer) []resource.Pointer {
	if len(a) == 0 && len(b) <= 1 {
		return b
	}
	seen := make(map[resource.PointerKey]struct{}, len(a)+len(b))
	out := a[:0]
	for _, list := range [][]resource.Pointer{a, b} {
		for _, p := range list {
			if usercode.IsNil(p) {
				out = append(out, p) // left for the caller's check of bad pointers
				continue
			}
			k := resource.PointerOf(p)
			if _, dup := seen[k]; !dup {
				seen[k] = struct{}{}
				out = append(out, p)
			}
		}
	}
	return out
}
