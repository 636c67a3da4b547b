package access

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Update decides an update, or a teardown: an update that moves a running
// resource to the tearing-down phase, and changes nothing else, is a
// teardown; one that changes more needs update too.
func (g *guardCore) Update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	md, err := metadataOf(r)
	if err != nil {
		return err
	}
	verb, alsoUpdate := Update, false
	if md.Phase() == resource.PhaseTearingDown {
		verb, alsoUpdate = g.classify(ctx, r)
	}
	if alsoUpdate {
		if err := g.check(ctx, Update, md.Namespace(), md.Type(), md.ID()); err != nil {
			return err
		}
	}
	return g.write(ctx, verb, md, func() error { return g.inner.Update(ctx, r, opts...) })
}

// classify tells a teardown from an update of a resource written in the
// tearing-down phase: it is a teardown when the stored resource is
// running, and it needs update as well when it differs from the stored
// one in more than its phase. A resource that cannot be read is an update
// (the write itself then fails). The version check of the write makes the
// comparison hold: a resource changed since it was read is a conflict.
func (g *guardCore) classify(ctx context.Context, r resource.Resource) (verb Verb, alsoUpdate bool) {
	cur, err := g.inner.Get(ctx, r.Metadata(), state.WithReadOnlyGet())
	if err != nil || cur.Metadata().Phase() != resource.PhaseRunning {
		return Update, false
	}
	c := r.DeepCopy()
	c.Metadata().SetPhase(resource.PhaseRunning)
	return Teardown, !resource.Equal(c, cur)
}
