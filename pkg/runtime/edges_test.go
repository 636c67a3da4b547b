package runtime_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestMetrics_EdgeCounts: a controller's metrics count the traffic along
// each of its edges — the wake-ups or items delivered through each input,
// and its writes per output type and namespace, which is how a merge
// controller reading cfg/A and writing net/A shows where its output goes.
func TestMetrics_EdgeCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		inCfg := controller.Input{Namespace: "cfg", Type: typeA, Kind: controller.InputWeak}
		merge := &funcController{name: "merge", inputs: []controller.Input{inCfg}, outputs: []controller.Output{out(typeA, controller.OutputExclusive)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					list, err := r.List(ctx, resource.NewKind("cfg", typeA))
					if err != nil {
						return err
					}
					for _, it := range list.Items {
						if err := r.Modify(ctx, newPair(typeA, it.Metadata().ID(), 0), func(res resource.Resource) error {
							res.(*Pair).TypedSpec().A = specA(t, it)
							return nil
						}); err != nil {
							return err
						}
					}
				}
			}}
		q := &funcQController{name: "q", settings: primaryOf(typeA)}
		e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(merge), runtimetest.WithQControllers(q))
		cfg := func(id string, a int) *Pair {
			return typed.New[PairSpec, pairDef](resource.NewMetadata("cfg", typeA, id, resource.VersionUndefined), PairSpec{A: a})
		}
		mustCreate(t, st, cfg("x", 1))
		synctest.Wait()
		mustCreate(t, st, cfg("y", 2))
		synctest.Wait()

		assert.Equal(t, []observe.EdgeCount{
			{EdgeType: "InputWeak", Namespace: "cfg", Type: typeA, Count: 2},
			{EdgeType: "OutputExclusive", Namespace: testNS, Type: typeA, Count: 2},
		}, statusOf(t, e.Runtime, "merge").Metrics.Edges, "two wake-ups; two creates in test/A (the second pass's Modify of x wrote nothing)")
		assert.Equal(t, []observe.EdgeCount{
			{EdgeType: "InputQPrimary", Namespace: testNS, Type: typeA, Count: 2},
		}, statusOf(t, e.Runtime, "q").Metrics.Edges, "two items")
	})
}

// TestMetrics_EdgeCountsOffWithMetrics: no counts with metrics off.
func TestMetrics_EdgeCountsOffWithMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &funcQController{name: "q", settings: primaryOf(typeA)}
		e := start(t, runtimetest.WithQControllers(q), runtimetest.WithRuntimeOptions(runtime.WithMetrics(false)))
		mustCreate(t, e.State, newPair(typeA, "1", 1))
		synctest.Wait()
		require.Len(t, e.Runtime.Observe().Controllers(), 1)
		assert.Nil(t, statusOf(t, e.Runtime, "q").Metrics.Edges)
	})
}
