package explain_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// facts is a Runtime with a chain: Writer (a Controller) writes X, which
// Reader (a QController) reads as its primary input, writing Y; Cleanup
// reads X with an ID filter of "other".
func facts() *explain.Facts {
	return &explain.Facts{
		Now: at(100),
		Edges: []explain.Edge{
			{Controller: "Cleanup", Family: "controller", EdgeType: "InputStrong", Namespace: "ns", Type: "X", ID: "other"},
			{Controller: "Reader", Family: "qcontroller", EdgeType: "InputQPrimary", Namespace: "ns", Type: "X"},
			{Controller: "Reader", Family: "qcontroller", EdgeType: "OutputExclusive", Type: "Y"},
			{Controller: "Writer", Family: "controller", EdgeType: "InputWeak", Namespace: "ns", Type: "Y"},
			{Controller: "Writer", Family: "controller", EdgeType: "OutputExclusive", Type: "X"},
		},
		Controllers: []explain.ControllerFacts{
			{Name: "Cleanup", Family: "controller", Lifecycle: "running"},
			{Name: "Reader", Family: "qcontroller", Lifecycle: "running", Delayed: 1, NextDue: at(2100), LastError: "boom",
				Items: []explain.Item{{Item: x, Op: "reconcile", Work: explain.WorkBackoff, Due: at(2100), Attempt: 3}}},
			{Name: "Writer", Family: "controller", Lifecycle: "running"},
		},
		Records: []trace.Record{
			{Seq: 1, Time: at(10), Type: trace.Commit, Controller: "Writer", Op: "update", Resource: x2},
			{Seq: 2, Time: at(11), Type: trace.ReconcileStart, Controller: "Reader", Op: "reconcile", Resource: x, Cause: x2, Causes: 1},
			{Seq: 3, Time: at(12), Type: trace.ReconcileEnd, Controller: "Reader", Op: "reconcile", Resource: x, Outcome: trace.OutcomeError, Error: "no route"},
			{Seq: 4, Time: at(12), Type: trace.Backoff, Controller: "Reader", Resource: x, Due: at(2100), Attempt: 3, Error: "no route"},
		},
		TraceSize: 4096,
	}
}

func doingOf(t *testing.T, r explain.Resource, name string) explain.Doing {
	t.Helper()
	for _, c := range r.Controllers {
		if c.Controller == name {
			return c.Doing
		}
	}
	t.Fatalf("%s is not among the controllers of %s", name, r.Resource)
	return explain.Doing{}
}

func TestBuildResource(t *testing.T) {
	f := facts()
	r := explain.BuildResource(f, explain.ResourceFacts{Ref: x, Exists: true, Version: 2, Phase: "running", Owner: "Writer"})
	assert.Equal(t, []string{"Writer"}, controllersOf(r.Writers))
	assert.Equal(t, []string{"Reader"}, controllersOf(r.Readers), "Cleanup's input is limited to another ID")
	require.Len(t, r.Controllers, 2)
	assert.Equal(t, "reads", r.Controllers[0].Role)
	assert.Equal(t, "writes", r.Controllers[1].Role)

	d := doingOf(t, r, "Reader")
	assert.Equal(t, explain.WorkBackoff, d.Work, "the item of x backs off")
	assert.Equal(t, "no route", d.Error, "the error comes from the trace")
	assert.Equal(t, 3, d.Attempt)
	assert.Equal(t, at(2100), d.Due)
	assert.Equal(t, `backing off X(ns/x) until at 15:04:07.100 (in 2s) after error "no route" (attempt 3)`, d.Sentence(f.Now))
	assert.Equal(t, explain.WorkIdle, doingOf(t, r, "Writer").Work)
	require.Len(t, r.Changes, 1)
	assert.Equal(t, "Writer", r.Changes[0].Writer)
	require.Len(t, r.Changes[0].Reconciles, 1)
	assert.Equal(t, "error", r.Changes[0].Reconciles[0].Outcome)
	assert.Empty(t, r.Notes)

	// Tearing down with a finalizer: its owner waits on it.
	f.Records = append(f.Records, trace.Record{Seq: 5, Time: at(50), Type: trace.FinalizerWait, Controller: "Writer", Resource: x, Detail: "Reader"})
	r = explain.BuildResource(f, explain.ResourceFacts{Ref: x, Exists: true, Phase: "tearingDown", Owner: "Writer", Finalizers: []string{"Reader"}})
	d = doingOf(t, r, "Writer")
	assert.Equal(t, explain.WorkWaitingFinalizer, d.Work)
	assert.Equal(t, at(50), d.Since)
	assert.Equal(t, "waiting on finalizer Reader of X(ns/x)", d.Sentence(f.Now))

	// Absent, and the input Writer would write it from is missing.
	y1 := trace.Ref{Namespace: "ns", Type: "Y", ID: "x"}
	r = explain.BuildResource(f, explain.ResourceFacts{Ref: x, Missing: map[string]trace.Ref{"Writer": y1}})
	assert.False(t, r.Exists)
	assert.Equal(t, "blocked because its input Y(ns/x) does not exist", doingOf(t, r, "Writer").Sentence(f.Now))

	f.TraceSize = 0
	f.Records = nil
	r = explain.BuildResource(f, explain.ResourceFacts{Ref: x})
	assert.Equal(t, []string{"the trace is off: no history (runtime.WithTrace)"}, r.Notes)
	assert.Empty(t, r.Changes)
}

