package prometheus_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	resgraphprom "github.com/resgraph/resgraph/exporters/prometheus"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type itemSpec struct{ N int }
type itemDef struct{}

func (itemDef) Definition() typed.Definition {
	return typed.Definition{Type: "Items.test.resgraph.dev", DefaultNamespace: "default"}
}

type item = typed.Resource[itemSpec, itemDef]

// failing is a QController whose items always fail.
type failing struct{}

func (failing) Name() string { return "Failing" }
func (failing) Settings() controller.QSettings {
	return controller.QSettings{Inputs: []controller.Input{controller.InputFor[*item](controller.InputQPrimary)}}
}
func (failing) Reconcile(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
	return errors.New("boom")
}
func (failing) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// serveMetrics serves reg on a loopback listener until the test ends and
// returns the scrape URL.
func serveMetrics(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		assert.ErrorIs(t, <-done, http.ErrServerClosed)
	})
	return "http://" + ln.Addr().String() + "/metrics"
}

// TestScrapeOverHTTP registers the collector of a running Runtime (a
// QController whose item failed and waits out an hour-long backoff) and
// scrapes it over a real HTTP listener, as Prometheus would.
func TestScrapeOverHTTP(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithQControllers(failing{}), runtimetest.WithLogger(zap.NewNop()),
		runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Hour, time.Hour)))
	runtimetest.Settle(t, e.Runtime) // started: the item below is a change (lag), not found at the start
	runtimetest.Create(t, e.State, typed.NewDefault[itemSpec, itemDef]("one", itemSpec{}))
	runtimetest.Settle(t, e.Runtime) // the item failed once and is delayed

	reg := prometheus.NewRegistry()
	_, err := resgraphprom.Register(reg, e.Runtime.Observe(), resgraphprom.WithConstLabels(prometheus.Labels{"daemon": "test"}))
	require.NoError(t, err)
	url := serveMetrics(t, reg)

	expected := `
# HELP resgraph_controller_state 1 for the controller's current state (starting, running, backoff, stopped).
# TYPE resgraph_controller_state gauge
resgraph_controller_state{controller="Failing",daemon="test",family="qcontroller",state="backoff"} 0
resgraph_controller_state{controller="Failing",daemon="test",family="qcontroller",state="running"} 1
resgraph_controller_state{controller="Failing",daemon="test",family="qcontroller",state="starting"} 0
resgraph_controller_state{controller="Failing",daemon="test",family="qcontroller",state="stopped"} 0
# HELP resgraph_kind_relists_total Re-lists of the kind after a failed watch.
# TYPE resgraph_kind_relists_total counter
resgraph_kind_relists_total{daemon="test",namespace="default",type="Items.test.resgraph.dev"} 0
`
	require.NoError(t, testutil.ScrapeAndCompare(url, strings.NewReader(expected), "resgraph_controller_state", "resgraph_kind_relists_total"))

	body := scrape(t, url)
	for _, want := range []string{
		`resgraph_controller_requeues_total{controller="Failing",daemon="test",family="qcontroller"} 1`,
		`resgraph_controller_reconciles_total{controller="Failing",daemon="test",family="qcontroller"} 1`,
		`resgraph_controller_busy_seconds_total{controller="Failing",daemon="test",family="qcontroller"}`,
		`resgraph_controller_last_error_timestamp_seconds{controller="Failing",daemon="test",family="qcontroller"}`,
		`resgraph_controller_queue_length{controller="Failing",daemon="test",family="qcontroller"} 1`,
		`resgraph_controller_failing_items{controller="Failing",daemon="test",family="qcontroller"} 1`,
		`resgraph_controller_parked_items{controller="Failing",daemon="test",family="qcontroller"} 0`,
		`resgraph_kind_events_routed_total{daemon="test",namespace="default",type="Items.test.resgraph.dev"} 1`,
		`resgraph_controller_reconcile_duration_seconds_count{controller="Failing",daemon="test",family="qcontroller",outcome="error"} 1`,
		`resgraph_controller_reconcile_duration_seconds_count{controller="Failing",daemon="test",family="qcontroller",outcome="ok"} 0`,
		`resgraph_controller_queue_wait_seconds_count{controller="Failing",daemon="test",family="qcontroller"} 1`,
		`resgraph_controller_lag_seconds_count{controller="Failing",daemon="test",family="qcontroller"} 1`,
		`resgraph_controller_lag_seconds_bucket{controller="Failing",daemon="test",family="qcontroller",le="+Inf"} 1`,
		`resgraph_controller_startup_seconds_count{controller="Failing",daemon="test",family="qcontroller"} 0`,
		`resgraph_controller_busy_ratio{controller="Failing",daemon="test",family="qcontroller"}`,
		`resgraph_controller_hot_loop{controller="Failing",daemon="test",family="qcontroller"} 0`,
		`resgraph_controller_hot_loops_total{controller="Failing",daemon="test",family="qcontroller"} 0`,
		`resgraph_kind_delivery_lag_seconds_count{daemon="test",namespace="default",type="Items.test.resgraph.dev"}`,
		`resgraph_kind_delivery_lag_seconds_bucket{daemon="test",namespace="default",type="Items.test.resgraph.dev",le="1.024e-06"}`,
		`resgraph_trace_missed_records_total{daemon="test"} 0`,
		`resgraph_hot_loop_dropped_commits_total{daemon="test"} 0`,
		`resgraph_hot_loop_incomplete_windows_total{daemon="test"} 0`,
	} {
		assert.Contains(t, body, want)
	}
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	assert.Equal(t, 31, n, "25 for the controller (7 counters, 6 gauges, 4 states, the last error, 7 histograms: queue wait, lag, startup, duration per outcome), 3 for the kind (2 counters, a histogram), the trace's missed records, the hot-loop detector's dropped commits and incomplete windows")
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems, "metric names and help follow Prometheus' conventions")
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func TestNamespaceAndDoubleRegistration(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithQControllers(failing{}), runtimetest.WithLogger(zap.NewNop()))
	reg := prometheus.NewRegistry()
	_, err := resgraphprom.Register(reg, e.Runtime.Observe(), resgraphprom.WithNamespace("agent"))
	require.NoError(t, err)
	_, err = resgraphprom.Register(reg, e.Runtime.Observe(), resgraphprom.WithNamespace("agent"))
	assert.Error(t, err, "the same metrics twice are refused by the registry")
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		assert.True(t, strings.HasPrefix(mf.GetName(), "agent_"), mf.GetName())
	}
}

