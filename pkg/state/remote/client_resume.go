package remote

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ state.KindWatchResumer = (*client)(nil)

// ResumesKindWatches implements [state.KindWatchResumer]: a kind watch
// opened from a bookmark is resumed by the server (rule N2); a bookmark the
// server cannot resume from fails the call with a buffer-overrun error.
func (c *client) ResumesKindWatches(resource.Kind) bool { return true }
