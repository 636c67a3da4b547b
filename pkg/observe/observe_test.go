package observe_test

import (
	"context"
	"encoding/json"
	"expvar"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStateAndFamilyStrings: the enums print, and travel in JSON, as their
// lowercase names; an unknown name is refused, an out-of-range value prints
// as a number.
func TestStateAndFamilyStrings(t *testing.T) {
	states := map[observe.Lifecycle]string{
		observe.LifecycleStarting: "starting", observe.LifecycleRunning: "running",
		observe.LifecycleBackoff: "backoff", observe.LifecycleStopped: "stopped",
	}
	for s, name := range states {
		assert.Equal(t, name, s.String())
		b, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, `"`+name+`"`, string(b))
		var back observe.Lifecycle
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, s, back)
	}
	assert.Equal(t, observe.LifecycleStarting, observe.Lifecycle(0), "the zero value is starting")
	assert.Equal(t, "State(9)", observe.Lifecycle(9).String())
	var s observe.Lifecycle
	assert.Error(t, json.Unmarshal([]byte(`"runnin"`), &s))

	families := map[observe.Family]string{observe.FamilyController: "controller", observe.FamilyQController: "qcontroller"}
	for f, name := range families {
		assert.Equal(t, name, f.String())
		b, err := json.Marshal(f)
		require.NoError(t, err)
		assert.Equal(t, `"`+name+`"`, string(b))
		var back observe.Family
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, f, back)
	}
	assert.Equal(t, "Family(7)", observe.Family(7).String())
	var f observe.Family
	assert.Error(t, json.Unmarshal([]byte(`"kind"`), &f))
}

// TestControllerStatusJSON: what a person reads on top, counters under
// "metrics"; zero times, an empty error and empty lists omitted.
func TestControllerStatusJSON(t *testing.T) {
	b, err := json.Marshal(observe.ControllerStatus{Name: "c", Family: observe.FamilyQController, Lifecycle: observe.LifecycleRunning,
		Metrics: observe.ControllerMetrics{Reconciles: 3}})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, "qcontroller", m["family"])
	assert.Equal(t, "running", m["state"])
	for _, omitted := range []string{"backoffUntil", "lastError", "lastErrorAt", "recovered", "recoveredAt", "failingItems", "parkedItems", "parked", "hotLoop"} {
		assert.NotContains(t, m, omitted)
	}
	assert.Equal(t, 3.0, m["metrics"].(map[string]any)["reconciles"])
}

// TestActivityIdleAndString: idle when no controller is busy and no watch
// behind; String names what is busy.
func TestActivityIdleAndString(t *testing.T) {
	a := observe.Activity{
		Controllers: []observe.ControllerActivity{{Name: "a"}, {Name: "b", Busy: true, Why: "2 items due"}},
		Kinds:       []observe.KindActivity{{Namespace: "ns", Type: "T", Behind: true, Why: "not bootstrapped yet"}},
	}
	assert.False(t, a.Idle())
	assert.Equal(t, "controller b: 2 items due\nwatch of T(ns): not bootstrapped yet", a.String())
	a.Controllers[1].Busy = false
	assert.False(t, a.Idle(), "a watch behind")
	a.Kinds[0].Behind = false
	assert.True(t, a.Idle())
	assert.Equal(t, "idle", a.String())
}

// fixed is an Observer with fixed metrics.
type fixed struct{ calls *atomic.Int32 }

func (f fixed) Controllers() []observe.ControllerStatus {
	return []observe.ControllerStatus{{Name: "c", Lifecycle: observe.LifecycleRunning}}
}

func (f fixed) Metrics() observe.Metrics {
	f.calls.Add(1)
	return observe.Metrics{Controllers: f.Controllers(), Kinds: []observe.KindMetrics{}, HotLoops: []observe.HotLoop{}}
}

func (fixed) HotLoops() []observe.HotLoop                 { return nil }
func (fixed) Activity(context.Context) observe.Activity   { return observe.Activity{} }
func (fixed) Graph() (*controller.DependencyGraph, error) { return &controller.DependencyGraph{}, nil }
func (fixed) Trace() *trace.Ring                          { return nil }
func (fixed) Explain(context.Context, resource.Pointer) (explain.Resource, error) {
	return explain.Resource{}, nil
}

func (fixed) ExplainController(context.Context, string) (explain.Controller, error) {
	return explain.Controller{}, nil
}

// TestPublishExpvar: the metrics are published under the caller's name and
// computed on each read; a name is published once; an empty name or a nil
// observer is refused.
func TestPublishExpvar(t *testing.T) {
	name := fmt.Sprintf("observe-test-%p", t)
	o := fixed{calls: &atomic.Int32{}}
	require.NoError(t, observe.PublishExpvar(name, o))
	assert.Zero(t, o.calls.Load(), "nothing computed before a read")
	var m observe.Metrics
	require.NoError(t, json.Unmarshal([]byte(expvar.Get(name).String()), &m))
	require.Len(t, m.Controllers, 1)
	assert.Equal(t, observe.LifecycleRunning, m.Controllers[0].Lifecycle)
	_ = expvar.Get(name).String()
	assert.EqualValues(t, 2, o.calls.Load(), "computed on each read")

	assert.ErrorContains(t, observe.PublishExpvar(name, o), "already published")
	assert.Error(t, observe.PublishExpvar("", o))
	assert.Error(t, observe.PublishExpvar(name+"-nil", nil))
	assert.Nil(t, expvar.Get(name+"-nil"), "nothing published")
}
