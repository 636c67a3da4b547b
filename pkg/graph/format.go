package graph

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/resgraph/resgraph/pkg/controller"
)

// Format is an output format of [Render].
type Format string

// The formats [Render] knows.
const (
	// FormatDOT is Graphviz DOT, rendered by [DOT].
	FormatDOT Format = "dot"
	// FormatMermaid is a Mermaid flowchart, rendered by [Mermaid].
	FormatMermaid Format = "mermaid"
	// FormatJSON is JSON, rendered by [JSON].
	FormatJSON Format = "json"
)

// ErrUnknownFormat is wrapped by the errors of [ParseFormat] and [Render] for
// a format they do not know; test with errors.Is.
var ErrUnknownFormat = errors.New("unknown graph format")

// ParseFormat parses a format name: "dot", "mermaid" or "json", in any case
// and with surrounding spaces ignored. Any other name is an error wrapping
// [ErrUnknownFormat].
func ParseFormat(s string) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(s)))
	switch f {
	case FormatDOT, FormatMermaid, FormatJSON:
		return f, nil
	default:
		return "", fmt.Errorf("%w %q (want %q, %q or %q)", ErrUnknownFormat, s, FormatDOT, FormatMermaid, FormatJSON)
	}
}

// Render writes g to w in the given format. An unknown format is an error
// wrapping [ErrUnknownFormat], and nothing is written.
func Render(w io.Writer, g *controller.DependencyGraph, format Format) error {
	switch format {
	case FormatDOT:
		return DOT(w, g)
	case FormatMermaid:
		return Mermaid(w, g)
	case FormatJSON:
		return JSON(w, g)
	default:
		return fmt.Errorf("%w %q", ErrUnknownFormat, string(format))
	}
}
