package debughttp

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/graph"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/histogram"
)

// liveAssets are the live graph page and its script and style: the page
// needs nothing but what the handler serves.
//
//go:embed live/index.html live/live.js live/live.css
var liveAssets embed.FS

// Live controller states, as [LiveController.State] reports them. They
// refine the engine's states (observe.State): an engine-running controller
// is busy, idle, retrying or in a hot loop here.
const (
	LiveBusy     = "busy"     // a reconcile is running or due
	LiveIdle     = "idle"     // nothing due, nothing in flight
	LiveRetrying = "retrying" // items wait out a retry backoff after failing
	LiveCrashed  = "crashed"  // Run crashed; it restarts after its backoff
	LiveHotLoop  = "hotLoop"  // part of a flagged hot loop
	LiveStarting = "starting" // not started yet
	LiveStopped  = "stopped"  // the engine stopped
	LiveStandby  = "standby"  // another replica leads its election and runs it
)

// LiveDocument is the JSON document of /debug/graph/live?format=json, which
// the live page polls: the graph, every controller's state and counters,
// and a counter per edge from which the page computes rates.
type LiveDocument struct {
	Time  time.Time       `json:"time"`
	Graph graph.JSONGraph `json:"graph"`
	// Controllers are sorted by name.
	Controllers []LiveController `json:"controllers"`
	// Edges are parallel to Graph.Edges.
	Edges []LiveEdge `json:"edges"`
}

// LiveController is one controller's live state.
type LiveController struct {
	Name   string         `json:"name"`
	Family observe.Family `json:"family"`
	// State is one of the Live* states.
	State string `json:"state"`
	// Why is what the engine's activity report says it is doing.
	Why         string    `json:"why,omitempty"`
	Reconciles  uint64    `json:"reconciles"`
	QueueLen    int       `json:"queueLen"`
	InFlight    int       `json:"inFlight"`
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	// Lag and QueueWait are the controller's end-to-end lag and queue
	// wait histograms (the page shows the p99 of the last interval from
	// their bucket deltas); Busy its busy fraction.
	Lag       histogram.Snapshot `json:"lag"`
	QueueWait histogram.Snapshot `json:"queueWait"`
	Busy      float64            `json:"busy"`
	// HotLoop describes the hot loop it is part of, when one is flagged.
	HotLoop string `json:"hotLoop,omitempty"`
	// Leadership is its part in its election (leader or standby, since
	// when, the term), when the engine runs with leadership.
	Leadership *observe.Leadership `json:"leadership,omitempty"`
}

// LiveEdge is the counter of one graph edge: the changes of the input's
// kind routed so far (for an input edge), or null when the engine does
// not count the edge.
type LiveEdge struct {
	Events *uint64 `json:"events"`
}

// livePage serves /debug/graph/live (the page, or the document with
// ?format=json) and its assets under /debug/graph/live/.
type livePage struct {
	obs observe.Observer
	now func() time.Time
}

func (p livePage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
func (p livePage) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
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

// document builds the live document from the engine's graph, statuses,
// activity and metrics.
func (p livePage) document(ctx context.Context) LiveDocument {
	doc := LiveDocument{Time: p.now(), Controllers: []LiveController{}, Edges: []LiveEdge{}}
	g, err := p.obs.Graph()
	if err == nil {
		doc.Graph = graph.NewJSONGraph(g)
	} else {
		doc.Graph = graph.NewJSONGraph(nil)
	}
	m := p.obs.Metrics()
	act := p.obs.Activity(ctx)
	busy := make(map[string]observe.ControllerActivity, len(act.Controllers))
	for _, a := range act.Controllers {
		busy[a.Name] = a
	}
	for _, s := range m.Controllers {
		a := busy[s.Name]
		doc.Controllers = append(doc.Controllers, LiveController{
			Name: s.Name, Family: s.Family, State: liveState(s, a), Why: a.Why,
			Reconciles: s.Metrics.Reconciles, QueueLen: s.QueueLen, InFlight: s.InFlight,
			LastError: s.LastError, LastErrorAt: s.LastErrorAt,
			Lag: s.Metrics.Lag, QueueWait: s.Metrics.QueueWait, Busy: s.Metrics.Busy, HotLoop: s.HotLoop,
			Leadership: s.Leadership,
		})
	}
	routed := make(map[string]uint64, len(m.Kinds))
	for _, k := range m.Kinds {
		routed[k.Namespace+"\x00"+k.Type] = k.EventsRouted
	}
	for _, e := range doc.Graph.Edges {
		var le LiveEdge
		if n, ok := routed[e.Namespace+"\x00"+e.Type]; ok && !strings.HasPrefix(e.EdgeType, "Output") {
			le.Events = &n
		}
		doc.Edges = append(doc.Edges, le)
	}
	return doc
}

// liveState is the live state of a controller from its status and
// activity.
func liveState(s observe.ControllerStatus, a observe.ControllerActivity) string {
	switch {
	case s.Leadership != nil && s.Leadership.Role == observe.RoleStandby:
		return LiveStandby
	case s.State == observe.StateStopped:
		return LiveStopped
	case s.State == observe.StateStarting:
		return LiveStarting
	case s.State == observe.StateBackoff:
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
