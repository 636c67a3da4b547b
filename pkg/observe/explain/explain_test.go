package explain_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

var (
	x  = trace.Ref{Namespace: "ns", Type: "X", ID: "x"}
	y  = trace.Ref{Namespace: "ns", Type: "Y", ID: "x"}
	x2 = trace.Ref{Namespace: "ns", Type: "X", ID: "x", Version: 2}
	x3 = trace.Ref{Namespace: "ns", Type: "X", ID: "x", Version: 3}
)

// history is a trace: a user creates x (v2, routed to B), B reconciles
// it twice (the second time for v3, written by A) and fails once; A's
// passes have no item.
func history() []trace.Record {
	evs := []trace.Record{
		{Time: at(0), Type: trace.Route, Controller: "B", Op: "created", Resource: x2},
		{Time: at(1), Type: trace.ReconcileStart, Controller: "B", Op: "reconcile", Resource: x, Cause: x2, Causes: 1, Duration: time.Millisecond},
		{Time: at(3), Type: trace.ReconcileEnd, Controller: "B", Op: "reconcile", Resource: x, Outcome: trace.OutcomeError, Error: "boom", Duration: 2 * time.Millisecond},
		{Time: at(4), Type: trace.ReconcileStart, Controller: "A", Causes: 2, Cause: x2},
		{Time: at(5), Type: trace.Commit, Controller: "A", Op: "update", Resource: x3},
		{Time: at(5), Type: trace.Route, Controller: "B", Op: "updated", Resource: x3},
		{Time: at(6), Type: trace.ReconcileEnd, Controller: "A", Outcome: trace.OutcomeOK, Duration: 2 * time.Millisecond},
		{Time: at(7), Type: trace.ReconcileStart, Controller: "B", Op: "reconcile", Resource: x, Cause: x3, Causes: 1},
		{Time: at(8), Type: trace.ReconcileEnd, Controller: "B", Op: "reconcile", Resource: x, Outcome: trace.OutcomeOK, Duration: time.Millisecond},
		{Time: at(9), Type: trace.ReconcileStart, Controller: "B", Op: "reconcile", Resource: y},
	}
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
	}
	return evs
}

func TestReconcilesPairsStartsWithEnds(t *testing.T) {
	rs := explain.Reconciles(history(), "B", 0)
	require.Len(t, rs, 3)
	assert.Equal(t, "running", rs[0].Outcome, "newest first; still running")
	assert.Equal(t, y, *rs[0].Item)
	assert.Equal(t, "ok", rs[1].Outcome)
	assert.Equal(t, x3, *rs[1].Cause)
	assert.Equal(t, "error", rs[2].Outcome)
	assert.Equal(t, "boom", rs[2].Error)
	assert.Equal(t, 2*time.Millisecond, rs[2].Duration)
	assert.Equal(t, time.Millisecond, rs[2].Wait)

	a := explain.Reconciles(history(), "A", 0)
	require.Len(t, a, 1)
	assert.Nil(t, a[0].Item, "a Controller's pass has no item")
	assert.Equal(t, uint32(2), a[0].Causes)
	assert.Len(t, explain.Reconciles(history(), "B", 1), 1, "n bounds the result")
	assert.Empty(t, explain.Reconciles(history(), "nobody", 0))
	assert.NotNil(t, explain.Reconciles(nil, "B", 0), "[] in JSON, not null")

	// A start whose end the trace lost is "unknown" once the next start
	// of the same item shows up.
	lostEnd := []trace.Record{
		{Seq: 1, Type: trace.ReconcileStart, Controller: "B", Resource: x},
		{Seq: 2, Type: trace.ReconcileStart, Controller: "B", Resource: x},
	}
	rs = explain.Reconciles(lostEnd, "B", 0)
	assert.Equal(t, []string{"running", "unknown"}, []string{rs[0].Outcome, rs[1].Outcome})
}

func TestChangesListTheReconcilesEachCaused(t *testing.T) {
	cs := explain.Changes(history(), x, 0)
	require.Len(t, cs, 2)
	assert.Equal(t, uint64(3), cs[0].Version)
	assert.Equal(t, "A", cs[0].Writer, "the commit names the writer")
	assert.Equal(t, "update", cs[0].Op)
	require.Len(t, cs[0].Reconciles, 1)
	assert.Equal(t, "B", cs[0].Reconciles[0].Controller)
	assert.Equal(t, "ok", cs[0].Reconciles[0].Outcome)

	assert.Equal(t, uint64(2), cs[1].Version)
	assert.Empty(t, cs[1].Writer, "a change routed without a traced commit came from outside")
	assert.Equal(t, "created", cs[1].Op)
	require.Len(t, cs[1].Reconciles, 2, "B's failed reconcile and A's pass")
	assert.Equal(t, "B", cs[1].Reconciles[0].Controller)
	assert.Equal(t, "A", cs[1].Reconciles[1].Controller)

	assert.Len(t, explain.Changes(history(), x, 1), 1)
	assert.Empty(t, explain.Changes(history(), trace.Ref{Namespace: "ns", Type: "Z", ID: "z"}, 0))
}

