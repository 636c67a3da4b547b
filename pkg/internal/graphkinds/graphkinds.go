// Package graphkinds reads a Runtime's dependency graph as the tools
// that copy or watch a daemon's state need it: every kind the graph
// names, the controllers, and who writes each type.
package graphkinds

import (
	"slices"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Kinds returns every kind of g, sorted: each input kind, and each output
// type in its namespace or, for an output declared in any namespace, in
// every namespace of the graph.
func Kinds(g *controller.DependencyGraph) []resource.KindKey {
	keys := map[resource.KindKey]bool{}
	namespaces := map[resource.Namespace]bool{}
	var anywhere []resource.Type
	for _, e := range g.Edges {
		switch {
		case e.ResourceNamespace != "":
			keys[resource.KindOf(resource.NewKind(e.ResourceNamespace, e.ResourceType))] = true
			namespaces[e.ResourceNamespace] = true
		case IsOutput(e.EdgeType):
			anywhere = append(anywhere, e.ResourceType)
		}
	}
	for _, typ := range anywhere {
		for ns := range namespaces {
			keys[resource.KindOf(resource.NewKind(ns, typ))] = true
		}
	}
	out := make([]resource.KindKey, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	slices.SortFunc(out, resource.KindKey.Compare)
	return out
}

// Controllers returns the names of g's controllers, sorted.
func Controllers(g *controller.DependencyGraph) []string {
	var out []string
	for _, e := range g.Edges {
		out = append(out, e.ControllerName)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Writers returns, for each output type of g, the controllers that
// declare it, sorted.
func Writers(g *controller.DependencyGraph) map[resource.Type][]string {
	out := map[resource.Type][]string{}
	for _, e := range g.Edges {
		if IsOutput(e.EdgeType) && !slices.Contains(out[e.ResourceType], e.ControllerName) {
			out[e.ResourceType] = append(out[e.ResourceType], e.ControllerName)
		}
	}
	for _, ws := range out {
		slices.Sort(ws)
	}
	return out
}

// IsOutput reports whether an edge type is an output's.
func IsOutput(t controller.DependencyEdgeType) bool {
	return t == controller.EdgeOutputExclusive || t == controller.EdgeOutputShared
}
