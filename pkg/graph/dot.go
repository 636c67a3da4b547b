package graph

import (
	"bytes"
	"io"
	"strings"

	"github.com/resgraph/resgraph/pkg/controller"
)

// DOT writes g to w as a Graphviz DOT digraph named "resgraph", laid out
// left to right. The document is built in memory and written with a single
// Write; the error is the writer's.
func DOT(w io.Writer, g *controller.DependencyGraph) error {
	m := newModel(g)
	var b bytes.Buffer
	b.WriteString("digraph resgraph {\n")
	b.WriteString("\trankdir=LR;\n")
	b.WriteString("\tnode [fontname=\"Helvetica\"];\n")
	b.WriteString("\tedge [fontname=\"Helvetica\", fontsize=10];\n")
	for _, n := range m.controllers {
		b.WriteString("\t\"" + n.id + "\" [label=" + dotQuote(n.name) + ", shape=box, style=filled, fillcolor=\"#dbe8f5\"];\n")
	}
	for _, n := range m.resources {
		b.WriteString("\t\"" + n.id + "\" [label=" + dotQuote(n.name) + ", shape=ellipse];\n")
	}
	for _, e := range m.edges {
		b.WriteString("\t\"" + e.from + "\" -> \"" + e.to + "\" [")
		if e.label != "" {
			b.WriteString("label=" + dotQuote(e.label) + ", ")
		}
		b.WriteString("style=" + e.style.dotStyle)
		if e.style.dotColor != "" {
			b.WriteString(", color=" + e.style.dotColor + ", fontcolor=" + e.style.dotColor)
		}
		b.WriteString(", tooltip=" + dotQuote(e.EdgeType.String()) + "];\n")
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// dotReplacer escapes a string for a quoted DOT label: DOT itself only
// unescapes \" in quoted strings, but labels also interpret backslash
// sequences (\n, \l, \N, ...), so a backslash is doubled to show as itself.
// Line breaks become centered DOT line breaks.
var dotReplacer = strings.NewReplacer(
	`\`, `\\`,
	`"`, `\"`,
	"\n", `\n`,
)

// dotQuote returns s as a quoted DOT string that a label displays as s (see
// [printable] for line breaks and control characters).
func dotQuote(s string) string {
	return `"` + dotReplacer.Replace(printable(s)) + `"`
}
