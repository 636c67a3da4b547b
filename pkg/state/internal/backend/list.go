package backend

import (
	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// ListArgs validates the arguments of a List call, as every backend does
// before it reads anything: the kind (rule R3), then the options
// ([state.ListOptions.Validate]: a label query with an unusable term, rule
// S15). It returns the kind's key and the options.
func ListArgs(kind resource.Kind, opts []state.ListOption) (resource.KindKey, state.ListOptions, error) {
	var o state.ListOptions
	if err := resource.ValidateKind(kind); err != nil {
		return resource.KindKey{}, o, err
	}
	k := resource.KindOf(kind)
	opt.Apply(&o, opts)
	return k, o, o.Validate(k)
}

// Filtered reports whether the queries select fewer than every resource of
// a kind, so that a backend can skip matching when they do not.
func Filtered(lq resource.LabelQueries, iq resource.IDQuery) bool {
	return len(lq) > 0 || iq.Regexp != nil
}

// Matches reports whether r satisfies both queries: one of the label
// queries (rule S15) and the ID query.
func Matches(r resource.Resource, lq resource.LabelQueries, iq resource.IDQuery) bool {
	md := r.Metadata()
	return lq.Matches(*md.Labels()) && iq.Matches(md.ID())
}
