// Package graph renders a [controller.DependencyGraph] (the controller and
// resource-type graph a Runtime reports, rule E2) as Graphviz DOT, a Mermaid
// flowchart, or JSON.
//
// Guarantees, for every format:
//
//   - Deterministic: the same set of edges renders to the same bytes, in
//     whatever order the graph lists them. Nodes and edges are sorted
//     (controllers by name, resource types by type, edges by controller
//     name, edge type, namespace, type and ID, as in rule E2); an edge
//     listed twice is rendered once.
//   - Two node kinds: one node per controller and one per resource type.
//     Output edges point from a controller to a type; input edges point from
//     a type to a controller, so a chain of controllers reads left to right.
//   - Every edge type looks different. Input edges are labeled with the
//     namespace they read, followed by "/ID" for an input limited to one
//     ID, and by a qualifier in parentheses for the edge types a line style
//     alone does not name (table below).
//   - Names are escaped: any controller name, namespace, type or ID renders
//     to a valid document that shows the name as it is. Node identifiers
//     are generated ("c<n>_..." for controllers, "r<n>_..." for resource
//     types, letters, digits and underscores only); labels carry the real
//     names.
//   - A nil or empty graph renders to an empty but valid document.
//
// Edge styles (DOT style, Mermaid arrow, label qualifier):
//
//	OutputExclusive           bold          ==>         -
//	OutputShared              dashed        -.->        shared
//	InputStrong               solid         -->         -
//	InputWeak                 dotted        -.->        weak
//	InputDestroyReady         solid, red    -->, red    destroy-ready
//	InputQPrimary             bold          ==>         primary
//	InputQMapped              dashed        -.->        mapped
//	InputQMappedDestroyReady  dashed, red   -.->, red   mapped destroy-ready
//	any other value           solid, gray   -->, gray   its String()
//
// An input edge whose kind no registered controller writes
// (controller.DependencyEdge.NoWriter: only writers outside the Runtime wake
// it) adds "no writer" to its qualifier ("ns (weak, no writer)", "ns (no
// writer)"), and its JSON edge has "noWriter": true. One whose kind the
// Runtime was told outside writers write
// (controller.DependencyEdge.OutsideWriter, runtime.WithOutsideWriters)
// adds "outside writer" instead, and its JSON edge has "outsideWriter":
// true.
//
// Controllers are boxes (DOT) and rectangles (Mermaid); resource types are
// ellipses (DOT) and cylinders (Mermaid).
//
// The JSON schema ([JSONGraph]) is stable (version 1):
//
//	{
//	  "version": 1,
//	  "nodes": [{"id": "c0_A", "kind": "controller", "name": "A"},
//	            {"id": "r0_T", "kind": "resource", "name": "T"}],
//	  "edges": [{"from": "r0_T", "to": "c0_A", "controller": "A",
//	             "namespace": "ns", "type": "T", "id": "",
//	             "edgeType": "InputStrong", "label": "ns"}]
//	}
//
// where "kind" is "controller" or "resource", "edgeType" is the name
// [controller.DependencyEdgeType.String] returns, "namespace" and "id"
// are empty where the edge has none (output edges, inputs of a whole kind),
// and "noWriter": true, present only then, marks an input edge whose kind
// no controller writes.
package graph
