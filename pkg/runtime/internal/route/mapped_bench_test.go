package route

import (
	"strconv"
	"testing"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/runtime/internal/idle"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// BenchmarkRouteMappedUpdate measures routing one update of a labelled
// resource (its spec changed, not its metadata: the common case) to 10
// QControllers that declare its kind as InputQMapped, with the map items'
// version bookkeeping (work.LastSeen) as the runners have it — the cost
// rule Q4 (extended) adds to every update of a mapped input: reading the
// previous version's metadata and comparing it.
func BenchmarkRouteMappedUpdate(b *testing.B) {
	kindA := resource.KindOf(resource.NewKind("test", "As.test.resgraph.dev"))
	db := dependency.New[*Subscriber]()
	eng := &telemetry.Engine{Clock: telemetry.NewClock(), Ring: trace.NewRing(trace.DefaultSize), Metrics: true}
	for i := range 10 {
		sub := &Subscriber{Telemetry: telemetry.NewController(eng, "c"+strconv.Itoa(i), 1),
			Queue: queue.New[work.Item, telemetry.Pending](retry.Policy{}), Last: &work.LastSeen{}}
		if err := db.Add(dependency.Record[*Subscriber]{
			Handle: sub, Name: "c" + strconv.Itoa(i), Family: dependency.FamilyQController,
			Static: []controller.Input{
				{Namespace: "test", Type: "Ps.test.resgraph.dev", Kind: controller.InputQPrimary},
				{Namespace: "test", Type: kindA.Type(), Kind: controller.InputQMapped},
			},
		}); err != nil {
			b.Fatal(err)
		}
	}
	rt := New(Config{
		State:         inmem.NewState(),
		Subscriptions: func(k resource.KindKey) []Subscription { return db.Snapshot().For(k) },
		Metrics:       true,
		Idle:          &idle.Notifier{},
		Logger:        zap.NewNop(),
		Go:            func(func()) bool { return false },
	})
	rt.mu.Lock()
	w := rt.watcherLocked(kindA)
	rt.mu.Unlock()
	labelled := func(v uint64, n int) resource.Resource {
		ver := resource.VersionUndefined
		for range v {
			ver = ver.Next()
		}
		r := typed.New[benchSpec, benchDef](resource.NewMetadata("test", kindA.Type(), "x", ver), benchSpec{A: n})
		r.Metadata().Labels().Set("parent", "p1")
		r.Metadata().Labels().Set("zone", "a")
		return r
	}
	events := []state.Event{{Type: state.Updated, Resource: labelled(2, 2), Old: labelled(1, 1)}}
	b.ReportAllocs()
	for b.Loop() {
		metas, err := w.metadataOf(events)
		if err != nil {
			b.Fatal(err)
		}
		w.route(events, metas, false)
	}
}
