package graph

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/resgraph/resgraph/pkg/controller"
)

// nodeKind tells controllers and resource types apart.
type nodeKind string

const (
	nodeController nodeKind = "controller"
	nodeResource   nodeKind = "resource"
)

// node is a controller or a resource type of the rendered graph.
type node struct {
	id   string // generated identifier, [A-Za-z0-9_] only
	name string // controller name or resource type, as it is
	kind nodeKind
}

// edge is a dependency edge with its rendering attributes resolved.
type edge struct {
	controller.DependencyEdge

	from, to string // node identifiers
	label    string // "" when the edge has no label
	style    edgeStyle
}

// edgeStyle is how one edge type is drawn.
type edgeStyle struct {
	qualifier    string // label suffix naming the edge type, "" if the line style suffices
	dotStyle     string // DOT style attribute
	dotColor     string // DOT color, "" for the default
	mermaidArrow string // Mermaid link syntax
	mermaidColor string // Mermaid stroke color, "" for the default
}

// styleOf returns the style of an edge type (see the table in the package
// doc).
func styleOf(t controller.DependencyEdgeType) edgeStyle {
	switch t {
	case controller.EdgeOutputExclusive:
		return edgeStyle{dotStyle: "bold", mermaidArrow: "==>"}
	case controller.EdgeOutputShared:
		return edgeStyle{qualifier: "shared", dotStyle: "dashed", mermaidArrow: "-.->"}
	case controller.EdgeInputStrong:
		return edgeStyle{dotStyle: "solid", mermaidArrow: "-->"}
	case controller.EdgeInputWeak:
		return edgeStyle{qualifier: "weak", dotStyle: "dotted", mermaidArrow: "-.->"}
	case controller.EdgeInputDestroyReady:
		return edgeStyle{qualifier: "destroy-ready", dotStyle: "solid", dotColor: "red", mermaidArrow: "-->", mermaidColor: "red"}
	case controller.EdgeInputQPrimary:
		return edgeStyle{qualifier: "primary", dotStyle: "bold", mermaidArrow: "==>"}
	case controller.EdgeInputQMapped:
		return edgeStyle{qualifier: "mapped", dotStyle: "dashed", mermaidArrow: "-.->"}
	case controller.EdgeInputQMappedDestroyReady:
		return edgeStyle{qualifier: "mapped destroy-ready", dotStyle: "dashed", dotColor: "red", mermaidArrow: "-.->", mermaidColor: "red"}
	default:
		return edgeStyle{qualifier: t.String(), dotStyle: "solid", dotColor: "gray", mermaidArrow: "-->", mermaidColor: "gray"}
	}
}

// model is a graph ready to render: sorted, deduplicated nodes and edges.
type model struct {
	controllers []node // sorted by name
	resources   []node // sorted by type
	edges       []edge // sorted as in rule E2
}

// newModel builds the model of g; a nil g is an empty graph. g is not
// modified.
func newModel(g *controller.DependencyGraph) model {
	var m model
	if g == nil || len(g.Edges) == 0 {
		return m
	}
	deps := slices.Clone(g.Edges)
	slices.SortFunc(deps, controller.DependencyEdge.Compare)
	deps = slices.Compact(deps)

	controllerNames := make([]string, 0, len(deps))
	typeNames := make([]string, 0, len(deps))
	for _, d := range deps {
		controllerNames = append(controllerNames, d.ControllerName)
		typeNames = append(typeNames, d.ResourceType)
	}
	m.controllers = makeNodes(controllerNames, nodeController, "c")
	m.resources = makeNodes(typeNames, nodeResource, "r")
	controllerIDs := nodeIDs(m.controllers)
	resourceIDs := nodeIDs(m.resources)

	m.edges = make([]edge, 0, len(deps))
	for _, d := range deps {
		e := edge{DependencyEdge: d, style: styleOf(d.EdgeType)}
		c, r := controllerIDs[d.ControllerName], resourceIDs[d.ResourceType]
		if d.EdgeType.IsOutput() {
			e.from, e.to = c, r
		} else {
			e.from, e.to = r, c
		}
		e.label = edgeLabel(d, e.style)
		m.edges = append(m.edges, e)
	}
	return m
}

// makeNodes returns one node per distinct name, sorted, with identifiers
// prefix<index>_<sanitized name>: the index makes them unique whatever the
// names sanitize to.
func makeNodes(names []string, kind nodeKind, prefix string) []node {
	slices.Sort(names)
	names = slices.Compact(names)
	nodes := make([]node, len(names))
	for i, name := range names {
		nodes[i] = node{id: prefix + strconv.Itoa(i) + "_" + sanitizeID(name), name: name, kind: kind}
	}
	return nodes
}

func nodeIDs(nodes []node) map[string]string {
	ids := make(map[string]string, len(nodes))
	for _, n := range nodes {
		ids[n.name] = n.id
	}
	return ids
}

// maxIDNameLen bounds the part of a node identifier taken from the name, to
// keep the documents readable; the index prefix keeps identifiers unique.
const maxIDNameLen = 40

// sanitizeID keeps ASCII letters and digits and replaces every other byte
// by an underscore, so that the result is a valid bare identifier in DOT
// and Mermaid.
func sanitizeID(name string) string {
	if len(name) > maxIDNameLen {
		name = name[:maxIDNameLen]
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := range len(name) {
		c := name[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// noWriterQualifier marks an input edge whose kind no controller writes
// (controller.DependencyEdge.NoWriter).
const noWriterQualifier = "no writer"

// outsideWriterQualifier marks an input edge whose kind is declared
// written by outside writers (controller.DependencyEdge.OutsideWriter).
const outsideWriterQualifier = "outside writer"

// edgeLabel is "namespace[/ID][ (qualifier[, no writer])]" for an input
// edge and the qualifier alone (possibly "") for an output edge.
func edgeLabel(d controller.DependencyEdge, st edgeStyle) string {
	scope := d.ResourceNamespace
	if d.ResourceID != "" {
		scope += "/" + d.ResourceID
	}
	qualifier := st.qualifier
	switch {
	case d.EdgeType.IsOutput():
	case d.NoWriter:
		qualifier = strings.TrimPrefix(qualifier+", "+noWriterQualifier, ", ")
	case d.OutsideWriter:
		qualifier = strings.TrimPrefix(qualifier+", "+outsideWriterQualifier, ", ")
	}
	switch {
	case scope == "":
		return qualifier
	case qualifier == "":
		return scope
	default:
		return scope + " (" + qualifier + ")"
	}
}

// printable prepares a name for a text label: invalid UTF-8 and control
// characters become U+FFFD, a tab becomes a space, and every line break
// (\r\n, \r or \n) becomes "\n", which each format renders its own way.
func printable(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r' || r == '\n':
			return '\n'
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (0x80 <= r && r < 0xa0):
			return utf8.RuneError
		default:
			return r
		}
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}
