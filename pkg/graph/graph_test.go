package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/graph"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var formats = []graph.Format{graph.FormatDOT, graph.FormatMermaid, graph.FormatJSON}

// exampleGraph has every edge type, an ID-specific input, a type written by
// two controllers (shared) and a type read by several.
func exampleGraph() *controller.DependencyGraph {
	const (
		ints    = "IntResources.test.resgraph.dev"
		strs    = "StrResources.test.resgraph.dev"
		config  = "Configs.test.resgraph.dev"
		outputs = "Outputs.test.resgraph.dev"
	)
	return &controller.DependencyGraph{Edges: []controller.DependencyEdge{
		{ControllerName: "IntToStr", ResourceType: strs, EdgeType: controller.EdgeOutputExclusive},
		{ControllerName: "IntToStr", ResourceNamespace: "default", ResourceType: ints, EdgeType: controller.EdgeInputStrong},
		{ControllerName: "IntToStr", ResourceNamespace: "config", ResourceType: config, ResourceID: "main", EdgeType: controller.EdgeInputWeak},
		{ControllerName: "IntToStr", ResourceNamespace: "default", ResourceType: strs, EdgeType: controller.EdgeInputDestroyReady},
		{ControllerName: "QMapper", ResourceType: outputs, EdgeType: controller.EdgeOutputShared},
		{ControllerName: "QMapper", ResourceNamespace: "default", ResourceType: ints, EdgeType: controller.EdgeInputQPrimary},
		{ControllerName: "QMapper", ResourceNamespace: "config", ResourceType: config, EdgeType: controller.EdgeInputQMapped},
		{ControllerName: "QMapper", ResourceNamespace: "default", ResourceType: outputs, EdgeType: controller.EdgeInputQMappedDestroyReady},
		{ControllerName: "Sum", ResourceType: outputs, EdgeType: controller.EdgeOutputShared},
		{ControllerName: "Sum", ResourceNamespace: "default", ResourceType: strs, EdgeType: controller.EdgeInputWeak},
	}}
}

func render(t *testing.T, g *controller.DependencyGraph, f graph.Format) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, graph.Render(&b, g, f))
	return b.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing; run go test -update")
	assert.Equal(t, string(want), string(got), "output differs from %s", path)
}

// TestGolden: each format renders the example graph and the empty graph
// exactly as the golden files say.
func TestGolden(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			golden(t, "example."+string(f), render(t, exampleGraph(), f))
			golden(t, "empty."+string(f), render(t, &controller.DependencyGraph{}, f))
		})
	}
}

// TestNilGraph: a nil graph renders like an empty one.
func TestNilGraph(t *testing.T) {
	for _, f := range formats {
		assert.Equal(t, string(render(t, &controller.DependencyGraph{}, f)), string(render(t, nil, f)), f)
	}
}

// TestDeterminism: any order of the same edges, with duplicates, renders to
// the same bytes, and the caller's graph is not modified.
func TestDeterminism(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	for _, f := range formats {
		want := render(t, exampleGraph(), f)
		for range 20 {
			g := exampleGraph()
			g.Edges = append(g.Edges, g.Edges[rng.IntN(len(g.Edges))])
			rng.Shuffle(len(g.Edges), func(i, j int) { g.Edges[i], g.Edges[j] = g.Edges[j], g.Edges[i] })
			before := slices.Clone(g.Edges)

			assert.Equal(t, string(want), string(render(t, g, f)), "format %s, edges %v", f, g.Edges)
			assert.Equal(t, before, g.Edges, "Render must not modify the graph")
		}
	}
}

