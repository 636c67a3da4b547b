package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/resgraph/resgraph/pkg/graph"
)

var graphFormats = []string{string(graph.FormatDOT), string(graph.FormatMermaid), string(graph.FormatJSON)}

func newGraph(a *app) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "graph",
		Short: "Print the daemon's controller/resource graph (DOT, Mermaid or JSON)",
		Long: `Print the daemon's dependency graph: one node per controller and per
resource type, an edge for each input (type to controller) and output
(controller to type), styled by kind (see package graph). DOT renders with
Graphviz, Mermaid in Markdown viewers.`,
		Example: `  resgraphctl graph | dot -Tsvg > graph.svg
  resgraphctl graph -o mermaid`,
		GroupID: groupDaemon,
		Args:    rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := graph.ParseFormat(output)
			if err != nil {
				return usageErr(errorf("-o %q: want dot, mermaid or json", output))
			}
			return a.graph(cmd.Context(), f)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "dot", "output format: dot, mermaid or json")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(graphFormats, cobra.ShellCompDirectiveNoFileComp))
	return c
}

func (a *app) graph(ctx context.Context, f graph.Format) error {
	obs, err := a.observer()
	if err != nil {
		return err
	}
	ctx, cancel := a.request(ctx)
	defer cancel()
	g, err := obs.Graph(ctx)
	if err != nil {
		return err
	}
	return graph.Render(a.stdout, g, f)
}
