package conformance

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// UndeclaredResourceType is the type of [UndeclaredResource], which no
// example controller declares as an input or an output: [RuntimeSuite]
// uses it to check that accesses outside a controller's scope are refused
// (rule C3).
const UndeclaredResourceType resource.Type = "Undeclared.test.resgraph.dev"

// UndeclaredResourceDefinition defines [UndeclaredResource].
type UndeclaredResourceDefinition struct{}

// Definition returns the type [UndeclaredResourceType] in
// [DefaultNamespace].
func (UndeclaredResourceDefinition) Definition() typed.Definition {
	return typed.Definition{Type: UndeclaredResourceType, DefaultNamespace: DefaultNamespace}
}

// UndeclaredResource is an example resource holding an int, of a type that
// no example controller declares.
type UndeclaredResource = typed.Resource[IntSpec, UndeclaredResourceDefinition]

// NewUndeclaredResource returns an UndeclaredResource ns/id (version
// undefined) holding value.
func NewUndeclaredResource(ns resource.Namespace, id resource.ID, value int) *UndeclaredResource {
	return typed.New[IntSpec, UndeclaredResourceDefinition](
		resource.NewMetadata(ns, UndeclaredResourceType, id, resource.VersionUndefined), IntSpec{Value: value})
}