// nastyGraph has names that need escaping in every format.
func nastyGraph() *controller.DependencyGraph {
	return &controller.DependencyGraph{Edges: []controller.DependencyEdge{
		{ControllerName: `quote"ctl\`, ResourceType: `a.b`, EdgeType: controller.EdgeOutputExclusive},
		{ControllerName: `quote"ctl\`, ResourceNamespace: `ns"1`, ResourceType: `a_b`, ResourceID: `id|#x;<b>&"`, EdgeType: controller.EdgeInputStrong},
		{ControllerName: "line\nbreak\ttab", ResourceNamespace: "n", ResourceType: "end", EdgeType: controller.EdgeInputWeak},
		{ControllerName: "émoji 🙂 `md`", ResourceNamespace: "n", ResourceType: "bad\xffutf8\x00", EdgeType: controller.EdgeInputQMapped},
		{ControllerName: "", ResourceNamespace: "", ResourceType: "", EdgeType: controller.DependencyEdgeType(42)},
	}}
}

var bareID = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// TestEscapingDOT: labels are quoted with " and \ escaped, line breaks as
// \n, and node identifiers are generated and unique even when names
// sanitize to the same string.
func TestEscapingDOT(t *testing.T) {
	out := string(render(t, nastyGraph(), graph.FormatDOT))
	assert.Contains(t, out, `label="quote\"ctl\\"`)
	assert.Contains(t, out, `label="ns\"1/id|#x;<b>&\""`)
	assert.Contains(t, out, `label="line\nbreak tab"`)
	assert.Contains(t, out, "label=\"bad\uFFFDutf8\uFFFD\"")
	assert.Contains(t, out, `label="DependencyEdgeType(42)"`)
	assert.NotContains(t, out, "\t\"c0_quote\"ctl")

	ids := regexp.MustCompile(`(?m)^\t"([^"]*)" \[label=`).FindAllStringSubmatch(out, -1)
	require.Len(t, ids, 4+5, "one node per controller and per type")
	seen := map[string]bool{}
	for _, m := range ids {
		assert.Regexp(t, bareID, m[1])
		assert.False(t, seen[m[1]], "duplicate node id %q", m[1])
		seen[m[1]] = true
	}
}

// TestEscapingMermaid: node identifiers are bare and unique, and labels are
// quoted with every special character replaced by an entity code.
func TestEscapingMermaid(t *testing.T) {
	out := string(render(t, nastyGraph(), graph.FormatMermaid))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Equal(t, "flowchart LR", lines[0])

	node := regexp.MustCompile(`^\t([A-Za-z0-9_]+)(\[|\[\()"([^"]*)"(\]|\)\])$`)
	link := regexp.MustCompile(`^\t([A-Za-z0-9_]+) (-->|==>|-\.->)(\|"([^"|]*)"\|)? ([A-Za-z0-9_]+)$`)
	var nodes, links int
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		switch {
		case node.MatchString(l):
			id := node.FindStringSubmatch(l)[1]
			assert.False(t, seen[id], "duplicate node id %q", id)
			seen[id] = true
			nodes++
		case link.MatchString(l):
			m := link.FindStringSubmatch(l)
			assert.True(t, seen[m[1]] && seen[m[5]], "link %q between undeclared nodes", l)
			links++
		case strings.HasPrefix(l, "\tlinkStyle "):
		default:
			t.Errorf("line %q is neither a node, a link nor a linkStyle", l)
		}
		assert.NotContains(t, l, "\x00")
	}
	assert.Equal(t, 9, nodes)
	assert.Equal(t, 5, links)
	assert.Contains(t, out, `["quote#quot;ctl\"]`)
	assert.Contains(t, out, `|"ns#quot;1/id#124;#35;x;#lt;b#gt;#amp;#quot;"|`)
	assert.Contains(t, out, `["line break tab"]`)
	assert.Contains(t, out, "[\"émoji 🙂 #96;md#96;\"]")
}

// TestEscapingJSON: names come through JSON as they are (invalid UTF-8 as
// U+FFFD), and edges reference declared nodes.
func TestEscapingJSON(t *testing.T) {
	var doc graph.JSONGraph
	require.NoError(t, json.Unmarshal(render(t, nastyGraph(), graph.FormatJSON), &doc))
	assert.Equal(t, graph.JSONVersion, doc.Version)

	names := map[string]string{}
	for _, n := range doc.Nodes {
		assert.Regexp(t, bareID, n.ID)
		names[n.ID] = n.Kind + ":" + n.Name
	}
	assert.Len(t, names, 9)
	assert.Contains(t, names, doc.Edges[0].From)
	var got []string
	for _, e := range doc.Edges {
		assert.Contains(t, names, e.From)
		assert.Contains(t, names, e.To)
		got = append(got, e.Controller+"|"+e.Namespace+"|"+e.Type+"|"+e.ID+"|"+e.EdgeType)
	}
	assert.Equal(t, []string{
		"||||DependencyEdgeType(42)",
		"line\nbreak\ttab|n|end||InputWeak",
		`quote"ctl\||a.b||OutputExclusive`,
		`quote"ctl\|ns"1|a_b|id|#x;<b>&"|InputStrong`,
		"émoji 🙂 `md`|n|bad\uFFFDutf8\x00||InputQMapped",
	}, got)
}

// TestEdgeDirectionAndLabels: outputs point from controller to type, inputs
// from type to controller; input labels carry the namespace and the ID.
func TestEdgeDirectionAndLabels(t *testing.T) {
	var doc graph.JSONGraph
	require.NoError(t, json.Unmarshal(render(t, exampleGraph(), graph.FormatJSON), &doc))
	kind := map[string]string{}
	for _, n := range doc.Nodes {
		kind[n.ID] = n.Kind
	}
	labels := map[string]string{}
	for _, e := range doc.Edges {
		if strings.HasPrefix(e.EdgeType, "Output") {
			assert.Equal(t, "controller", kind[e.From], e)
			assert.Equal(t, "resource", kind[e.To], e)
		} else {
			assert.Equal(t, "resource", kind[e.From], e)
			assert.Equal(t, "controller", kind[e.To], e)
		}
		labels[e.Controller+" "+e.EdgeType] = e.Label
	}
	assert.Equal(t, map[string]string{
		"IntToStr OutputExclusive":         "",
		"IntToStr InputStrong":             "default",
		"IntToStr InputWeak":               "config/main (weak)",
		"IntToStr InputDestroyReady":       "default (destroy-ready)",
		"QMapper OutputShared":             "shared",
		"QMapper InputQPrimary":            "default (primary)",
		"QMapper InputQMapped":             "config (mapped)",
		"QMapper InputQMappedDestroyReady": "default (mapped destroy-ready)",
		"Sum OutputShared":                 "shared",
		"Sum InputWeak":                    "default (weak)",
	}, labels)
}

