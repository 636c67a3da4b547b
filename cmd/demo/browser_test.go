package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/internal/cdp"
	"github.com/resgraph/resgraph/pkg/debughttp"

	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
)

// liveNode is a controller node as the live page renders it.
type liveNode struct {
	Name       string `json:"name"`
	State      string `json:"state"`
	Reconciles string `json:"reconciles"`
	Stats      string `json:"stats"`
}

// readLiveNodes reads every controller node of the live page's SVG.
const readLiveNodes = `[...document.querySelectorAll("#graph g.node.controller")].map(g => ({
	name: g.dataset.name, state: g.dataset.state || "", reconciles: g.dataset.reconciles || "",
	stats: g.querySelector("text.stats").textContent}))`

// TestLiveGraphInABrowser loads /debug/graph/live of a running demo (its
// carriers flapping fast, so that the controllers keep working) in a real
// headless Chromium and checks the rendered DOM: one node per controller,
// each in a live state, and numbers that change between two reads without
// a reload. It saves a screenshot in the test's temp dir (and, when
// RESGRAPH_SCREENSHOT names a file, there too: that is how the README's
// image is made).
func TestLiveGraphInABrowser(t *testing.T) {
	cfg := sampleConfig(t)
	cfg.DebugAddr = "127.0.0.1:0"
	cfg.Kernel = kernel.Config{FailFirst: 2, Seed: 1, FlapMin: 100 * time.Millisecond, FlapMax: 300 * time.Millisecond}
	d, _ := startDaemon(t, cfg)
	base := "http://" + d.DebugAddr().String()

	b, err := cdp.Start(t.TempDir(), 1600, 1000)
	require.NoError(t, err)
	defer func() { assert.NoError(t, b.Close()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := b.NewPage(ctx)
	require.NoError(t, err)
	require.NoError(t, p.Navigate(ctx, base+"/debug/graph/live"))

	names := controllers.Names()
	require.NoError(t, p.WaitFor(ctx, `document.querySelectorAll("#graph g.node.controller[data-state]").length === `+itoa(len(names))),
		"a node per controller, each with a state")
	var first []liveNode
	require.NoError(t, p.Evaluate(ctx, readLiveNodes, &first))
	var got []string
	states := []string{debughttp.LiveBusy, debughttp.LiveIdle, debughttp.LiveRetrying, debughttp.LiveCrashed,
		debughttp.LiveHotLoop, debughttp.LiveStarting}
	for _, n := range first {
		got = append(got, n.Name)
		assert.Contains(t, states, n.State, n.Name)
		assert.Contains(t, n.Stats, "queue", n.Name)
	}
	slices.Sort(got)
	assert.Equal(t, names, got)
	var resources int
	require.NoError(t, p.Evaluate(ctx, `document.querySelectorAll("#graph g.node.resource").length`, &resources))
	assert.Positive(t, resources, "resource types are drawn too")

	// Numbers update without a reload: some controller's reconcile count
	// differs from the first read, and the page was not reloaded.
	require.NoError(t, p.Evaluate(ctx, `window.__notReloaded = true`, nil))
	firstCounts := map[string]string{}
	for _, n := range first {
		firstCounts[n.Name] = n.Reconciles
	}
	cond := `(() => { const before = ` + jsonString(t, firstCounts) + `;
		return [...document.querySelectorAll("#graph g.node.controller")].some(g => g.dataset.reconciles !== before[g.dataset.name]); })()`
	require.NoError(t, p.WaitFor(ctx, cond), "reconcile counts update live")
	var notReloaded bool
	require.NoError(t, p.Evaluate(ctx, `window.__notReloaded === true`, &notReloaded))
	assert.True(t, notReloaded, "updated in place, without a page reload")
	var rates int
	require.NoError(t, p.WaitFor(ctx, `[...document.querySelectorAll("#graph text.rate")].some(t => /\/s$/.test(t.textContent))`))
	require.NoError(t, p.Evaluate(ctx, `[...document.querySelectorAll("#graph text.rate")].filter(t => /\/s$/.test(t.textContent)).length`, &rates))
	assert.Positive(t, rates, "edges show event rates")

	png, err := p.Screenshot(ctx)
	require.NoError(t, err)
	shot := filepath.Join(t.TempDir(), "live-graph.png")
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("screenshot: %s", shot)
	if dst := os.Getenv("RESGRAPH_SCREENSHOT"); dst != "" {
		require.NoError(t, os.WriteFile(dst, png, 0o644))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// jsonString is v as a JavaScript literal.
func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
