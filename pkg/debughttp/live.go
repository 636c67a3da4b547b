package debughttp

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/observe"
)

// liveAssets are the live graph page and its script and style: the page
// needs nothing but what the handler serves.
//
//go:embed live/index.html live/live.js live/live.css
var liveAssets embed.FS

// Live controller states, as [LiveController.State] reports them. They
// refine a controller's lifecycle (observe.Lifecycle): a running controller
// is busy, idle, retrying or in a hot loop here.
const (
	LiveBusy     = "busy"     // a reconcile is running or due
	LiveIdle     = "idle"     // nothing due, nothing in flight
	LiveRetrying = "retrying" // items wait out a retry backoff after failing
	LiveCrashed  = "crashed"  // Run crashed; it restarts after its backoff (or, parked, when an input changes)
	LiveHotLoop  = "hotLoop"  // part of a flagged hot loop
	LiveStarting = "starting" // not started yet
	LiveStopped  = "stopped"  // the Runtime stopped
	LiveStandby  = "standby"  // another replica leads its election and runs it
)

// Live node kinds, as [LiveNode.Kind] reports them.
const (
	LiveNodeController = "controller"
	LiveNodeResource   = "resource"
)

// RateWindow is the span the live document's rates are computed over:
// the counts of the newest sample at least this old are subtracted from
// the current ones (see [LiveDocument.Window]).
const RateWindow = 10 * time.Second

// LiveDocument is the JSON document of /debug/graph/live?format=json, which
// the live page polls: the graph with a node per controller and per
// resource kind (namespace and type), every controller's state, and the
// traffic along every edge with its rate — computed here, on the server,
// so that the page shows the same numbers whatever its own clock does (a
// headless browser under virtual time included).
type LiveDocument struct {
	Time time.Time `json:"time"`
	// Window is the span the rates cover: RateWindow, or less while the
	// handler has not seen that long yet, or more when nobody asked for
	// the document for a while (the rates are then averages over it); 0
	// when there is no rate yet. In JSON windowNs, in nanoseconds.
	Window time.Duration `json:"windowNs"`
	// Nodes are the controllers, sorted by name, then the resource kinds,
	// sorted by namespace and type.
	Nodes []LiveNode `json:"nodes"`
	// Edges are the declared inputs (resource kind → controller) and
	// outputs (controller → resource kind), by controller.
	Edges []LiveEdge `json:"edges"`
	// Controllers are sorted by name: the state of each controller node.
	Controllers []LiveController `json:"controllers"`
}

// LiveNode is one node of the live graph: a controller, or the resources
// of one kind.
type LiveNode struct {
	// ID identifies the node: "controller:NAME" or
	// "resource:NAMESPACE/TYPE".
	ID string `json:"id"`
	// Kind is [LiveNodeController] or [LiveNodeResource].
	Kind string `json:"kind"`
	// Name is the controller's name or the resource type.
	Name string `json:"name"`
	// Namespace is a resource node's namespace; "" for an output type no
	// reader and no write has placed in a namespace yet.
	Namespace string `json:"namespace,omitempty"`
	// Changes counts the changes of a resource kind the Runtime routed
	// (null when it does not watch the kind, or with metrics off), and
	// ChangeRate their rate per second over the document's Window (null
	// when unknown).
	Changes    *uint64  `json:"changes"`
	ChangeRate *float64 `json:"changeRate"`
	// Marks are short facts about the node, shown as badges.
	Marks []LiveMark `json:"marks,omitempty"`
}

// LiveMark is a badge on a node: a short text, a class the page styles it
// by, and a longer explanation for its tooltip. Marks are how facts about
// a node reach the page: the page draws every mark it is given.
type LiveMark struct {
	Text  string `json:"text"`
	Class string `json:"class"`
	Title string `json:"title,omitempty"`
}

// Marks the live document sets.
const (
	// MarkNoWriter marks a resource kind that controllers read and no
	// registered controller writes (controller.DependencyEdge.NoWriter):
	// only writers outside the Runtime change it and wake its readers.
	MarkNoWriter = "noWriter"
	// MarkHotLoop marks a controller that is part of a flagged hot loop.
	MarkHotLoop = "hotLoop"
	// MarkLeader and MarkStandby mark a controller this replica leads, or
	// one another replica leads (the Runtime runs with leadership).
	MarkLeader  = "leader"
	MarkStandby = "standby"
)

// LiveEdge is one edge of the live graph.
type LiveEdge struct {
	// From and To are node IDs: the resource kind and the controller of an
	// input, the controller and the resource kind of an output.
	From       string `json:"from"`
	To         string `json:"to"`
	Controller string `json:"controller"`
	// EdgeType is the edge type ("InputWeak", ..., "OutputShared").
	EdgeType string `json:"edgeType"`
	// ID is set for an input limited to one ID.
	ID string `json:"id,omitempty"`
	// Count is the traffic along the edge (see observe.EdgeCount): for an
	// input what was delivered through it, for an output the writes to
	// its kind; null with metrics off. Rate is its rate per second over
	// the document's Window (null when unknown).
	Count *uint64  `json:"count"`
	Rate  *float64 `json:"rate"`
	// Inferred marks an output whose namespace the Runtime has not seen
	// written yet: it is drawn to the namespaces where other controllers
	// read its type.
	Inferred bool `json:"inferred,omitempty"`

	// ns and typ are the resource kind's.
	ns, typ string
}

