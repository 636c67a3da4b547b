package qrunner

import (
	"cmp"
	"slices"

	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
)

// Parked returns up to limit of the items parked by the controller's retry
// policy (controller.RetryPolicy.MaxAttempts), sorted by item, and how many
// there are.
func (c *Runner) Parked(limit int) ([]queue.Parked[work.Item], int) {
	items, total := c.queue.Parked(limit)
	slices.SortFunc(items, func(a, b queue.Parked[work.Item]) int {
		return cmp.Or(cmp.Compare(a.Key.Ptr.String(), b.Key.Ptr.String()), cmp.Compare(a.Key.Op(), b.Key.Op()))
	})
	return items, total
}
