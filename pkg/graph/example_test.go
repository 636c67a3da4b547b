package graph_test

import (
	"os"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/graph"
)

// A controller that turns IntResources into StrResources, drawn as a
// Mermaid flowchart.
func ExampleMermaid() {
	g := &controller.DependencyGraph{Edges: []controller.DependencyEdge{
		{ControllerName: "IntToStr", ResourceType: "StrResources.test.resgraph.dev", EdgeType: controller.EdgeOutputExclusive},
		{ControllerName: "IntToStr", ResourceNamespace: "default", ResourceType: "IntResources.test.resgraph.dev", EdgeType: controller.EdgeInputWeak},
	}}
	if err := graph.Mermaid(os.Stdout, g); err != nil {
		panic(err)
	}
	// Output:
	// flowchart LR
	// 	c0_IntToStr["IntToStr"]
	// 	r0_IntResources_test_resgraph_dev[("IntResources.test.resgraph.dev")]
	// 	r1_StrResources_test_resgraph_dev[("StrResources.test.resgraph.dev")]
	// 	c0_IntToStr ==> r1_StrResources_test_resgraph_dev
	// 	r0_IntResources_test_resgraph_dev -.->|"default (weak)"| c0_IntToStr
}

// The same graph in Graphviz DOT, selected by name as a command-line flag
// would.
func ExampleRender() {
	g := &controller.DependencyGraph{Edges: []controller.DependencyEdge{
		{ControllerName: "IntToStr", ResourceNamespace: "default", ResourceType: "IntResources.test.resgraph.dev", EdgeType: controller.EdgeInputWeak},
	}}
	format, err := graph.ParseFormat("DOT")
	if err != nil {
		panic(err)
	}
	if err := graph.Render(os.Stdout, g, format); err != nil {
		panic(err)
	}
	// Output:
	// digraph resgraph {
	// 	rankdir=LR;
	// 	node [fontname="Helvetica"];
	// 	edge [fontname="Helvetica", fontsize=10];
	// 	"c0_IntToStr" [label="IntToStr", shape=box, style=filled, fillcolor="#dbe8f5"];
	// 	"r0_IntResources_test_resgraph_dev" [label="IntResources.test.resgraph.dev", shape=ellipse];
	// 	"r0_IntResources_test_resgraph_dev" -> "c0_IntToStr" [label="default (weak)", style=dotted, tooltip="InputWeak"];
	// }
}