// TestEdgeStylesDistinct: no two edge types look the same in DOT.
func TestEdgeStylesDistinct(t *testing.T) {
	seen := map[string]controller.DependencyEdgeType{}
	for et := controller.EdgeOutputExclusive; et <= controller.EdgeInputQMappedDestroyReady; et++ {
		g := &controller.DependencyGraph{Edges: []controller.DependencyEdge{{ControllerName: "c", ResourceType: "t", EdgeType: et}}}
		out := string(render(t, g, graph.FormatDOT))
		m := regexp.MustCompile(`-> "[^"]*" \[(.*), tooltip=`).FindStringSubmatch(out)
		require.NotNil(t, m, out)
		if prev, dup := seen[m[1]]; dup {
			t.Errorf("%s and %s are both drawn as [%s]", prev, et, m[1])
		}
		seen[m[1]] = et
	}
}

// TestDOTAcceptedByGraphviz: dot -Tsvg accepts every DOT document without a
// warning. Skipped when Graphviz is not installed.
func TestDOTAcceptedByGraphviz(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("dot (Graphviz) is not on PATH")
	}
	for name, g := range map[string]*controller.DependencyGraph{
		"example": exampleGraph(), "nasty": nastyGraph(), "empty": nil,
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, dot, "-Tsvg")
			cmd.Stdin = bytes.NewReader(render(t, g, graph.FormatDOT))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "dot: %s", stderr.String())
			assert.Empty(t, stderr.String())
			assert.Contains(t, stdout.String(), "<svg")
			if name == "example" {
				assert.Contains(t, stdout.String(), "config/main (weak)")
			}
			if name == "nasty" {
				assert.Contains(t, stdout.String(), `quote&quot;ctl\`)
			}
		})
	}
}

// TestParseFormat: known names in any case; anything else wraps
// ErrUnknownFormat.
func TestParseFormat(t *testing.T) {
	for in, want := range map[string]graph.Format{
		"dot": graph.FormatDOT, " Mermaid ": graph.FormatMermaid, "JSON": graph.FormatJSON,
	} {
		got, err := graph.ParseFormat(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "svg", "dotx"} {
		_, err := graph.ParseFormat(in)
		assert.ErrorIs(t, err, graph.ErrUnknownFormat, in)
	}
}

// TestRenderUnknownFormat: an unknown format is an error and writes nothing.
func TestRenderUnknownFormat(t *testing.T) {
	var b bytes.Buffer
	err := graph.Render(&b, exampleGraph(), graph.Format("svg"))
	assert.ErrorIs(t, err, graph.ErrUnknownFormat)
	assert.Contains(t, err.Error(), `"svg"`)
	assert.Zero(t, b.Len())
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestWriteError: the writer's error is returned.
func TestWriteError(t *testing.T) {
	boom := errors.New("boom")
	for _, f := range formats {
		assert.ErrorIs(t, graph.Render(failingWriter{boom}, exampleGraph(), f), boom, f)
	}
}

// TestWriterMarks: an input edge whose kind no controller writes says "no
// writer"; one declared written by outside writers says "outside writer";
// the JSON edges carry the marks.
func TestWriterMarks(t *testing.T) {
	g := &controller.DependencyGraph{Edges: []controller.DependencyEdge{
		{ControllerName: "a", ResourceNamespace: "ns", ResourceType: "T", EdgeType: controller.EdgeInputWeak, NoWriter: true},
		{ControllerName: "b", ResourceNamespace: "ns", ResourceType: "U", EdgeType: controller.EdgeInputQPrimary, OutsideWriter: true},
	}}
	var doc graph.JSONGraph
	require.NoError(t, json.Unmarshal(render(t, g, graph.FormatJSON), &doc))
	labels := map[string]string{}
	for _, e := range doc.Edges {
		labels[e.Controller] = e.Label
		assert.Equal(t, e.Controller == "a", e.NoWriter, e)
		assert.Equal(t, e.Controller == "b", e.OutsideWriter, e)
	}
	assert.Equal(t, map[string]string{"a": "ns (weak, no writer)", "b": "ns (primary, outside writer)"}, labels)
}
