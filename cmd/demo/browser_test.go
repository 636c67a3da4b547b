package main

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/internal/browsertest"
	"github.com/resgraph/resgraph/pkg/debughttp"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
)

// TestLiveGraphInABrowser loads /debug/graph/live of a running demo (its
// carriers flapping fast, so that the controllers keep working) in a real
// headless Chromium whose clock is virtual, and checks what it rendered:
// a node per controller, each in a live state, and one per resource kind
// (namespace and type) of the live document; every name whole; rates that
// are not zero although the page's clock hardly moved (the server computes
// them); no edge passing behind a node and no rate over one. It saves a
// screenshot in the test's temp dir and, when RESGRAPH_SCREENSHOTS names a
// directory, there too as live-graph.png: that is how docs/demo.md's image
// (docs/images/live-graph.png) is made.
func TestLiveGraphInABrowser(t *testing.T) {
	cfg := sampleConfig(t)
	cfg.Debug = cli.DebugOptions{Addr: "127.0.0.1:0", Insecure: true}
	cfg.Kernel = kernel.Config{FailFirst: 2, Seed: 1, FlapMin: 100 * time.Millisecond, FlapMax: 300 * time.Millisecond}
	d, _ := startDaemon(t, cfg)
	base := "http://" + d.DebugAddr().String()
	waitConverged(t, d)
	eventually(t, d, "the live document has rates", func() (bool, string) {
		_, body := get(t, base+"/debug/graph/live?format=json")
		var doc debughttp.LiveDocument
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			return false, err.Error()
		}
		for _, e := range doc.Edges {
			if e.Rate != nil && *e.Rate > 0 {
				return true, ""
			}
		}
		return false, "no edge has a rate yet (window " + doc.Window.String() + ")"
	})

	ctx := browsertest.Start(t, 1600, 1000)
	require.NoError(t, browsertest.LoadUnderVirtualTime(ctx, base+"/debug/graph/live", 3*time.Second))
	g, err := browsertest.ReadLiveGraph(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, g.Updates, 2, "the page polled under virtual time; its status: %s", g.Status)

	names := controllers.Names()
	var got []string
	states := []string{debughttp.LiveBusy, debughttp.LiveIdle, debughttp.LiveRetrying, debughttp.LiveCrashed,
		debughttp.LiveHotLoop, debughttp.LiveStarting}
	for _, n := range g.Controllers {
		got = append(got, n.Name)
		assert.Contains(t, states, n.State, n.Name)
		assert.Contains(t, n.Text, n.State, n.Name)
		assert.Contains(t, n.Text, "lag", n.Name)
	}
	slices.Sort(got)
	assert.Equal(t, names, got, "a node per controller")

	_, body := get(t, base+"/debug/graph/live?format=json")
	var doc debughttp.LiveDocument
	require.NoError(t, json.Unmarshal([]byte(body), &doc))
	browsertest.CheckLiveGraph(t, doc, g)

	png, err := browsertest.Screenshot(ctx)
	require.NoError(t, err)
	browsertest.SaveScreenshot(t, png, "live-graph.png")
}