// TestSentencesNameEveryState checks the words of each state the issue
// lists: idle and up to date, queued (due when), backing off until T
// after error E (attempt n), running since T, waiting on a finalizer of
// X, blocked because input Y does not exist.
func TestSentencesNameEveryState(t *testing.T) {
	now := at(0)
	item := x
	cases := []struct {
		d    explain.Doing
		want string
	}{
		{explain.Doing{Work: explain.WorkIdle}, "idle and up to date"},
		{explain.Doing{Work: explain.WorkQueued, Resource: &item}, "queued X(ns/x), due now"},
		{explain.Doing{Work: explain.WorkQueued, Due: at(1500)}, "queued, due at 15:04:06.500 (in 1.5s)"},
		{explain.Doing{Work: explain.WorkBackoff, Due: at(2000), Error: "no route", Attempt: 3, Resource: &item},
			`backing off X(ns/x) until at 15:04:07.000 (in 2s) after error "no route" (attempt 3)`},
		{explain.Doing{Work: explain.WorkBackoff, Due: at(2000)}, "waiting for its requeue interval, due at 15:04:07.000 (in 2s)"},
		{explain.Doing{Work: explain.WorkRunning, Since: at(-250), Resource: &item}, "running X(ns/x) since 15:04:04.750 (250ms)"},
		{explain.Doing{Work: explain.WorkWaitingFinalizer, Finalizers: []string{"Cleanup"}, Resource: &item}, "waiting on finalizer Cleanup of X(ns/x)"},
		{explain.Doing{Work: explain.WorkBlocked, Resource: &item}, "blocked because its input X(ns/x) does not exist"},
		{explain.Doing{Work: explain.WorkRestarting, Due: at(100), Error: "oops", Attempt: 1}, `crashed; restarting at 15:04:05.100 (in 100ms) after error "oops" (attempt 1)`},
		{explain.Doing{Work: explain.WorkStarting}, "starting"},
		{explain.Doing{Work: explain.WorkStopped}, "stopped"},
		{explain.Doing{Work: explain.WorkStandby, Since: at(-1000), Detail: "another replica leads election Runtime"}, "standby since 15:04:04.000; another replica leads election Runtime"},
		{explain.Doing{Work: explain.WorkIdle, HotLoop: "A writes X → A", Detail: "3 delayed"}, "idle and up to date; 3 delayed; HOT LOOP: A writes X → A"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.d.Sentence(now))
	}
}

func sampleResource() explain.Resource {
	return explain.Resource{
		Time: at(10), Resource: x, Exists: true, Version: 3, Phase: "running", Owner: "A", Finalizers: []string{"B"},
		Writers:     []explain.Edge{{Controller: "A", Family: "controller", EdgeType: "OutputExclusive", Type: "X"}},
		Readers:     []explain.Edge{{Controller: "B<script>", Family: "qcontroller", EdgeType: "InputQPrimary", Namespace: "ns", Type: "X"}},
		Changes:     explain.Changes(history(), x, 0),
		Controllers: []explain.ControllerDoing{{Controller: "B<script>", Family: "qcontroller", Role: "reads", Doing: explain.Doing{Work: explain.WorkBackoff, Due: at(1010), Error: "<b>boom</b>", Attempt: 2}}},
		Notes:       []string{"the trace keeps 4096 events"},
	}
}

func sampleController() explain.Controller {
	return explain.Controller{
		Time: at(10), Name: "B<script>", Family: "qcontroller",
		Doing:     explain.Doing{Work: explain.WorkRunning, Since: at(9), Resource: &y},
		LastError: "boom", LastErrorAt: at(3),
		Inputs:    []explain.Input{{Edge: explain.Edge{Controller: "B<script>", EdgeType: "InputQPrimary", Namespace: "ns", Type: "X"}, Writers: []string{"A"}}},
		Outputs:   []explain.Output{{Edge: explain.Edge{Controller: "B<script>", EdgeType: "OutputExclusive", Type: "Y"}}},
		Counters:  explain.Counters{Reconciles: 3, Requeues: 1, InFlight: 1},
		Latencies: map[string]explain.Latency{"duration": {Count: 2, P50: time.Millisecond, P99: 2 * time.Millisecond}},
		Items:     []explain.Item{{Item: y, Op: "reconcile", Work: explain.WorkRunning}},
		Recent:    explain.Reconciles(history(), "B", 0),
	}
}

