package qrunner

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestDone_ItemThatSucceededCostsNoAllocation: the Runtime's bookkeeping of
// an item whose Reconcile succeeded — its completion in the queue, its
// telemetry and trace, its status, its (absent) log line — allocates
// nothing, with metrics and the trace on, as the Runtime runs by default.
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
		start := tel.ItemStarted(got, &p, 0)
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

// mapsToOne is a QController whose MapInput returns one pointer of its
// primary kind, made once.
type mapsToOne struct{ to []resource.Pointer }

func (mapsToOne) Name() string                   { return "m" }
func (mapsToOne) Settings() controller.QSettings { return controller.QSettings{} }
func (m mapsToOne) Reconcile(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
	return nil
}

func (m mapsToOne) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return m.to, nil
}

// TestMapItem_OnePointerQueuedWithoutAllocating: a map item whose MapInput
// returns one pointer queues it with its note, and allocates nothing but
// the pointer it hands MapInput (a PointerKey boxed for the interface).
func TestMapItem_OnePointerQueuedWithoutAllocating(t *testing.T) {
	eng := &telemetry.Engine{Clock: telemetry.NewClock(), Ring: trace.NewRing(trace.DefaultSize), Metrics: true}
	tel := telemetry.NewController(eng, "m", 1)
	q := queue.New[work.Item, telemetry.Pending](retry.Policy{})
	primary := resource.NewPointer("ns", "Ps.test.resgraph.dev", "p")
	c := &Runner{
		cfg:     Config{Ctrl: mapsToOne{to: []resource.Pointer{primary}}, Telemetry: tel},
		queue:   q,
		last:    &work.LastSeen{},
		elog:    zap.NewNop(),
		logger:  zap.NewNop(),
		primary: map[resource.KindKey]struct{}{resource.PointerOf(primary).Kind(): {}},
	}
	mapped := work.Item{Ptr: resource.PointerOf(resource.NewPointer("ns", "Ms.test.resgraph.dev", "m")), Map: true}
	want := work.Reconcile(resource.PointerOf(primary))
	round := func() {
		if o := c.mapItem(t.Context(), mapped, mapped.Ptr, work.Last{}, telemetry.Stamp{}); o.Class != outcome.OK {
			t.Fatalf("outcome %v", o)
		}
		it, _, slot, ok := q.GetNoted(t.Context())
		if !ok || it != want {
			t.Fatalf("queued %v (%v), want %v", it, ok, want)
		}
		q.CompleteNoted(it, slot, queue.Success(), nil)
	}
	round()
	assert.LessOrEqual(t, testing.AllocsPerRun(100, round), 1.0)
}
