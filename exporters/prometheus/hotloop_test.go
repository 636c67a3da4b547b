package prometheus_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	resgraphprom "github.com/resgraph/resgraph/exporters/prometheus"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe/hotloop"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

type copyDef struct{}

func (copyDef) Definition() typed.Definition {
	return typed.Definition{Type: "Copies.test.resgraph.dev", DefaultNamespace: "default"}
}

// copier is a QController that writes a copy for each item: one commit of
// a distinct resource per item.
type copier struct{}

func (copier) Name() string { return "Copier" }
func (copier) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs:  []controller.Input{controller.InputFor[*item](controller.InputQPrimary)},
		Outputs: []controller.Output{controller.OutputFor[*typed.Resource[itemSpec, copyDef]](controller.OutputExclusive)},
	}
}
func (copier) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
	return r.Modify(ctx, typed.NewDefault[itemSpec, copyDef](p.ID(), itemSpec{}), func(resource.Resource) error { return nil })
}
func (copier) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// TestHotLoopDetectorLosses: the commits a Runtime's hot-loop detector
// dropped and the windows it counted only in part are exported as
// counters — here with a threshold of one commit a window (every resource
// committed needs a stat) and a burst of more distinct resources than the
// detector keeps stats for, in a synctest bubble whose clock then moves
// past the burst's window so that it closes.
func TestHotLoopDetectorLosses(t *testing.T) {
	const items = 2100 // more than the detector's 2,048 stats
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		rt, err := runtime.New(st, zap.NewNop(), runtime.WithHotLoop(hotloop.Config{MinRate: 1}))
		require.NoError(t, err)
		require.NoError(t, rt.RegisterQController(copier{}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- rt.Run(ctx) }()
		synctest.Wait()
		for i := range items {
			runtimetest.Create(t, st, typed.NewDefault[itemSpec, itemDef](strconv.Itoa(i), itemSpec{}))
			synctest.Wait() // its copy committed; the clock did not move
		}
		time.Sleep(2 * hotloop.DefaultWindow) // the burst's window closes
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)

		m := rt.Observe().Metrics()
		require.Positive(t, m.HotLoopDropped, "the detector dropped commits")
		require.Positive(t, m.HotLoopIncomplete, "the burst's window counted only part of its commits")
		reg := prometheus.NewRegistry()
		_, err = resgraphprom.Register(reg, rt.Observe())
		require.NoError(t, err)
		expected := fmt.Sprintf(`
# HELP resgraph_hot_loop_dropped_commits_total Commits the hot-loop detector let go of before their time to keep its memory bounded (more resources committed in a window than it tracks).
# TYPE resgraph_hot_loop_dropped_commits_total counter
resgraph_hot_loop_dropped_commits_total %d
# HELP resgraph_hot_loop_incomplete_windows_total Hot-loop detector windows that counted only part of their commits (trace records missed or commits dropped): they end no loop and lower no rate.
# TYPE resgraph_hot_loop_incomplete_windows_total counter
resgraph_hot_loop_incomplete_windows_total %d
`, m.HotLoopDropped, m.HotLoopIncomplete)
		assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected),
			"resgraph_hot_loop_dropped_commits_total", "resgraph_hot_loop_incomplete_windows_total"))
	})
}
