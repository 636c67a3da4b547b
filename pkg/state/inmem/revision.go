package inmem

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ state.RevisionReporter = (*core)(nil)

// Revision implements [state.RevisionReporter]: the revision of the newest
// change of any kind.
func (c *core) Revision(context.Context) (uint64, error) {
	return c.rev.Load(), nil
}

// KindRevision implements [state.RevisionReporter]. Both revisions are
// read under the kind's lock: no write of the kind is under way, so every
// change of the kind with a revision up to at is applied, and at is not
// below the kind's newest change.
func (c *core) KindRevision(_ context.Context, kind resource.Kind) (last, at uint64, err error) {
	if err := resource.ValidateKind(kind); err != nil {
		return 0, 0, err
	}
	ks := c.lookup(resource.KindOf(kind))
	if ks == nil {
		at := c.rev.Load()
		return 0, at, nil
	}
	ks.mu.Lock()
	last, at = ks.lastRev, c.rev.Load()
	ks.mu.Unlock()
	return last, at, nil
}
