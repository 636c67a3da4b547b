package debughttp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/histogram"
)

func depEdge(ctrl string, et controller.DependencyEdgeType, ns, typ string) controller.DependencyEdge {
	return controller.DependencyEdge{ControllerName: ctrl, EdgeType: et, ResourceNamespace: ns, ResourceType: typ}
}

// noWriter marks e as the Runtime does an input of a kind no controller
// writes.
func noWriter(e controller.DependencyEdge) controller.DependencyEdge {
	e.NoWriter = true
	return e
}

// liveEdgeSummary is an edge without its counts, for comparisons.
type liveEdgeSummary struct {
	From, To string
	Inferred bool
}

func summaries(edges []LiveEdge) []liveEdgeSummary {
	var out []liveEdgeSummary
	for _, e := range edges {
		out = append(out, liveEdgeSummary{e.From, e.To, e.Inferred})
	}
	return out
}

// TestLiveGraph_ANodePerNamespaceAndType: resource nodes are kinds, not
// types — a merge controller reading network-config/HostnameSpec and
// writing HostnameSpec is drawn writing network/HostnameSpec (where the
// type's readers are, not where it reads it), never reading its own
// output; once the Runtime saw it write, the namespaces written are used.
func TestLiveGraph_ANodePerNamespaceAndType(t *testing.T) {
	g := &controller.DependencyGraph{Edges: []controller.DependencyEdge{
		depEdge("Merge", controller.EdgeOutputExclusive, "", "HostnameSpec"),
		noWriter(depEdge("Merge", controller.EdgeInputStrong, "network-config", "HostnameSpec")),
		depEdge("Reader", controller.EdgeInputWeak, "network", "HostnameSpec"),
		depEdge("Lonely", controller.EdgeOutputShared, "", "Unread"),
		depEdge("Addr", controller.EdgeOutputExclusive, "", "AddressSpec"),
		depEdge("Addr", controller.EdgeInputDestroyReady, "network", "AddressSpec"),
		depEdge("Other", controller.EdgeInputWeak, "elsewhere", "AddressSpec"),
		depEdge("Declared", controller.EdgeOutputShared, "elsewhere", "AddressSpec"),
	}}
	m := observe.Metrics{Controllers: []observe.ControllerStatus{{Name: "Addr"}, {Name: "Declared"}, {Name: "Lonely"}, {Name: "Merge"}, {Name: "Other"}, {Name: "Reader"}, {Name: "Unwired"}}}
	nodes, edges := buildLiveGraph(g, m)
	var ids []string
	for _, n := range nodes {
		ids = append(ids, n.ID)
	}
	assert.Equal(t, []string{
		"controller:Addr", "controller:Declared", "controller:Lonely", "controller:Merge", "controller:Other", "controller:Reader", "controller:Unwired",
		"resource:/Unread", "resource:elsewhere/AddressSpec", "resource:network/AddressSpec", "resource:network/HostnameSpec",
		"resource:network-config/HostnameSpec",
	}, ids, "a node per controller (edges or not) and per kind; an unread output's namespace is unknown")
	assert.Equal(t, []liveEdgeSummary{
		{"controller:Merge", "resource:network/HostnameSpec", true},
		{"resource:network-config/HostnameSpec", "controller:Merge", false},
		{"resource:network/HostnameSpec", "controller:Reader", false},
		{"controller:Lonely", "resource:/Unread", true},
		{"controller:Addr", "resource:network/AddressSpec", false},
		{"resource:network/AddressSpec", "controller:Addr", false},
		{"resource:elsewhere/AddressSpec", "controller:Other", false},
		{"controller:Declared", "resource:elsewhere/AddressSpec", false},
	}, summaries(edges), "a destroy-ready input names the output's namespace; an output edge may name it")
	byID := map[string]LiveNode{}
	for _, n := range nodes {
		byID[n.ID] = n
	}
	assert.Equal(t, "network-config", byID["resource:network-config/HostnameSpec"].Namespace)
	marked := func(id string) bool { return len(byID[id].Marks) == 1 && byID[id].Marks[0].Class == MarkNoWriter }
	assert.True(t, marked("resource:network-config/HostnameSpec"), "the Runtime found no writer")
	assert.False(t, marked("resource:elsewhere/AddressSpec"), "Declared writes it")
	assert.False(t, marked("resource:network/HostnameSpec"))
	for _, e := range edges {
		assert.Nil(t, e.Count, "metrics off: nothing counted")
	}

	// The Runtime saw Merge write HostnameSpec in two namespaces.
	m.Controllers[3].Metrics.Edges = []observe.EdgeCount{ // Merge
		{EdgeType: "InputStrong", Namespace: "network-config", Type: "HostnameSpec", Count: 3},
		{EdgeType: "OutputExclusive", Namespace: "network", Type: "HostnameSpec", Count: 5},
		{EdgeType: "OutputExclusive", Namespace: "staging", Type: "HostnameSpec", Count: 1},
	}
	_, edges = buildLiveGraph(g, m)
	assert.Equal(t, liveEdgeSummary{"controller:Merge", "resource:network/HostnameSpec", false}, summaries(edges)[0])
	assert.Equal(t, liveEdgeSummary{"controller:Merge", "resource:staging/HostnameSpec", false}, summaries(edges)[1])
	require.NotNil(t, edges[0].Count)
	assert.EqualValues(t, 5, *edges[0].Count)
	assert.EqualValues(t, 3, *edges[2].Count)
	require.NotNil(t, edges[3].Count, "metrics on: an edge not used yet counts 0")
	assert.Zero(t, *edges[3].Count)
}

