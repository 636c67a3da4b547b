package debugsrv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"expvar"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestD1_OnlyLoopbackUnlessAllowed(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		ok     bool
		want   string
	}{
		{"127.0.0.1:0", false, true, ""},
		{"127.0.0.1:6060", false, true, ""},
		{"[::1]:0", false, true, ""},
		{"localhost:0", false, true, ""},
		{"127.1.2.3:0", false, true, ""},
		{"0.0.0.0:6060", false, false, `host "0.0.0.0" is not a loopback address`},
		{"192.168.1.10:6060", false, false, "--debug-allow-remote"},
		{":6060", false, false, "an empty host listens on every interface"},
		{"example.com:80", false, false, "not a loopback address"},
		{"0.0.0.0:6060", true, true, ""},
		{"127.0.0.1", false, false, "missing port"},
		{"127.0.0.1:http", false, false, `port "http" is not a number`},
		{"127.0.0.1:70000", false, false, "is not a number between 0 and 65535"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := CheckAddr(tt.addr, tt.remote)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, state.IsInvalidError(err))
			assert.Contains(t, err.Error(), tt.addr)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

type fakeSource struct{ rows []ControllerRow }

func (f fakeSource) Controllers() []ControllerRow { return f.rows }

func (f fakeSource) RenderGraph(w io.Writer, format string) error {
	switch format {
	case "dot":
		_, err := io.WriteString(w, "digraph g {}\n")
		return err
	case "mermaid":
		_, err := io.WriteString(w, "flowchart LR\n")
		return err
	case "json":
		_, err := io.WriteString(w, `{"edges":[]}`)
		return err
	}
	return errors.New("unexpected format " + format)
}

var (
	t0   = time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	rows = []ControllerRow{
		{Name: "LinkApplyController", Kind: "qcontroller", State: "backoff", BackoffUntil: t0.Add(1500 * time.Millisecond),
			LastError: `apply <script>alert("x")</script>`, LastErrorAt: t0.Add(-2 * time.Second), Reconciles: 7, BusyTime: 1234 * time.Microsecond, QueueLen: 2, InFlight: 1},
		{Name: "ResolverController", Kind: "controller", State: "running", Reconciles: 3},
	}
)

// serve starts the handler on a random loopback port and returns its base
// URL; the server stops when the test ends.
func serve(t *testing.T, src Source) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, NewHandler(src, func() time.Time { return t0 })) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

func TestD2_EveryPageAnswers(t *testing.T) {
	if expvar.Get("debugsrv_test") == nil { // expvar names are global: -count=N runs this again
		expvar.NewString("debugsrv_test").Set("present")
	}
	base := serve(t, fakeSource{rows: rows})

	resp, body := get(t, base+"/debug/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `href="/debug/graph?format=mermaid"`)

	resp, body = get(t, base+"/debug/vars")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "application/json")
	var vars map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &vars))
	assert.Equal(t, "present", vars["debugsrv_test"])
	assert.Contains(t, vars, "memstats")

	resp, body = get(t, base+"/debug/pprof/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "goroutine")
	resp, _ = get(t, base+"/debug/pprof/cmdline")
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	for _, f := range GraphFormats {
		resp, body = get(t, base+"/debug/graph?format="+f.Name)
		assert.Equal(t, http.StatusOK, resp.StatusCode, f.Name)
		assert.Equal(t, f.ContentType, resp.Header.Get("Content-Type"), f.Name)
		assert.NotEmpty(t, body)
	}
	resp, body = get(t, base+"/debug/graph")
	assert.Equal(t, "digraph g {}\n", body, "dot is the default")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, body = get(t, base+"/debug/graph?format=svg")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, body, "unknown graph format svg")

	resp, _ = get(t, base+"/")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "/ redirects to the index")
	resp, _ = get(t, base+"/nope")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestD3_ControllersPageHTMLAndJSON(t *testing.T) {
	base := serve(t, fakeSource{rows: rows})

	resp, body := get(t, base+"/debug/controllers")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	for _, want := range []string{
		"LinkApplyController", "ResolverController",
		"backing off until 15:04:06.500 (1.5s)",
		"&lt;script&gt;", "at 15:04:03.000, 2s ago",
		"1.234ms",
	} {
		assert.Contains(t, body, want)
	}
	assert.NotContains(t, body, "<script>", "errors are escaped")

	for _, req := range [][]string{
		{base + "/debug/controllers?format=json"},
		{base + "/debug/controllers", "Accept", "application/json"},
		{base + "/debug/controllers", "Accept", "application/json;q=0.9, text/html;q=0.8"},
	} {
		resp, body = get(t, req[0], req[1:]...)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), req)
		var doc struct {
			Controllers []ControllerRow `json:"controllers"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &doc), req)
		assert.Equal(t, rows, doc.Controllers, "JSON round-trips every field")
	}
	resp, _ = get(t, base+"/debug/controllers", "Accept", "text/html,application/json")
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"), "HTML preferred when listed first")
}

func TestD4_EmptyStatusIsAnEmptyList(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteControllersJSON(&buf, nil, t0))
	assert.Contains(t, buf.String(), `"controllers": []`)
	buf.Reset()
	require.NoError(t, WriteControllersHTML(&buf, nil, t0))
	assert.Contains(t, buf.String(), "0 controllers")
}

func TestD5_ServeReturnsListenerErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	err = Serve(context.Background(), ln, NewHandler(fakeSource{}, nil))
	require.Error(t, err)
	assert.ErrorIs(t, err, net.ErrClosed)
}