func TestTextRendering(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, explain.WriteText(&b, sampleResource()))
	out := b.String()
	for _, want := range []string{
		"resource X(ns/x)\n",
		"exists: version 3, running, owner A, finalizers B",
		"written by: A (OutputExclusive)",
		"read by: B<script> (InputQPrimary)",
		"v3 at 15:04:05.005: update by A\n    -> B reconcile X(ns/x) at 15:04:05.007: ok in 1ms",
		"v2 at 15:04:05.000: created from outside the Runtime",
		`B<script> (qcontroller, reads): backing off until at 15:04:06.010 (in 1s) after error "<b>boom</b>" (attempt 2)`,
		"notes:\n  the trace keeps 4096 events",
	} {
		assert.Contains(t, out, want)
	}
	b.Reset()
	c := sampleController()
	require.NoError(t, explain.WriteText(&b, &c))
	out = b.String()
	for _, want := range []string{
		"qcontroller B<script>: running Y(ns/x) since 15:04:05.009 (1ms)",
		"last error at 15:04:05.003: boom",
		"reconciles 3, crashes 0, restarts 0, wake-ups 0, requeues 1, queue 0, in flight 1",
		"duration: p50 1ms, p99 2ms over 2",
		"InputQPrimary X(ns) (written by A)",
		"B reconcile X(ns/x) at 15:04:05.001: error in 2ms (waited 1ms) error \"boom\"\n    for X(ns/x)@2",
	} {
		assert.Contains(t, out, want)
	}
	assert.Error(t, explain.WriteText(&b, 42))
}

func TestHTMLRenderingEscapesAndLinks(t *testing.T) {
	for _, fragment := range []bool{false, true} {
		var b bytes.Buffer
		require.NoError(t, explain.WriteHTML(&b, sampleResource(), fragment))
		out := b.String()
		assert.NotContains(t, out, "<script>", "names are escaped")
		assert.Contains(t, out, "B&lt;script&gt;")
		assert.Contains(t, out, `href="?controller=B%3Cscript%3E"`)
		assert.Contains(t, out, `&lt;b&gt;boom&lt;/b&gt;`)
		assert.Equal(t, !fragment, strings.HasPrefix(out, "<!DOCTYPE html>"))
		assert.Contains(t, out, `data-explain="resource"`)

		b.Reset()
		require.NoError(t, explain.WriteHTML(&b, sampleController(), fragment))
		out = b.String()
		assert.NotContains(t, out, "<script>")
		assert.Contains(t, out, `data-state="running"`)
		assert.Contains(t, out, `href="?resource=ns%2FX%2Fx"`, "a cause links to its resource's explanation")
		if !fragment {
			assert.Contains(t, out, `href="?controller=B%3Cscript%3E&amp;format=json"`)
		}
	}
	assert.Error(t, explain.WriteHTML(&bytes.Buffer{}, "nope", false))
}

func TestJSONNaming(t *testing.T) {
	for _, v := range []any{sampleResource(), sampleController()} {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "0001-01-01", "zero times are left out")
		var doc any
		require.NoError(t, json.Unmarshal(b, &doc))
		walkKeys(doc, func(k string) {
			assert.Regexp(t, `^([a-z][A-Za-z0-9]*|duration)$`, k, "lowerCamelCase")
		})
	}
	var back explain.Controller
	b, _ := json.Marshal(sampleController())
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, sampleController().Recent, back.Recent)
}

func walkKeys(v any, f func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			f(k)
			walkKeys(e, f)
		}
	case []any:
		for _, e := range x {
			walkKeys(e, f)
		}
	}
}

func TestParseResource(t *testing.T) {
	r, err := explain.ParseResource("network/Links.net/eth0/sub")
	require.NoError(t, err)
	assert.Equal(t, trace.Ref{Namespace: "network", Type: "Links.net", ID: "eth0/sub"}, r)
	assert.Equal(t, "network/Links.net/eth0/sub", explain.ResourceParam(r))
	for _, bad := range []string{"", "a/b", "a//c", "/b/c", "a/b/"} {
		_, err := explain.ParseResource(bad)
		assert.Error(t, err, bad)
	}
}

// TestChanges_AModifyIsNamedByWhatItDid: a controller's Modify that created
// the resource reads "create", one that changed it "update"; the routes of
// the same versions do not rename them.
func TestChanges_AModifyIsNamedByWhatItDid(t *testing.T) {
	r1, r2, r0 := x, x, x
	r1.Version, r2.Version, r0.Version = 1, 2, 0
	records := []trace.Record{
		{Seq: 1, Time: at(0), Type: trace.Route, Controller: "B", Op: "created", Resource: r1},
		{Seq: 2, Time: at(0), Type: trace.Commit, Controller: "A", Op: "modify", Resource: r1},
		{Seq: 3, Time: at(1), Type: trace.Commit, Controller: "A", Op: "modify", Resource: r2},
		{Seq: 4, Time: at(1), Type: trace.Route, Controller: "B", Op: "updated", Resource: r2},
		{Seq: 5, Time: at(2), Type: trace.Commit, Controller: "A", Op: "modify", Resource: r0},
	}
	var ops []string
	for _, c := range explain.Changes(records, x, 0) {
		ops = append(ops, fmt.Sprintf("v%d %s by %s", c.Version, c.Op, c.Writer))
	}
	assert.Equal(t, []string{"v0 modify by A", "v2 update by A", "v1 create by A"}, ops)
}
