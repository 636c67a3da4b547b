package telemetry

import (
	"fmt"
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
)

// BenchmarkItemInQueue is the per-item accounting of a QController, with
// its queue, as a burst of n distinct items goes through: n changes
// routed as one batch (counted, traced, queued, the pending work noted),
// then each item taken, started and ended. ns/item is the cost per item.
func BenchmarkItemInQueue(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			eng := newEngine(trace.DefaultSize)
			c := NewController(eng, "q", 1)
			q := queue.New[work.Item, Pending](retry.Policy{})
			items := make([]work.Item, n)
			metas := make([]*resource.Metadata, n)
			for i := range n {
				md := resource.NewMetadata("ns", "T", fmt.Sprintf("id%06d", i), resource.VersionUndefined)
				md.SetUpdated(time.Now())
				metas[i] = &md
				items[i] = work.Reconcile(resource.PointerOf(&md))
			}
			d := outcome.Decide(outcome.Reconcile, outcome.Success())
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				var bt Batch
				for i := range n {
					c.Queued(state.Updated, metas[i], &bt)
				}
				now := c.Now(&bt)
				q.AddBatchNoted(items, func(i int, p *Pending) { p.Queued(state.Updated, metas[i], now, &bt) })
				for range n {
					it, p, slot, _ := q.GetNoted(ctx)
					s := c.ItemStarted(it, &p, 0)
					done := c.Now(nil)
					comp := q.CompleteNoted(it, slot, queue.Success(), func(p *Pending, comp queue.Completion) { p.Settled(done, comp.Delay) })
					c.ItemEnded(it, s, done, outcome.Success(), d, comp.Delay, comp.Attempts)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/item")
		})
	}
}
