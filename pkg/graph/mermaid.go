package graph

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/resgraph/resgraph/pkg/controller"
)

// Mermaid writes g to w as a Mermaid flowchart laid out left to right.
// Colored edges are styled with linkStyle statements after the edges. The
// document is built in memory and written with a single Write; the error is
// the writer's.
func Mermaid(w io.Writer, g *controller.DependencyGraph) error {
	m := newModel(g)
	var b bytes.Buffer
	b.WriteString("flowchart LR\n")
	for _, n := range m.controllers {
		b.WriteString("\t" + n.id + "[" + mermaidQuote(n.name) + "]\n")
	}
	for _, n := range m.resources {
		b.WriteString("\t" + n.id + "[(" + mermaidQuote(n.name) + ")]\n")
	}
	// Mermaid numbers links in the order they are defined; linkStyle
	// refers to those numbers.
	colored := map[string][]string{} // color -> link numbers
	var colors []string              // in order of first use
	for i, e := range m.edges {
		b.WriteString("\t" + e.from + " " + e.style.mermaidArrow)
		if e.label != "" {
			b.WriteString("|" + mermaidQuote(e.label) + "|")
		}
		b.WriteString(" " + e.to + "\n")
		if c := e.style.mermaidColor; c != "" {
			if _, seen := colored[c]; !seen {
				colors = append(colors, c)
			}
			colored[c] = append(colored[c], strconv.Itoa(i))
		}
	}
	for _, c := range colors {
		b.WriteString("\tlinkStyle " + strings.Join(colored[c], ",") + " stroke:" + c + ",color:" + c + "\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// mermaidReplacer escapes a label for a quoted Mermaid string: the
// characters that end the string, start an entity, or could be read as
// markup or label delimiters become Mermaid entity codes, and line breaks
// become spaces.
var mermaidReplacer = strings.NewReplacer(
	"#", "#35;",
	`"`, "#quot;",
	"&", "#amp;",
	"<", "#lt;",
	">", "#gt;",
	"|", "#124;",
	"`", "#96;",
	"\n", " ",
)

// mermaidQuote returns s as a quoted Mermaid label that displays as s (see
// [printable] for line breaks and control characters).
func mermaidQuote(s string) string {
	return `"` + mermaidReplacer.Replace(printable(s)) + `"`
}
