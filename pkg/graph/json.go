package graph

import (
	"encoding/json"
	"io"

	"github.com/resgraph/resgraph/pkg/controller"
)

// JSONVersion is the version of the JSON schema [JSON] writes.
const JSONVersion = 1

// JSONGraph is the document [JSON] writes (schema in the package doc).
type JSONGraph struct {
	Version int        `json:"version"`
	Nodes   []JSONNode `json:"nodes"`
	Edges   []JSONEdge `json:"edges"`
}

// JSONNode is a controller or a resource type. Controllers come first,
// sorted by name, then resource types, sorted by type.
type JSONNode struct {
	// ID is the node's identifier, referenced by [JSONEdge.From] and
	// [JSONEdge.To].
	ID string `json:"id"`
	// Kind is "controller" or "resource".
	Kind string `json:"kind"`
	// Name is the controller name or the resource type.
	Name string `json:"name"`
}

// JSONEdge is one dependency edge, pointing from the controller to the
// resource type for outputs and the other way for inputs.
type JSONEdge struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Controller string `json:"controller"`
	Namespace  string `json:"namespace"`
	Type       string `json:"type"`
	ID         string `json:"id"`
	// EdgeType is the edge type's [controller.DependencyEdgeType.String].
	EdgeType string `json:"edgeType"`
	// Label is the label the other formats draw ("" for none).
	Label string `json:"label"`
	// NoWriter marks an input edge whose kind no controller writes
	// (controller.DependencyEdge.NoWriter); absent otherwise.
	NoWriter bool `json:"noWriter,omitempty"`
	// OutsideWriter marks an input edge whose kind is declared written by
	// outside writers (controller.DependencyEdge.OutsideWriter); absent
	// otherwise.
	OutsideWriter bool `json:"outsideWriter,omitempty"`
	// Uncached marks an input edge the controller may read bypassing the
	// Runtime's cache (controller.DependencyEdge.Uncached); absent
	// otherwise.
	Uncached bool `json:"uncached,omitempty"`
}

// JSON writes g to w as an indented [JSONGraph] followed by a newline. The
// document is built in memory and written with a single Write; the error is
// the writer's.
func JSON(w io.Writer, g *controller.DependencyGraph) error {
	out, err := json.MarshalIndent(NewJSONGraph(g), "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}

// NewJSONGraph returns the document [JSON] writes for g, for embedding in
// another document (the debug pages' live graph).
func NewJSONGraph(g *controller.DependencyGraph) JSONGraph {
	m := newModel(g)
	doc := JSONGraph{
		Version: JSONVersion,
		Nodes:   make([]JSONNode, 0, len(m.controllers)+len(m.resources)),
		Edges:   make([]JSONEdge, 0, len(m.edges)),
	}
	for _, nodes := range [][]node{m.controllers, m.resources} {
		for _, n := range nodes {
			doc.Nodes = append(doc.Nodes, JSONNode{ID: n.id, Kind: string(n.kind), Name: n.name})
		}
	}
	for _, e := range m.edges {
		doc.Edges = append(doc.Edges, JSONEdge{
			From:          e.from,
			To:            e.to,
			Controller:    e.ControllerName,
			Namespace:     e.ResourceNamespace,
			Type:          e.ResourceType,
			ID:            e.ResourceID,
			EdgeType:      e.EdgeType.String(),
			Label:         e.label,
			NoWriter:      e.NoWriter && !e.EdgeType.IsOutput(),
			OutsideWriter: e.OutsideWriter && !e.EdgeType.IsOutput(),
			Uncached:      e.Uncached && !e.EdgeType.IsOutput(),
		})
	}
	return doc
}