// parking is failing with a retry policy that parks an item at its first
// failure.
type parking struct{ failing }

func (parking) Name() string { return "Parking" }
func (parking) RetryPolicy() controller.RetryPolicy {
	return controller.RetryPolicy{MaxAttempts: 1}
}

// TestParkedItems: an item parked by a QController's retry policy is
// reported as parked and failing.
func TestParkedItems(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithQControllers(parking{}), runtimetest.WithLogger(zap.NewNop()))
	runtimetest.Create(t, e.State, typed.NewDefault[itemSpec, itemDef]("one", itemSpec{}))
	runtimetest.Settle(t, e.Runtime) // the item failed once and is parked
	reg := prometheus.NewRegistry()
	_, err := resgraphprom.Register(reg, e.Runtime.Observe())
	require.NoError(t, err)
	expected := `
# HELP resgraph_controller_parked_items QController items parked by their retry policy until their next change.
# TYPE resgraph_controller_parked_items gauge
resgraph_controller_parked_items{controller="Parking",family="qcontroller"} 1
# HELP resgraph_controller_failing_items QController items whose last run failed, parked ones included.
# TYPE resgraph_controller_failing_items gauge
resgraph_controller_failing_items{controller="Parking",family="qcontroller"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected), "resgraph_controller_parked_items", "resgraph_controller_failing_items"))
}