func controllersOf(es []explain.Edge) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Controller)
	}
	return out
}

func TestBuildControllerStates(t *testing.T) {
	f := facts()
	c, ok := explain.BuildController(f, "Reader")
	require.True(t, ok)
	assert.Equal(t, explain.WorkBackoff, c.Doing.Work)
	assert.Equal(t, "no route", c.Doing.Error)
	assert.Equal(t, 3, c.Doing.Attempt)
	require.Len(t, c.Inputs, 1)
	assert.Equal(t, []string{"Writer"}, c.Inputs[0].Writers)
	require.Len(t, c.Outputs, 1)
	assert.Equal(t, []string{"Writer"}, c.Outputs[0].Readers)
	require.Len(t, c.Items, 1)
	assert.Equal(t, "no route", c.Items[0].Error, "an item's error comes from the trace")
	require.Len(t, c.Recent, 1)
	assert.Equal(t, "error", c.Recent[0].Outcome)

	_, ok = explain.BuildController(f, "nobody")
	assert.False(t, ok)

	// Each state of a controller as a whole.
	cases := []struct {
		facts explain.ControllerFacts
		extra []trace.Record
		want  string
	}{
		{explain.ControllerFacts{Lifecycle: "running"}, nil, "idle and up to date"},
		{explain.ControllerFacts{Lifecycle: "running", Busy: true}, nil, "queued, due now"},
		{explain.ControllerFacts{Lifecycle: "running", Busy: true, Running: true},
			[]trace.Record{{Seq: 9, Time: at(40), Type: trace.ReconcileStart, Controller: "C"}}, "running since 15:04:05.040 (60ms)"},
		{explain.ControllerFacts{Family: "qcontroller", Lifecycle: "running", InFlight: 1, Due: 2},
			[]trace.Record{{Seq: 9, Time: at(90), Type: trace.ReconcileStart, Controller: "C", Resource: y}}, "running Y(ns/x) since 15:04:05.090 (10ms); 2 due, 1 in flight, 0 delayed"},
		{explain.ControllerFacts{Lifecycle: "backoff", RestartAt: at(600), LastError: "Run: oops"},
			[]trace.Record{{Seq: 9, Time: at(90), Type: trace.Crash, Controller: "C", Attempt: 2}}, `crashed; restarting at 15:04:05.600 (in 500ms) after error "Run: oops" (attempt 2)`},
		{explain.ControllerFacts{Lifecycle: "starting", Why: "waiting for its inputs"}, nil, "starting; waiting for its inputs"},
		{explain.ControllerFacts{Lifecycle: "stopped"}, nil, "stopped"},
		{explain.ControllerFacts{Lifecycle: "running", Delayed: 1, NextDue: at(300)},
			[]trace.Record{{Seq: 9, Type: trace.Requeue, Controller: "C", Resource: y, Due: at(300)}}, "waiting Y(ns/x) for its requeue interval, due at 15:04:05.300 (in 200ms)"},
		{explain.ControllerFacts{Lifecycle: "running", HotLoop: "C writes X(ns/x) → C"}, nil, "idle and up to date; HOT LOOP: C writes X(ns/x) → C"},
		{explain.ControllerFacts{Lifecycle: "stopped", Standby: true, StandbySince: at(50), Election: "controller/C"}, nil,
			"standby since 15:04:05.050; another replica leads election controller/C"},
		{explain.ControllerFacts{Lifecycle: "running", Leadership: "leader of election controller/C since ... (term 7)"}, nil, "idle and up to date"},
	}
	for _, tc := range cases {
		tc.facts.Name = "C"
		if tc.facts.Family == "" {
			tc.facts.Family = "controller"
		}
		f := &explain.Facts{Now: at(100), Controllers: []explain.ControllerFacts{tc.facts}, Records: tc.extra, TraceSize: 100}
		c, ok := explain.BuildController(f, "C")
		require.True(t, ok)
		assert.Equal(t, tc.want, c.Doing.Sentence(f.Now))
	}
}

// TestBuildControllerLeadership: with leadership, a controller's
// explanation says its part in its election, and a standby's state is
// standby, for the controller as for the resources it reads or writes.
func TestBuildControllerLeadership(t *testing.T) {
	f := facts()
	f.Controllers[1].Leadership = "standby in election controller/Reader since 15:04:05.000"
	f.Controllers[1].Standby, f.Controllers[1].StandbySince, f.Controllers[1].Election = true, at(0), "controller/Reader"
	c, ok := explain.BuildController(f, "Reader")
	require.True(t, ok)
	assert.Equal(t, explain.WorkStandby, c.Doing.Work)
	assert.Equal(t, "standby in election controller/Reader since 15:04:05.000", c.Leadership)
	r := explain.BuildResource(f, explain.ResourceFacts{Ref: x, Exists: true, Version: 2, Phase: "running", Owner: "Writer"})
	assert.Equal(t, explain.WorkStandby, doingOf(t, r, "Reader").Work)
	var b strings.Builder
	require.NoError(t, explain.WriteText(&b, c))
	assert.Contains(t, b.String(), "leadership: standby in election controller/Reader")
	b.Reset()
	require.NoError(t, explain.WriteHTML(&b, c, true))
	assert.Contains(t, b.String(), "leadership: standby in election controller/Reader")
}
