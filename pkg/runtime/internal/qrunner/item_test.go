package qrunner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestDone_ItemThatSucceededCostsNoAllocation: the engine's bookkeeping of
// an item whose Reconcile succeeded — its completion in the queue, its
// telemetry and trace, its status, its (absent) log line — allocates
// nothing, with metrics and the trace on, as the engine runs by default.
// The trace still records the item's end.
func TestDone_ItemThatSucceededCostsNoAllocation(t *testing.T) {
	eng := &telemetry.Engine{Clock: telemetry.NewClock(), Ring: trace.NewRing(trace.DefaultSize), Metrics: true}
	tel := telemetry.NewController(eng, "q", 1)
	q := queue.New[work.Item, telemetry.Pending](retry.Policy{})
	c := &Runner{cfg: Config{Telemetry: tel}, queue: q, last: &work.LastSeen{}, elog: zap.NewNop()}
	md := resource.NewMetadata("ns", "Ts.test.resgraph.dev", "x", resource.NewVersion(1))
	it := work.Reconcile(resource.PointerOf(&md))
	round := func() {
		q.AddNoted(it, func(p *telemetry.Pending) { p.Queued(state.Updated, &md, tel.Now(nil), nil) })
		got, p, slot, ok := q.GetNoted(t.Context())
		require.True(t, ok)
		start := tel.ItemStarted(got, &p)
		c.done(got, slot, work.Last{}, start, outcome.Success())
	}
	round()
	assert.Zero(t, testing.AllocsPerRun(100, round))
	assert.Zero(t, q.Len()+q.InFlight(), "the item is done")
	ends := 0
	for _, ev := range eng.Ring.Snapshot() {
		if ev.Type == trace.ReconcileEnd {
			ends++
		}
	}
	assert.Equal(t, 102, ends, "every item's end is traced")
}
