package mapper

import (
	"context"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// When maps an input with f only when every label term holds on it — the
// terms of package resource: resource.LabelExists, resource.LabelEqual,
// resource.LabelIn, each negated by the resource.NotMatches option (and
// any term constructor package resource adds). An input on which a term
// does not hold maps to nothing. When composes: When(When(f, a), b) needs
// a and b, and [Join] of two conditional mappers maps by either:
//
//	// the cluster a control-plane machine names, unless it is being replaced
//	mapper.When(mapper.ByLabel[*Machine]("cluster", typed.Kind[*Cluster]()),
//		resource.LabelExists("role-controlplane"),
//		resource.LabelEqual("replaced", "true", resource.NotMatches))
//
// The terms are checked when When is called: a term with an empty key
// makes every call of the mapper fail with an error of the invalid class
// (state.IsInvalidError) naming the term and the fix, which the
// controller reports naming itself. Like every mapper, the condition is
// checked on each version the mapper is called with (rule Q4, extended):
// an input that stopped matching still maps its previous version, so its
// former target is requeued.
func When[T resource.Resource](f Func[T], terms ...resource.LabelQueryOption) Func[T] {
	q := resource.NewLabelQuery(terms...)
	bad := checkTerms("mapper.When", q)
	if f == nil && bad == nil {
		bad = state.NewInvalidError(nil, "mapper.When: nil Func: give the mapper to apply when the terms hold")
	}
	return func(ctx context.Context, logger *zap.Logger, r controller.QRuntime, in T) ([]resource.Pointer, error) {
		if bad != nil {
			return nil, bad
		}
		if !q.Matches(*in.Metadata().Labels()) {
			return nil, nil
		}
		return f(ctx, logger, r, in)
	}
}

// ByLabelWhen is [ByLabel] under conditions: When(ByLabel(key, target),
// terms...).
func ByLabelWhen[T resource.Resource](key string, target resource.Kind, terms ...resource.LabelQueryOption) Func[T] {
	return When(ByLabel[T](key, target), terms...)
}

// Join maps an input with every mapper of fs and returns the union of
// their results ([Union]): the first error stops it.
func Join[T resource.Resource](fs ...Func[T]) Func[T] {
	return func(ctx context.Context, logger *zap.Logger, r controller.QRuntime, in T) ([]resource.Pointer, error) {
		var out []resource.Pointer
		for _, f := range fs {
			if f == nil {
				return nil, state.NewInvalidError(nil, "mapper.Join: a nil Func: give every mapper to join")
			}
			ptrs, err := f(ctx, logger, r, in)
			if err != nil {
				return nil, err
			}
			out = Union(out, ptrs)
		}
		return out, nil
	}
}

// checkTerms returns the invalid-class error of a query with a term that
// cannot work (an empty key), naming the term and the fix; nil otherwise.
func checkTerms(what string, q resource.LabelQuery) error {
	for i, t := range q.Terms {
		if t.Key == "" {
			return state.NewInvalidError(nil, "%s: label term %d (%s) has an empty key: give the label's key", what, i+1, t)
		}
	}
	return nil
}
