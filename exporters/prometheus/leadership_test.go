package prometheus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	resgraphprom "github.com/resgraph/resgraph/exporters/prometheus"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
)

// ledObserver reports the statuses of a Runtime with leadership: one
// controller this replica leads, one it is a standby for, and one of an
// Runtime without leadership. (The Runtime side, which fills the statuses,
// is tested against a real etcd in the etcd state's module.)
type ledObserver struct{}

var since = time.Unix(1700000000, 0)

func (ledObserver) Controllers() []observe.ControllerStatus {
	return []observe.ControllerStatus{
		{Name: "Led", Family: observe.FamilyController, Lifecycle: observe.LifecycleRunning,
			Leadership: &observe.Leadership{Election: "controller/Led", Role: observe.RoleLeader, Since: since, Term: 42}},
		{Name: "Plain", Family: observe.FamilyController, Lifecycle: observe.LifecycleRunning},
		{Name: "Standby", Family: observe.FamilyQController, Lifecycle: observe.LifecycleStarting,
			Leadership: &observe.Leadership{Election: "controller/Standby", Role: observe.RoleStandby, Since: since}},
	}
}

func (o ledObserver) Metrics() observe.Metrics {
	return observe.Metrics{Controllers: o.Controllers()}
}
func (ledObserver) HotLoops() []observe.HotLoop               { return nil }
func (ledObserver) Activity(context.Context) observe.Activity { return observe.Activity{} }
func (ledObserver) Graph() (*controller.DependencyGraph, error) {
	return &controller.DependencyGraph{}, nil
}
func (ledObserver) Trace() *trace.Ring { return nil }
func (ledObserver) Explain(context.Context, resource.Pointer) (explain.Resource, error) {
	return explain.Resource{}, nil
}
func (ledObserver) ExplainController(context.Context, string) (explain.Controller, error) {
	return explain.Controller{}, nil
}

// TestLeadershipGauges: with leadership, each controller has a leader
// gauge (1: this replica leads its election, 0: standby) labelled with
// its election, the term, and when it took its role; a controller of an
// Runtime without leadership has none.
func TestLeadershipGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := resgraphprom.Register(reg, ledObserver{})
	require.NoError(t, err)
	expected := `
# HELP resgraph_controller_leader With leadership: 1 while this replica leads the controller's election (runs it), 0 while it is a standby.
# TYPE resgraph_controller_leader gauge
resgraph_controller_leader{controller="Led",election="controller/Led",family="controller"} 1
resgraph_controller_leader{controller="Standby",election="controller/Standby",family="qcontroller"} 0
# HELP resgraph_controller_leader_term With leadership: the term this replica leads (while standby: the last one it led; 0: none).
# TYPE resgraph_controller_leader_term gauge
resgraph_controller_leader_term{controller="Led",family="controller"} 42
resgraph_controller_leader_term{controller="Standby",family="qcontroller"} 0
# HELP resgraph_controller_leader_role_since_timestamp_seconds With leadership: when the controller became leader or standby in this replica.
# TYPE resgraph_controller_leader_role_since_timestamp_seconds gauge
resgraph_controller_leader_role_since_timestamp_seconds{controller="Led",family="controller"} 1.7e+09
resgraph_controller_leader_role_since_timestamp_seconds{controller="Standby",family="qcontroller"} 1.7e+09
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected),
		"resgraph_controller_leader", "resgraph_controller_leader_term", "resgraph_controller_leader_role_since_timestamp_seconds"))
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	require.Empty(t, problems)
}
