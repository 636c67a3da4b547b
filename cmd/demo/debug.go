package main

import (
	"io"

	"github.com/resgraph/resgraph/pkg/graph"
	"github.com/resgraph/resgraph/pkg/runtime"
)

func renderGraph(engine *runtime.Runtime, w io.Writer, format string) error {
	f, err := graph.ParseFormat(format)
	if err != nil {
		return err
	}
	g, err := engine.GetDependencyGraph()
	if err != nil {
		return err
	}
	return graph.Render(w, g, f)
}

// printGraph prints the agent's controller/resource graph in format. It
// builds the Runtime and registers the controllers, and runs nothing.
func printGraph(w io.Writer, format string) error {
	d, err := newDaemon(config{}, io.Discard)
	if err != nil {
		return err
	}
	return renderGraph(d.engine, w, format)
}
