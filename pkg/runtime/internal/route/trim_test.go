package route

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/idle"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestWatch_LargeBatchStorageIsReleased: once a batch larger than
// scratchKeep (a bootstrap, a watch that lagged) is routed, the watch keeps
// none of the storage it grew for it — its changes, their metadata and
// the routing's scratch — so that what a kind watch retains between
// batches does not grow with the kind; a small batch's storage is kept for
// reuse.
func TestWatch_LargeBatchStorageIsReleased(t *testing.T) {
	for _, tc := range []struct {
		n    int
		kept bool
	}{{n: scratchKeep / 2, kept: true}, {n: scratchKeep + 1, kept: false}} {
		w := &kindWatcher{idle: &idle.Notifier{}}
		batch := make([]state.Event, tc.n)
		for i := range batch {
			batch[i] = state.Event{Type: state.Updated}
			w.emit(&batch[i], &resource.Metadata{})
		}
		w.metas = make([]*resource.Metadata, tc.n)
		w.scratch.resetPrevious(tc.n)
		w.routed(batch, w.metas, live, live)
		for name, c := range map[string]int{"changes": cap(w.out), "metadata": cap(w.outMetas), "batch metadata": cap(w.metas), "previous versions": cap(w.scratch.prevs)} {
			if tc.kept {
				assert.GreaterOrEqual(t, c, tc.n, "%s of a batch of %d: kept", name, tc.n)
			} else {
				assert.Zero(t, c, "%s of a batch of %d: released", name, tc.n)
			}
		}
	}
}
