package debughttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/debughttp"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type itemSpec struct{ N int }
type itemDef struct{}

func (itemDef) Definition() typed.Definition {
	return typed.Definition{Type: "Items.test.resgraph.dev", DefaultNamespace: "default"}
}

type item = typed.Resource[itemSpec, itemDef]

// failing is a QController whose items fail with an HTML-looking error.
type failing struct{}

func (failing) Name() string { return "Failing<Q>" }
func (failing) Settings() controller.QSettings {
	return controller.QSettings{Inputs: []controller.Input{controller.InputFor[*item](controller.InputQPrimary)}}
}
func (failing) Reconcile(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
	return errors.New(`apply <script>alert("x")</script>`)
}
func (failing) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// idle is a Controller that does nothing on each event.
type idle struct{}

func (idle) Name() string { return "Idle" }
func (idle) Inputs() []controller.Input {
	return []controller.Input{controller.InputFor[*item](controller.InputWeak)}
}
func (idle) Outputs() []controller.Output { return nil }
func (idle) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
	}
}

var t0 = time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)

// serve runs the handler on a loopback port until the test ends and
// returns its base URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := debughttp.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- debughttp.Serve(ctx, ln, h) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err, "Serve returns nil after its context is done")
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return "http://" + ln.Addr().String()
}

// get fetches url without keep-alive (no connection outlives the test).
func get(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

var expvarSeq atomic.Int64

// Runtime starts a Runtime with a failing QController that has failed
// once, and its handler on a loopback port.
func engine(t *testing.T, opts ...debughttp.Option) (*runtimetest.Env, string) {
	t.Helper()
	e := runtimetest.Start(t, runtimetest.WithControllers(idle{}), runtimetest.WithQControllers(failing{}),
		runtimetest.WithLogger(zap.NewNop()), runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Hour, time.Hour)))
	runtimetest.Settle(t, e.Runtime) // started: the item below is a change, not found at the start
	runtimetest.Create(t, e.State, typed.NewDefault[itemSpec, itemDef]("one", itemSpec{}))
	runtimetest.Settle(t, e.Runtime)
	return e, serve(t, debughttp.New(e.Runtime.Observe(), append([]debughttp.Option{debughttp.WithClock(func() time.Time { return t0 })}, opts...)...))
}

