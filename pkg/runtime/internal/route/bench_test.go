package route

import (
	"fmt"
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

type benchSpec struct{ A, B int }

type benchDef struct{}

func (benchDef) Definition() typed.Definition {
	return typed.Definition{Type: "As.test.resgraph.dev", DefaultNamespace: "test"}
}

// BenchmarkRouteEvent measures routing one change of a kind to the
// controllers interested in it, out of 200 subscribed (with metrics on, the
// Runtime's default): the snapshot lookup and the delivery (a coalescing
// wake-up for Controllers, a queue add for QControllers), not the state.
// It includes reading the events' metadata once, as the watcher does for
// every batch.
func BenchmarkRouteEvent(b *testing.B) {
	kindA := resource.KindOf(resource.NewKind("test", "As.test.resgraph.dev"))
	for _, family := range []dependency.Family{dependency.FamilyController, dependency.FamilyQController} {
		for _, interested := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("%s/interested=%d", family, interested), func(b *testing.B) {
				db := dependency.New[*Subscriber]()
				eng := &telemetry.Engine{Clock: telemetry.NewClock(), Ring: trace.NewRing(trace.DefaultSize), Metrics: true}
				for i := range 200 {
					typ := "Bs.test.resgraph.dev"
					if i < interested {
						typ = kindA.Type()
					}
					sub := &Subscriber{Telemetry: telemetry.NewController(eng, "c"+strconv.Itoa(i), 1)}
					kind := controller.InputWeak
					if family == dependency.FamilyController {
						sub.Wake = NewWake()
					} else {
						sub.Queue = queue.New[work.Item, telemetry.Pending](retry.Policy{})
						kind = controller.InputQPrimary
					}
					if err := db.Add(dependency.Record[*Subscriber]{
						Handle: sub, Name: "c" + strconv.Itoa(i), Family: family,
						Static: []controller.Input{{Namespace: "test", Type: typ, Kind: kind}},
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
				r := typed.New[benchSpec, benchDef](resource.NewMetadata("test", kindA.Type(), "x", resource.VersionUndefined), benchSpec{A: 1})
				events := []state.Event{{Type: state.Updated, Resource: r, Old: r}}
				b.ReportAllocs()
				for b.Loop() {
					metas, err := w.metadataOf(events)
					if err != nil {
						b.Fatal(err)
					}
					w.route(events, metas, false)
				}
			})
		}
	}
}
