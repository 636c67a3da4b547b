package main

import (
	"io"

	"github.com/resgraph/resgraph/pkg/graph"
	"github.com/resgraph/resgraph/pkg/runtime"

	"github.com/resgraph/resgraph/cmd/demo/internal/debugsrv"
)

var _ debugsrv.Source = (*daemon)(nil)

// Controllers implements debugsrv.Source.
func (d *daemon) Controllers() []debugsrv.ControllerRow {
	return controllerRows(d.engine.ControllerStatuses())
}

func controllerRows(sts []runtime.ControllerStatus) []debugsrv.ControllerRow {
	rows := make([]debugsrv.ControllerRow, 0, len(sts))
	for _, s := range sts {
		rows = append(rows, debugsrv.ControllerRow{
			Name: s.Name, Kind: s.Kind, State: s.State, BackoffUntil: s.BackoffUntil,
			LastError: s.LastError, LastErrorAt: s.LastErrorAt,
			Reconciles: s.Reconciles, Crashes: s.Crashes, Restarts: s.Restarts, WakeUps: s.WakeUps, Requeues: s.Requeues,
			BusyTime: s.BusyTime, QueueLen: s.QueueLen, InFlight: s.InFlight,
		})
	}
	return rows
}

// RenderGraph implements debugsrv.Source.
func (d *daemon) RenderGraph(w io.Writer, format string) error {
	return renderGraph(d.engine, w, format)
}

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
// builds the engine and registers the controllers, and runs nothing.
func printGraph(w io.Writer, format string) error {
	d, err := newDaemon(config{}, io.Discard)
	if err != nil {
		return err
	}
	return renderGraph(d.engine, w, format)
}
