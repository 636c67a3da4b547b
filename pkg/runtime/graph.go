package runtime

import (
	"slices"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
)

// GetDependencyGraph returns the controller/resource graph (rule E2): one
// edge per declared input (static and dynamic) and output of every
// registered controller, sorted by controller name, edge type, namespace,
// type and ID. Output edges have an empty namespace and ID. An input
// declared both statically and by UpdateInputs (same namespace, type, ID
// and kind) is one edge; the same resources declared with two input kinds
// are two edges, one per edge type. The graph is a copy; the error is
// always nil (it exists for Runtimes whose registry may fail). An input
// edge whose kind no registered controller outputs is marked NoWriter
// (see [WithClosedGraph]), or OutsideWriter when its kind was declared
// with [WithOutsideWriters].
func (r *Runtime) GetDependencyGraph() (*controller.DependencyGraph, error) {
	g := &controller.DependencyGraph{}
	recs := r.db.Records()
	for _, rec := range recs {
		for _, in := range slices.Concat(rec.Static, rec.Dynamic) {
			g.Edges = append(g.Edges, controller.DependencyEdge{
				ControllerName:    rec.Name,
				ResourceNamespace: in.Namespace,
				ResourceType:      in.Type,
				ResourceID:        in.ID.ValueOrZero(),
				EdgeType:          controller.InputEdgeType(in.Kind),
				Uncached:          in.Uncached,
			})
			e := &g.Edges[len(g.Edges)-1]
			if !dependency.Writes(recs, in.Namespace, in.Type) {
				e.OutsideWriter = r.opts.outsideWriter(in.Namespace, in.Type)
				e.NoWriter = !e.OutsideWriter
			}
		}
		for _, out := range rec.Outputs {
			g.Edges = append(g.Edges, controller.DependencyEdge{
				ControllerName: rec.Name,
				ResourceType:   out.Type,
				EdgeType:       controller.OutputEdgeType(out.Kind),
			})
		}
	}
	slices.SortFunc(g.Edges, controller.DependencyEdge.Compare)
	g.Edges = mergeEdges(g.Edges)
	return g, nil
}

// mergeEdges keeps one of each run of equal edges (adjacent once sorted),
// marked Uncached when any of them is: an input declared cached and
// uncached is one edge (rule E2).
func mergeEdges(edges []controller.DependencyEdge) []controller.DependencyEdge {
	out := edges[:0]
	for _, e := range edges {
		if n := len(out); n > 0 && out[n-1].Compare(e) == 0 {
			out[n-1].Uncached = out[n-1].Uncached || e.Uncached
			continue
		}
		out = append(out, e)
	}
	clear(edges[len(out):])
	return out
}