// TestLiveRates_OverTheWindow: rates are differences of counts over the
// window, computed at the server's clock: none right after the start
// (shorter than RateWindow/10), then over what was seen, then over the
// newest sample at least RateWindow old; the lag p99 is that of the
// window's reconciles.
func TestLiveRates_OverTheWindow(t *testing.T) {
	start := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	clock := start
	obs := &countingObserver{}
	p := newLivePage(obs, func() time.Time { return clock })
	ctx := t.Context()

	obs.reconciles, obs.routed = 10, 10
	doc := p.document(ctx)
	assert.Zero(t, doc.Window)
	assert.Nil(t, doc.Controllers[0].ReconcileRate)

	clock = start.Add(2 * time.Second)
	obs.reconciles, obs.routed = 30, 40
	obs.lag.Observe(3 * time.Millisecond)
	doc = p.document(ctx)
	assert.Equal(t, 2*time.Second, doc.Window, "since the handler was built")
	require.NotNil(t, doc.Controllers[0].ReconcileRate)
	assert.InDelta(t, 15, *doc.Controllers[0].ReconcileRate, 1e-9)
	require.NotNil(t, doc.Edges[0].Rate)
	assert.InDelta(t, 20, *doc.Edges[0].Rate, 1e-9)
	require.NotNil(t, doc.Nodes[1].ChangeRate)
	assert.InDelta(t, 20, *doc.Nodes[1].ChangeRate, 1e-9)
	require.NotNil(t, doc.Controllers[0].LagP99)
	assert.Equal(t, 3*time.Millisecond, *doc.Controllers[0].LagP99)

	for i := 3; i <= 20; i++ {
		clock = start.Add(time.Duration(i) * time.Second)
		obs.reconciles += 100
		obs.routed += 10
		doc = p.document(ctx)
	}
	assert.Equal(t, RateWindow, doc.Window, "the sample 10 s before")
	assert.InDelta(t, 100, *doc.Controllers[0].ReconcileRate, 1e-9)
	assert.InDelta(t, 10, *doc.Edges[0].Rate, 1e-9)
	assert.Nil(t, doc.Controllers[0].LagP99, "no reconcile with lag in the window")
	assert.LessOrEqual(t, len(p.rates.samples), 12, "samples no rate needs are dropped")
}

// countingObserver is a Runtime with one QController "q" reading kind
// ns/T, whose counters the test sets.
type countingObserver struct {
	fakeObserver
	reconciles, routed uint64
	lag                histogram.Histogram
}

func (o *countingObserver) Metrics() observe.Metrics {
	return observe.Metrics{
		Controllers: []observe.ControllerStatus{{Name: "q", Family: observe.FamilyQController, Lifecycle: observe.LifecycleRunning, Metrics: observe.ControllerMetrics{
			Reconciles: o.reconciles, Lag: o.lag.Snapshot(),
			Edges: []observe.EdgeCount{{EdgeType: "InputQPrimary", Namespace: "ns", Type: "T", Count: o.routed}},
		}}},
		Kinds: []observe.KindMetrics{{Namespace: "ns", Type: "T", EventsRouted: o.routed}},
	}
}

func (o *countingObserver) Graph() (*controller.DependencyGraph, error) {
	return &controller.DependencyGraph{Edges: []controller.DependencyEdge{depEdge("q", controller.EdgeInputQPrimary, "ns", "T")}}, nil
}
