package debughttp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/internal/browsertest"
	"github.com/resgraph/resgraph/pkg/debughttp"
	"github.com/resgraph/resgraph/pkg/debughttp/internal/livefixture"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// TestLiveGraphOfADaemonInABrowser loads the live page of the fixture's
// Runtime — 20 controllers over kinds in 3 namespaces, with merge
// controllers reading network-config/T and writing network/T — while its
// driver keeps changing the machine configs, in a real headless Chromium
// whose clock is virtual, and checks what it rendered (see
// browsertest.CheckLiveGraph): a node per controller and per kind, every
// name whole, rates that are not zero, no edge behind a node; and that no
// merge controller is drawn reading what it writes. It saves a screenshot
// as live-graph-daemon.png (docs/images with RESGRAPH_SCREENSHOTS).
func TestLiveGraphOfADaemonInABrowser(t *testing.T) {
	cs, qs := livefixture.Controllers()
	require.Len(t, append(append([]any{}, anySlice(cs)...), anySlice(qs)...), 20)
	e := runtimetest.Start(t, runtimetest.WithControllers(cs...), runtimetest.WithQControllers(qs...), runtimetest.WithLogger(zap.NewNop()))
	base := serve(t, debughttp.New(e.Runtime.Observe()))
	ctx, cancel := context.WithCancel(context.Background())
	driven := make(chan error, 1)
	go func() { driven <- livefixture.Drive(ctx, e.State, 25*time.Millisecond) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-driven)
	})

	configs := []resource.Kind{resource.NewKind(livefixture.NSRuntime, livefixture.MachineConfigs)}
	var doc debughttp.LiveDocument
	runtimetest.AssertState(t, e.State, configs, func(_ context.Context, asrt *assert.Assertions) {
		_, body := get(t, base+"/debug/graph/live?format=json")
		doc = debughttp.LiveDocument{}
		if !asrt.NoError(json.Unmarshal([]byte(body), &doc)) {
			return
		}
		for _, ed := range doc.Edges {
			if ed.Rate == nil || *ed.Rate == 0 {
				asrt.Fail("edge " + ed.From + " -> " + ed.To + " has no traffic yet (window " + doc.Window.String() + ")")
				return
			}
		}
	})

	bctx := browsertest.Start(t, 1600, 1000)
	require.NoError(t, browsertest.LoadUnderVirtualTime(bctx, base+"/debug/graph/live", 3*time.Second))
	g, err := browsertest.ReadLiveGraph(bctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, g.Updates, 2, "the page polled under virtual time; its status: %s", g.Status)
	browsertest.CheckLiveGraph(t, doc, g)
	namespaces := map[string]bool{}
	for _, n := range g.Resources {
		namespaces[n.Namespace] = true
	}
	assert.Len(t, namespaces, 3)

	// A merge controller reads T in network-config and writes T in
	// network: never drawn reading its own output.
	for _, typ := range []string{livefixture.HostnameSpecs, livefixture.LinkSpecs, livefixture.AddressSpecs} {
		merge := "controller:" + map[string]string{livefixture.HostnameSpecs: "Hostname", livefixture.LinkSpecs: "Link", livefixture.AddressSpecs: "Address"}[typ] + "MergeController"
		cfg, net := "resource:"+livefixture.NSConfig+"/"+typ, "resource:"+livefixture.NSNetwork+"/"+typ
		var into, out []string
		for _, ed := range g.Edges {
			if ed.To == merge {
				into = append(into, ed.From)
			}
			if ed.From == merge {
				out = append(out, ed.To)
			}
		}
		assert.Equal(t, []string{cfg}, into, merge)
		assert.Equal(t, []string{net}, out, merge)
	}

	png, err := browsertest.Screenshot(bctx)
	require.NoError(t, err)
	browsertest.SaveScreenshot(t, png, "live-graph-daemon.png")
}

func anySlice[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
