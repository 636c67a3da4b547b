package inmem

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ state.KindWatchResumer = (*core)(nil)

// ResumesKindWatches implements [state.KindWatchResumer]: every kind's
// watches resume from their bookmarks while the changes after them are in
// the kind's history (see WithHistoryCapacity).
func (c *core) ResumesKindWatches(resource.Kind) bool { return true }