func TestIndexGraphAndUnknownPaths(t *testing.T) {
	_, base := engine(t)

	resp, body := get(t, base+"/debug/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	for _, href := range []string{"/debug/controllers", "/debug/controllers?format=json", "/debug/graph", "/debug/graph?format=mermaid", "/debug/graph?format=json", "/debug/vars", "/debug/pprof/"} {
		assert.Contains(t, body, `href="`+href+`"`)
	}
	resp, _ = get(t, base+"/")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "/ redirects to the index")
	resp, _ = get(t, base+"/nope")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	resp, body = get(t, base+"/debug/graph")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/vnd.graphviz; charset=utf-8", resp.Header.Get("Content-Type"), "DOT by default")
	assert.True(t, strings.HasPrefix(body, "digraph"), body)
	resp, body = get(t, base+"/debug/graph?format=mermaid")
	assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(body, "flowchart"), body)
	resp, body = get(t, base+"/debug/graph?format=json")
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var g struct {
		Edges []struct {
			Controller string `json:"controller"`
			EdgeType   string `json:"edgeType"`
		} `json:"edges"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &g))
	assert.Len(t, g.Edges, 2)
	resp, body = get(t, base+"/debug/graph?format=svg")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, body, "unknown graph format svg")
}

func TestControllersPageHTMLAndJSON(t *testing.T) {
	_, base := engine(t)

	resp, body := get(t, base+"/debug/controllers")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	for _, want := range []string{"<td>Failing&lt;Q&gt;</td>", "<td>Idle</td>", "&lt;script&gt;", "2 controllers at 15:04:05.000"} {
		assert.Contains(t, body, want)
	}
	assert.NotContains(t, body, "<script>", "errors are escaped")
	assert.Contains(t, body, "<th>Queue wait p50 / p99</th><th>Duration p50 / p99</th><th>Lag p50 / p99</th><th>Startup p50 / p99</th><th>Busy</th>")
	assert.Regexp(t, `<td class="num">[0-9.]+[µnm]?s / [0-9.]+[µnm]?s \(1\)</td>`, body, "the failing item's latencies")
	assert.Regexp(t, `<td>qcontroller</td><td>running since [0-9:.]{12}</td>`, body, "the family, the state and since when")

	for _, req := range [][]string{
		{base + "/debug/controllers?format=json"},
		{base + "/debug/controllers", "Accept", "application/json"},
		{base + "/debug/controllers", "Accept", "application/json;q=0.9, text/html;q=0.8"},
	} {
		resp, body = get(t, req[0], req[1:]...)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), req)
		var doc debughttp.StatusDocument
		require.NoError(t, json.Unmarshal([]byte(body), &doc), req)
		assert.Equal(t, t0, doc.Time)
		require.Len(t, doc.Controllers, 2)
		assert.Equal(t, "Failing<Q>", doc.Controllers[0].Name)
		assert.Contains(t, doc.Controllers[0].LastError, "<script>")
		assert.False(t, doc.Controllers[0].LastErrorAt.IsZero())
		assert.Equal(t, 1, doc.Controllers[0].QueueLen, "the item waits out its backoff")
		assert.EqualValues(t, 1, doc.Controllers[0].Metrics.Duration["error"].Count, "its failed reconcile's duration")
	}
	resp, _ = get(t, base+"/debug/controllers", "Accept", "text/html,application/json")
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"), "HTML preferred when listed first")
}

// TestJSONNamingIsConsistent checks one naming for every JSON the pages
// serve: lowerCamelCase keys, zero times omitted, in the status document
// and in the Runtime's expvar metrics alike.
func TestJSONNamingIsConsistent(t *testing.T) {
	e, base := engine(t)
	name := fmt.Sprintf("debughttp_test_%d", expvarSeq.Add(1))
	require.NoError(t, observe.PublishExpvar(name, e.Runtime.Observe()))

	_, body := get(t, base+"/debug/controllers?format=json")
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &doc))
	_, body = get(t, base+"/debug/vars")
	var vars map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &vars))
	require.Contains(t, vars, name)
	assert.Contains(t, vars, "memstats")
	var metrics map[string]any
	require.NoError(t, json.Unmarshal(vars[name], &metrics))

	for _, ctrls := range [][]any{doc["controllers"].([]any), metrics["controllers"].([]any)} {
		failing, idle := ctrls[0].(map[string]any), ctrls[1].(map[string]any)
		for _, key := range []string{"name", "family", "state", "lastError", "lastErrorAt", "queueLen", "inFlight", "metrics"} {
			assert.Contains(t, failing, key)
		}
		counters := failing["metrics"].(map[string]any)
		for _, key := range []string{"reconciles", "busyTimeNs", "wakeUps", "queueWait"} {
			assert.Contains(t, counters, key)
		}
		for _, m := range []map[string]any{failing, counters} {
			for key := range m {
				assert.Regexp(t, `^[a-z][A-Za-z]*$`, key, "lowerCamelCase")
			}
		}
		assert.Equal(t, "qcontroller", failing["family"], "a family in its string form")
		assert.Equal(t, "running", failing["state"], "a state in its string form")
		assert.NotContains(t, idle, "lastErrorAt", "a zero time is omitted")
		assert.NotContains(t, idle, "backoffUntil", "a zero time is omitted")
		assert.NotContains(t, idle, "lastError")
	}
	assert.Contains(t, metrics, "kinds")
	assert.NotContains(t, body, "0001-01-01")
}

func TestPprofWithoutTheDefaultMux(t *testing.T) {
	_, base := engine(t)

	resp, body := get(t, base+"/debug/pprof/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `href="goroutine?debug=1"`)
	assert.Contains(t, body, `href="heap?debug=1"`)

	resp, body = get(t, base+"/debug/pprof/goroutine?debug=1")
	assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, body, "goroutine profile:")
	resp, body = get(t, base+"/debug/pprof/heap")
	assert.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(body, "\x1f\x8b"), "gzipped protobuf")
	resp, _ = get(t, base+"/debug/pprof/nope")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	_, body = get(t, base+"/debug/pprof/cmdline")
	assert.Contains(t, body, "debughttp.test")
	_, body = get(t, base+"/debug/pprof/symbol")
	assert.Equal(t, "num_symbols: 1\n", body)

	resp, body = get(t, base+"/debug/pprof/profile?seconds=1")
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.True(t, strings.HasPrefix(body, "\x1f\x8b"), "a gzipped CPU profile")
	resp, body = get(t, base+"/debug/pprof/trace?seconds=1")
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.True(t, strings.HasPrefix(body, "go 1."), "an execution trace")
	resp, _ = get(t, base+"/debug/pprof/trace?seconds=-1")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// Nothing was registered on the default mux (net/http/pprof would).
	_, pattern := http.DefaultServeMux.Handler(httptest.NewRequest(http.MethodGet, "/debug/pprof/", nil))
	assert.Empty(t, pattern, "http.DefaultServeMux serves no pprof")
}

func TestMorePagesPlugIn(t *testing.T) {
	_, base := engine(t, debughttp.WithPage(debughttp.Page{
		Path: "/debug/explain", Title: "explain",
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "why?") }),
	}), debughttp.WithPage(debughttp.Page{
		Path: "/debug/graph", Title: "live graph",
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "live") }),
	}))
	_, body := get(t, base+"/debug/")
	assert.Contains(t, body, `<a href="/debug/explain">explain</a>`)
	assert.Contains(t, body, `<a href="/debug/graph">live graph</a>`)
	_, body = get(t, base+"/debug/explain")
	assert.Equal(t, "why?", body)
	_, body = get(t, base+"/debug/graph")
	assert.Equal(t, "live", body, "a page replaces the built-in one of its path")
}

func TestListenOnlyOnLoopbackUnlessAllowed(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		want   string // "" for accepted
	}{
		{"127.0.0.1:0", false, ""},
		{"127.0.0.1:6060", false, ""},
		{"[::1]:0", false, ""},
		{"localhost:0", false, ""},
		{"127.1.2.3:0", false, ""},
		{"0.0.0.0:6060", false, `host "0.0.0.0" is not a loopback address`},
		{"192.168.1.10:6060", false, "unless remote addresses are allowed explicitly"},
		{":6060", false, "an empty host listens on every interface"},
		{"example.com:80", false, "not a loopback address"},
		{"0.0.0.0:6060", true, ""},
		{":6060", true, ""},
		{"127.0.0.1", false, "missing port"},
		{"127.0.0.1:http", false, `port "http" is not a number`},
		{"127.0.0.1:70000", false, "is not a number between 0 and 65535"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			var opts []debughttp.ListenOption
			if tt.remote {
				opts = append(opts, debughttp.AllowRemote())
			}
			err := debughttp.CheckAddr(tt.addr, opts...)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, state.IsInvalidError(err))
			assert.Contains(t, err.Error(), tt.addr)
			assert.Contains(t, err.Error(), tt.want)
			ln, err := debughttp.Listen(tt.addr, opts...)
			assert.Nil(t, ln)
			assert.True(t, state.IsInvalidError(err), "Listen checks first")
		})
	}
}

func TestServeReturnsListenerErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	err = debughttp.Serve(context.Background(), ln, http.NotFoundHandler())
	require.Error(t, err)
	assert.ErrorIs(t, err, net.ErrClosed)
}

// TestLivePageServesItsOwnAssets checks the live graph page: the page and
// its script and style come from the handler (nothing external), and its
// JSON document has the graph, a state per controller and a counter per
// input edge.
func TestLivePageServesItsOwnAssets(t *testing.T) {
	_, base := engine(t)
	_, body := get(t, base+"/debug/")
	assert.Contains(t, body, `href="/debug/graph/live"`)
	assert.Contains(t, body, `href="/debug/graph/live?format=json"`)

	resp, body := get(t, base+"/debug/graph/live")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, body, `<script src="live/live.js"></script>`)
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, body, "no external resource")
	for asset, ct := range map[string]string{"live.js": "text/javascript; charset=utf-8", "live.css": "text/css; charset=utf-8"} {
		resp, body := get(t, base+"/debug/graph/live/"+asset)
		assert.Equal(t, http.StatusOK, resp.StatusCode, asset)
		assert.Equal(t, ct, resp.Header.Get("Content-Type"), asset)
		// Only the SVG namespace name looks like a URL; nothing is loaded
		// from another origin.
		external := regexp.MustCompile(`(fetch\(|src=|href=|url\(|@import)\s*["'\x60]?(https?:)?//`)
		assert.Empty(t, external.FindAllString(body, -1), asset)
	}
	resp, _ = get(t, base+"/debug/graph/live/nope.js")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	resp, body = get(t, base+"/debug/graph/live?format=json")
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var doc debughttp.LiveDocument
	require.NoError(t, json.Unmarshal([]byte(body), &doc))
	assert.Equal(t, t0, doc.Time)
	require.Len(t, doc.Controllers, 2)
	assert.Equal(t, "Failing<Q>", doc.Controllers[0].Name)
	assert.Equal(t, debughttp.LiveRetrying, doc.Controllers[0].State, "its item waits out a backoff after an error")
	assert.Equal(t, 1, doc.Controllers[0].QueueLen)
	assert.Contains(t, doc.Controllers[0].LastError, "<script>")
	assert.Equal(t, "Idle", doc.Controllers[1].Name)
	assert.Equal(t, debughttp.LiveIdle, doc.Controllers[1].State)
	items := "resource:default/Items.test.resgraph.dev"
	require.Equal(t, []string{"controller:Failing<Q>", "controller:Idle", items}, nodeIDs(doc.Nodes))
	assert.Equal(t, "default", doc.Nodes[2].Namespace)
	assert.Equal(t, []debughttp.LiveMark{{Text: "no writer", Class: debughttp.MarkNoWriter,
		Title: "no controller writes this kind; only outside writers wake its readers"}}, doc.Nodes[2].Marks)
	require.NotNil(t, doc.Nodes[2].Changes)
	assert.EqualValues(t, 1, *doc.Nodes[2].Changes)
	require.Len(t, doc.Edges, 2, "one per declared input")
	for i, e := range doc.Edges {
		assert.Equal(t, items, e.From)
		require.NotNil(t, e.Count, "input edge %d is counted", i)
		assert.Equal(t, uint64(1), *e.Count, "the one item created: a wake-up, an item")
		assert.Nil(t, e.Rate, "the clock stands still: no rate")
	}
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &raw))
	for _, k := range []string{"time", "windowNs", "nodes", "edges", "controllers"} {
		assert.Contains(t, raw, k)
	}
}

