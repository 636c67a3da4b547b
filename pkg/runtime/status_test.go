package runtime_test

import (
	"context"
	"encoding/json"
	"expvar"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

func TestMetrics_CountersPerInstance(t *testing.T) {
	t.Parallel()
	for _, enabled := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			st := inmem.NewState()
			opts := []runtimetest.Option{runtimetest.WithState(st), runtimetest.WithRuntimeOptions(runtime.WithMetrics(enabled))}
			ec := newEventCounter(false)
			opts = append(opts, runtimetest.WithControllers(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
				run: func(ctx context.Context, r controller.Runtime, l *zap.Logger) error {
					for {
						select {
						case <-ctx.Done():
							return nil
						case <-r.EventCh():
						}
						time.Sleep(time.Second) // busy for a virtual second
						if _, err := r.List(ctx, kind(typeA)); err != nil {
							return err
						}
						ec.events <- struct{}{}
					}
				}}))
			opts = append(opts, runtimetest.WithQControllers(&funcQController{name: "q", settings: primaryOf(typeA),
				reconcile: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
					time.Sleep(time.Second)
					return nil
				}}))
			e := start(t, opts...)
			time.Sleep(2 * time.Second)
			mustCreate(t, st, newPair(typeA, "1", 1))
			time.Sleep(3 * time.Second)
			synctest.Wait()

			m := e.Runtime.Observe().Metrics()
			require.Len(t, m.Controllers, 2)
			c, q := m.Controllers[0], m.Controllers[1]
			assert.Equal(t, "c", c.Name)
			assert.Equal(t, observe.FamilyController, c.Family)
			assert.Equal(t, observe.FamilyQController, q.Family)
			assert.Equal(t, observe.LifecycleRunning, c.Lifecycle, "state is tracked with metrics off too")
			assert.Equal(t, observe.LifecycleRunning, q.Lifecycle)
			require.Len(t, m.Kinds, 1)
			if !enabled {
				assert.Zero(t, c.Metrics.Reconciles)
				assert.Zero(t, q.Metrics.Reconciles)
				assert.Zero(t, m.Kinds[0].EventsRouted)
				return
			}
			assert.EqualValues(t, 2, c.Metrics.Reconciles, "start event and one change")
			assert.EqualValues(t, 1, c.Metrics.WakeUps)
			assert.Equal(t, time.Second, c.Metrics.BusyTime, "the first pass: from its event to its last runtime call")
			assert.EqualValues(t, 1, q.Metrics.Reconciles)
			assert.EqualValues(t, 1, q.Metrics.WakeUps)
			assert.Equal(t, time.Second, q.Metrics.BusyTime)
			assert.EqualValues(t, 1, m.Kinds[0].EventsRouted)
		})
	}
}

func TestMetrics_PublishExpvar(t *testing.T) {
	t.Parallel()
	rt := unstarted(t)
	require.NoError(t, rt.RegisterController(&funcController{name: "c"}))
	name := fmt.Sprintf("resgraph-test-%p", rt) // unique across -count runs
	require.NoError(t, observe.PublishExpvar(name, rt.Observe()))
	other := unstarted(t)
	assert.Error(t, observe.PublishExpvar(name, other.Observe()), "a name is published once")
	var m observe.Metrics
	require.NoError(t, json.Unmarshal([]byte(expvar.Get(name).String()), &m))
	require.Len(t, m.Controllers, 1)
	assert.Equal(t, "c", m.Controllers[0].Name)
	assert.Empty(t, other.Observe().Metrics().Controllers, "two Runtimes share nothing")

	// The JSON names: lowerCamelCase, zero times and an empty last error
	// omitted (not "0001-01-01T00:00:00Z"), an empty list as [], an
	// empty histogram with its count and quantiles.
	empty := `{"count": 0, "sumNs": 0, "p50Ns": 0, "p90Ns": 0, "p99Ns": 0, "overflow": 0, "buckets": []}`
	assert.JSONEq(t, `{"controllers": [{"name": "c", "family": "controller", "state": "starting",
		"queueLen": 0, "inFlight": 0, "metrics": {
		"reconciles": 0, "crashes": 0, "restarts": 0, "wakeUps": 0, "requeues": 0, "busyTimeNs": 0,
		"queueWait": `+empty+`, "lag": `+empty+`, "startup": `+empty+`, "duration": {},
		"busy": 0, "hotLoops": 0}}], "kinds": [], "hotLoops": [], "traceMissed": 0, "hotLoopDropped": 0, "hotLoopIncomplete": 0}`, expvar.Get(name).String())
}
