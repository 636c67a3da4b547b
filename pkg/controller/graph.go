package controller

import (
	"cmp"
	"strconv"

	"github.com/resgraph/resgraph/pkg/resource"
)

// DependencyEdgeType is the type of an edge of the dependency graph.
type DependencyEdgeType int

const (
	// EdgeOutputExclusive: the controller exclusively writes the type.
	EdgeOutputExclusive DependencyEdgeType = iota
	// EdgeOutputShared: the controller writes the type, shared.
	EdgeOutputShared
	// EdgeInputStrong: a strong input.
	EdgeInputStrong
	// EdgeInputWeak: a weak input.
	EdgeInputWeak
	// EdgeInputDestroyReady: a destroy-ready input.
	EdgeInputDestroyReady
	// EdgeInputQPrimary: a QController's primary input.
	EdgeInputQPrimary
	// EdgeInputQMapped: a QController's mapped input.
	EdgeInputQMapped
	// EdgeInputQMappedDestroyReady: a QController's mapped destroy-ready
	// input.
	EdgeInputQMappedDestroyReady
)

// String returns the edge type's name, e.g. "InputStrong".
func (t DependencyEdgeType) String() string {
	switch t {
	case EdgeOutputExclusive:
		return "OutputExclusive"
	case EdgeOutputShared:
		return "OutputShared"
	case EdgeInputStrong:
		return "InputStrong"
	case EdgeInputWeak:
		return "InputWeak"
	case EdgeInputDestroyReady:
		return "InputDestroyReady"
	case EdgeInputQPrimary:
		return "InputQPrimary"
	case EdgeInputQMapped:
		return "InputQMapped"
	case EdgeInputQMappedDestroyReady:
		return "InputQMappedDestroyReady"
	default:
		return "DependencyEdgeType(" + strconv.Itoa(int(t)) + ")"
	}
}

// IsOutput reports whether the edge type is an output edge.
func (t DependencyEdgeType) IsOutput() bool {
	return t == EdgeOutputExclusive || t == EdgeOutputShared
}

// InputEdgeType returns the edge type of an input kind.
func InputEdgeType(k InputKind) DependencyEdgeType {
	switch k {
	case InputStrong:
		return EdgeInputStrong
	case InputDestroyReady:
		return EdgeInputDestroyReady
	case InputQPrimary:
		return EdgeInputQPrimary
	case InputQMapped:
		return EdgeInputQMapped
	case InputQMappedDestroyReady:
		return EdgeInputQMappedDestroyReady
	default:
		return EdgeInputWeak
	}
}

// OutputEdgeType returns the edge type of an output kind.
func OutputEdgeType(k OutputKind) DependencyEdgeType {
	if k == OutputShared {
		return EdgeOutputShared
	}
	return EdgeOutputExclusive
}

// DependencyEdge is one declared input or output of a controller. Output
// edges have an empty namespace and ID.
type DependencyEdge struct {
	ControllerName    string
	ResourceNamespace resource.Namespace
	ResourceType      resource.Type
	ResourceID        resource.ID
	EdgeType          DependencyEdgeType
	// NoWriter marks an input edge whose kind no registered controller
	// declares as an output (of its type, in its namespace or in any):
	// only writers outside the Runtime (users, other processes) change it,
	// and so wake the controller. Often a typo of the namespace or the
	// type; see the Runtime's option for closed graphs.
	NoWriter bool
	// OutsideWriter marks an input edge whose kind no registered
	// controller outputs but that the Runtime was told outside writers
	// write (runtime.WithOutsideWriters): expected, not a mistake, and
	// never NoWriter.
	OutsideWriter bool
	// Uncached marks an input edge the controller may also read through
	// to the state, bypassing the Runtime's cache (Input.Uncached). An
	// input declared both ways is one edge, marked.
	Uncached bool
}

// Compare orders edges as rule E2 sorts a dependency graph: by controller
// name, edge type, namespace, type and ID.
func (a DependencyEdge) Compare(b DependencyEdge) int {
	return cmp.Or(
		cmp.Compare(a.ControllerName, b.ControllerName),
		cmp.Compare(a.EdgeType, b.EdgeType),
		cmp.Compare(a.ResourceNamespace, b.ResourceNamespace),
		cmp.Compare(a.ResourceType, b.ResourceType),
		cmp.Compare(a.ResourceID, b.ResourceID),
	)
}

// DependencyGraph is the controller/resource graph of a Runtime (rule E2):
// one edge per declared input and output, sorted by controller name, edge
// type, namespace, type and ID.
type DependencyGraph struct {
	Edges []DependencyEdge
}
