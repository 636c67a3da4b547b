package inmem

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ state.KindHeadReporter = (*core)(nil)

// KindHead implements [state.KindHeadReporter]: the bookmark of the
// kind's newest change (the sequence number of its history's head), in the
// encoding that its watches' events carry.
func (c *core) KindHead(_ context.Context, kind resource.Kind) (state.Bookmark, error) {
	if kind == nil || kind.Namespace() == "" || kind.Type() == "" {
		return nil, state.NewInvalidError(nil, "kind head: empty namespace or type")
	}
	ks := c.store(resource.KindOf(kind))
	ks.mu.Lock()
	seq := ks.seq
	ks.mu.Unlock()
	b := make(state.Bookmark, bookmarkLen)
	encodeBookmark(b, ks.stateID, ks.kindID, seq)
	return b, nil
}