// LiveController is one controller's live state.
type LiveController struct {
	Name   string         `json:"name"`
	Family observe.Family `json:"family"`
	// State is one of the Live* states.
	State string `json:"state"`
	// Why is what the Runtime's activity report says it is doing.
	Why         string    `json:"why,omitempty"`
	Reconciles  uint64    `json:"reconciles"`
	QueueLen    int       `json:"queueLen"`
	InFlight    int       `json:"inFlight"`
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	// ReconcileRate is the reconciles per second over the document's
	// Window (null when unknown).
	ReconcileRate *float64 `json:"reconcileRate"`
	// LagP99 is the 99th percentile of the end-to-end lag of the
	// reconciles that started in the Window, LagCount how many there were
	// (LagP99 is null when none); in JSON lagP99Ns, in nanoseconds.
	LagP99   *time.Duration `json:"lagP99Ns"`
	LagCount uint64         `json:"lagCount"`
	// Busy is its busy fraction (observe.ControllerMetrics.Busy).
	Busy float64 `json:"busy"`
	// HotLoop describes the hot loop it is part of, when one is flagged.
	HotLoop string `json:"hotLoop,omitempty"`
	// Leadership is its part in its election (leader or standby, since
	// when, the term), when the Runtime runs with leadership.
	Leadership *observe.Leadership `json:"leadership,omitempty"`
}

// livePage serves /debug/graph/live (the page, or the document with
// ?format=json) and its assets under /debug/graph/live/.
type livePage struct {
	obs   observe.Observer
	now   func() time.Time
	rates *rateSampler
}

// newLivePage returns the live page of o, its rates counted from now.
func newLivePage(o observe.Observer, now func() time.Time) *livePage {
	p := &livePage{obs: o, now: now, rates: &rateSampler{}}
	p.rates.sample(now(), countersOf(o.Metrics()))
	return p
}

func (p *livePage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if name, ok := strings.CutPrefix(r.URL.Path, "/debug/graph/live/"); ok {
		p.serveAsset(w, r, name)
		return
	}
	if !wantsJSON(r) {
		p.serveAsset(w, r, "index.html")
		return
	}
	doc := p.document(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	_ = enc.Encode(doc)
}

// serveAsset serves one embedded file.
func (p *livePage) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	b, err := fs.ReadFile(liveAssets, "live/"+name)
	if err != nil || name == "" {
		http.NotFound(w, r)
		return
	}
	ct := "text/html; charset=utf-8"
	switch {
	case strings.HasSuffix(name, ".js"):
		ct = "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".css"):
		ct = "text/css; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(b)
}

// document builds the live document from the Runtime's graph, statuses,
// activity and metrics, and the rates since the sample RateWindow ago.
func (p *livePage) document(ctx context.Context) LiveDocument {
	now := p.now()
	m := p.obs.Metrics()
	act := p.obs.Activity(ctx)
	g, err := p.obs.Graph()
	if err != nil {
		g = nil
	}
	cur := countersOf(m)
	base, window := p.rates.since(now)
	doc := LiveDocument{Time: now, Window: window, Controllers: []LiveController{}}
	doc.Nodes, doc.Edges = buildLiveGraph(g, m)
	rate := func(key string, n uint64) *float64 {
		if window <= 0 {
			return nil
		}
		r := float64(n-min(n, base.counts[key])) / window.Seconds()
		return &r
	}
	for i := range doc.Nodes {
		n := &doc.Nodes[i]
		if n.Changes != nil {
			n.ChangeRate = rate(kindKey(n.Namespace, n.Name), *n.Changes)
		}
	}
	for i := range doc.Edges {
		e := &doc.Edges[i]
		if e.Count != nil {
			e.Rate = rate(e.key(), *e.Count)
		}
	}
	busy := make(map[string]observe.ControllerActivity, len(act.Controllers))
	for _, a := range act.Controllers {
		busy[a.Name] = a
	}
	for _, s := range m.Controllers {
		a := busy[s.Name]
		lc := LiveController{
			Name: s.Name, Family: s.Family, State: liveState(s, a), Why: a.Why,
			Reconciles: s.Metrics.Reconciles, QueueLen: s.QueueLen, InFlight: s.InFlight,
			LastError: s.LastError, LastErrorAt: s.LastErrorAt,
			ReconcileRate: rate(reconcilesKey(s.Name), s.Metrics.Reconciles),
			Busy:          s.Metrics.Busy, HotLoop: s.HotLoop, Leadership: s.Leadership,
		}
		if window > 0 {
			lag := cur.lag[s.Name].Sub(base.lag[s.Name])
			if lc.LagCount = lag.Count; lag.Count > 0 {
				q := lag.Quantile(0.99)
				lc.LagP99 = &q
			}
		}
		doc.Controllers = append(doc.Controllers, lc)
	}
	p.rates.sample(now, cur)
	return doc
}

// liveState is the live state of a controller from its status and
// activity.
func liveState(s observe.ControllerStatus, a observe.ControllerActivity) string {
	switch {
	case s.Leadership != nil && s.Leadership.Role == observe.RoleStandby:
		return LiveStandby
	case s.Lifecycle == observe.LifecycleStopped:
		return LiveStopped
	case s.Lifecycle == observe.LifecycleStarting:
		return LiveStarting
	case s.Lifecycle == observe.LifecycleBackoff, s.Lifecycle == observe.LifecycleParked:
		return LiveCrashed
	case s.HotLoop != "":
		return LiveHotLoop
	case a.Busy:
		return LiveBusy
	case a.Delayed > 0 && s.LastError != "":
		return LiveRetrying
	}
	return LiveIdle
}
