package browsertest

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/debughttp"
)

// CheckLiveGraph checks what the live graph page rendered (g) against the
// live document doc it was drawn from: a node per controller and one per
// resource kind (namespace and type), each kind showing its namespace;
// every name whole and every text inside its node; no edge behind a node
// and no rate over one; the drawing as large as the canvas allows along
// one of its axes; rates shown, some edges' and some controllers' not
// zero.
func CheckLiveGraph(t *testing.T, doc debughttp.LiveDocument, g LiveGraph) {
	t.Helper()
	var wantKinds, kinds, wantCtrls, ctrls []string
	for _, n := range doc.Nodes {
		if n.Kind == debughttp.LiveNodeResource {
			wantKinds = append(wantKinds, n.Namespace+"/"+n.Name)
		} else {
			wantCtrls = append(wantCtrls, n.Name)
		}
	}
	for _, n := range g.Resources {
		kinds = append(kinds, n.Namespace+"/"+n.Name)
		assert.Contains(t, n.Text, n.Namespace, "%s shows its namespace", n.ID)
	}
	for _, n := range g.Controllers {
		ctrls = append(ctrls, n.Name)
	}
	slices.Sort(wantKinds)
	slices.Sort(kinds)
	slices.Sort(ctrls)
	require.NotEmpty(t, wantKinds)
	assert.Equal(t, wantKinds, kinds, "one node per namespace and type")
	assert.Equal(t, wantCtrls, ctrls, "one node per controller")
	assert.Empty(t, g.Names, "every name whole, every text inside its node")
	assert.Empty(t, g.Crossings, "no edge behind a node, no rate over one")
	require.Positive(t, g.Canvas[0]*g.Canvas[1])
	fill := max(g.Drawing[0]/g.Canvas[0], g.Drawing[1]/g.Canvas[1])
	assert.True(t, fill >= 0.85 && fill <= 1.01, "the drawing fills the canvas along one axis: %v of %v", g.Drawing, g.Canvas)

	edges, busy := 0, 0
	for _, e := range g.Edges {
		if r, err := strconv.ParseFloat(e.Rate, 64); err == nil && r > 0 {
			edges++
			assert.Regexp(t, `^[0-9.]+k?/s$`, e.Label)
		}
	}
	for _, n := range g.Controllers {
		if r, err := strconv.ParseFloat(n.Rate, 64); err == nil && r > 0 {
			busy++
		}
	}
	assert.Positive(t, edges, "edges show non-zero rates: %+v", g.Edges)
	assert.Positive(t, busy, "controllers show non-zero reconcile rates")
}

// SaveScreenshot writes png as name in the test's temp dir, and in the
// directory $RESGRAPH_SCREENSHOTS names when set (how the images of
// docs/images are made).
func SaveScreenshot(t *testing.T, png []byte, name string) {
	t.Helper()
	shot := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("screenshot: %s", shot)
	if dir := os.Getenv("RESGRAPH_SCREENSHOTS"); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
	}
}