func nodeIDs(nodes []debughttp.LiveNode) []string {
	var ids []string
	for _, n := range nodes {
		ids = append(ids, n.ID)
	}
	return ids
}

// TestTraceAndExplainOfARealEngine: the Runtime provides its trace and its
// explanations, so the handler serves /debug/trace (JSON lines of the
// Runtime's events: the failing item's route, start, end and backoff) and
// /debug/explain for a resource and a controller.
func TestTraceAndExplainOfARealEngine(t *testing.T) {
	_, base := engine(t)
	resp, body := get(t, base+"/debug/trace")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	evs, err := trace.ReadJSONLines(strings.NewReader(body))
	require.NoError(t, err)
	var types []trace.Type
	for _, ev := range evs {
		if ev.Controller == "Failing<Q>" {
			types = append(types, ev.Type)
		}
	}
	assert.Equal(t, []trace.Type{trace.Route, trace.ReconcileStart, trace.ReconcileEnd, trace.Backoff}, types)

	resp, body = get(t, base+"/debug/explain?resource=default/Items.test.resgraph.dev/one&format=json")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	var x explain.Resource
	require.NoError(t, json.Unmarshal([]byte(body), &x))
	assert.True(t, x.Exists)
	require.Len(t, x.Controllers, 2)
	assert.Equal(t, "Failing<Q>", x.Controllers[0].Controller)
	assert.Equal(t, explain.WorkBackoff, x.Controllers[0].Doing.Work)
	assert.Contains(t, x.Controllers[0].Doing.Error, "<script>")

	resp, body = get(t, base+"/debug/explain?controller=Failing%3CQ%3E")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, "Failing&lt;Q&gt;")
	assert.NotContains(t, body, "<script>", "escaped")
	resp, _ = get(t, base+"/debug/explain?controller=nobody")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

}
