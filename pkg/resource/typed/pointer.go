package typed

import "github.com/resgraph/resgraph/pkg/resource"

// Kind returns the kind (default namespace and type) of the resource type
// that D defines. D is a [DefinitionProvider]: the definition type itself
// (typed.Kind[LinkDef]()) or the resource type (typed.Kind[*Link]()), whose
// Definition works on a nil pointer.
func Kind[D DefinitionProvider]() resource.Kind {
	var d D
	def := d.Definition()
	return resource.NewKind(def.DefaultNamespace, def.Type)
}

// Pointer returns the pointer to the resource with ID id of the type that D
// defines, in its default namespace (see [Kind] for D).
func Pointer[D DefinitionProvider](id resource.ID) resource.Pointer {
	var d D
	def := d.Definition()
	return resource.NewPointer(def.DefaultNamespace, def.Type, id)
}
