package conformance

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// Example resource types shared by the conformance suites. Their definitions
// put them in the "default" namespace.
const (
	// DefaultNamespace is the default namespace of the example resources.
	DefaultNamespace resource.Namespace = "default"
	// IntResourceType is the type of [IntResource].
	IntResourceType resource.Type = "IntResources.test.resgraph.dev"
	// StrResourceType is the type of [StrResource].
	StrResourceType resource.Type = "StrResources.test.resgraph.dev"
)

// IntSpec is the spec of an [IntResource].
type IntSpec struct {
	Value int
}

// IntResourceDefinition defines [IntResource].
type IntResourceDefinition struct{}

// Definition returns the type [IntResourceType] in [DefaultNamespace].
func (IntResourceDefinition) Definition() typed.Definition {
	return typed.Definition{Type: IntResourceType, DefaultNamespace: DefaultNamespace}
}

// IntResource is an example resource holding an int.
type IntResource = typed.Resource[IntSpec, IntResourceDefinition]

// NewIntResource returns an IntResource ns/id (version undefined) holding
// value.
func NewIntResource(ns resource.Namespace, id resource.ID, value int) *IntResource {
	return typed.New[IntSpec, IntResourceDefinition](
		resource.NewMetadata(ns, IntResourceType, id, resource.VersionUndefined), IntSpec{Value: value})
}

// StrSpec is the spec of a [StrResource].
type StrSpec struct {
	Value string
}

// StrResourceDefinition defines [StrResource].
type StrResourceDefinition struct{}

// Definition returns the type [StrResourceType] in [DefaultNamespace].
func (StrResourceDefinition) Definition() typed.Definition {
	return typed.Definition{Type: StrResourceType, DefaultNamespace: DefaultNamespace}
}

// StrResource is an example resource holding a string.
type StrResource = typed.Resource[StrSpec, StrResourceDefinition]

// NewStrResource returns a StrResource ns/id (version undefined) holding
// value.
func NewStrResource(ns resource.Namespace, id resource.ID, value string) *StrResource {
	return typed.New[StrSpec, StrResourceDefinition](
		resource.NewMetadata(ns, StrResourceType, id, resource.VersionUndefined), StrSpec{Value: value})
}

// ListResourceType is the type of [ListResource].
const ListResourceType resource.Type = "ListResources.test.resgraph.dev"

// ListSpec is the spec of a [ListResource]: a slice and a map, and no
// DeepCopy method, so a state copies it with the typed copy plan (R2).
type ListSpec struct {
	Items []string
	Sets  map[string][]int
}

// ListResourceDefinition defines [ListResource].
type ListResourceDefinition struct{}

// Definition returns the type [ListResourceType] in [DefaultNamespace].
func (ListResourceDefinition) Definition() typed.Definition {
	return typed.Definition{Type: ListResourceType, DefaultNamespace: DefaultNamespace}
}

// ListResource is an example resource whose spec holds references.
type ListResource = typed.Resource[ListSpec, ListResourceDefinition]

// NewListResource returns a ListResource ns/id (version undefined).
func NewListResource(ns resource.Namespace, id resource.ID, spec ListSpec) *ListResource {
	return typed.New[ListSpec, ListResourceDefinition](
		resource.NewMetadata(ns, ListResourceType, id, resource.VersionUndefined), spec)
}
