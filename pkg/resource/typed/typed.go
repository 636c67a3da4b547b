// Package typed provides generic typed resources: a resource whose spec type
// S and definition D are type parameters, so that generic code learns a
// resource type's [Definition] from the type parameter alone and controllers
// never type-assert specs by hand.
//
// A resource type is declared in a few lines:
//
//	type LinkSpec struct{ MTU int }
//	type LinkDef struct{}
//	func (LinkDef) Definition() typed.Definition {
//		return typed.Definition{Type: "Links.net.resgraph.dev", DefaultNamespace: "network"}
//	}
//	type Link = typed.Resource[LinkSpec, LinkDef]
//
// and (*Link)(nil).Definition() returns its definition.
package typed

import (
	"reflect"

	"github.com/resgraph/resgraph/pkg/resource"
)

// Definition describes a resource type: its type name and the namespace its
// resources live in by default.
type Definition struct {
	Type             resource.Type
	DefaultNamespace resource.Namespace
}

// DefinitionProvider provides a resource type's definition. Definition must
// be callable on the zero value.
type DefinitionProvider interface {
	Definition() Definition
}

// DeepCopier is implemented by specs that copy themselves: [Resource.DeepCopy]
// uses it when S implements it (with a value receiver), and plain assignment
// otherwise.
type DeepCopier[S any] interface {
	DeepCopy() S
}

// Resource is a resource whose spec is of type S and whose definition is
// given by D.
type Resource[S any, D DefinitionProvider] struct {
	md   resource.Metadata
	spec S
}

// New returns a typed resource with the given metadata and spec. The
// resource owns a copy of md (see [resource.Metadata.Copy]): changing its
// labels, annotations or finalizers never changes md or another resource
// built from md. The spec is stored as given.
func New[S any, D DefinitionProvider](md resource.Metadata, spec S) *Resource[S, D] {
	return &Resource[S, D]{md: md.Copy(), spec: spec}
}

// NewDefault returns a typed resource with ID id in D's default namespace.
func NewDefault[S any, D DefinitionProvider](id resource.ID, spec S) *Resource[S, D] {
	var d D
	def := d.Definition()
	return &Resource[S, D]{md: resource.NewMetadata(def.DefaultNamespace, def.Type, id, resource.VersionUndefined), spec: spec}
}

// Metadata returns the resource's metadata.
func (r *Resource[S, D]) Metadata() *resource.Metadata { return &r.md }

// Spec returns the spec as a value of type S.
func (r *Resource[S, D]) Spec() any { return r.spec }

// TypedSpec returns a pointer to the spec, for reading and writing.
func (r *Resource[S, D]) TypedSpec() *S { return &r.spec }

// Definition returns D's definition; it works on a nil *Resource.
func (r *Resource[S, D]) Definition() Definition {
	var d D
	return d.Definition()
}

// DeepCopy returns an independent copy: the metadata is copied with
// [resource.Metadata.Copy] and the spec with its DeepCopy method when S has
// one, by assignment otherwise.
func (r *Resource[S, D]) DeepCopy() resource.Resource {
	return &Resource[S, D]{md: r.md.Copy(), spec: copySpec(r.spec)}
}

// copySpec copies a spec with its DeepCopy method when it has one, by
// assignment otherwise. The method is looked up on a nil *S first, so that
// a plain value spec is copied without being boxed into an interface (which
// would cost an allocation per copy); pointer-shaped specs are checked
// directly, which boxes nothing.
func copySpec[S any](s S) S {
	if _, ok := any((*S)(nil)).(DeepCopier[S]); ok {
		c := s // escapes, so it is declared only where it is needed
		return any(&c).(DeepCopier[S]).DeepCopy()
	}
	switch reflect.TypeFor[S]().Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Chan, reflect.Func:
		if c, ok := any(s).(DeepCopier[S]); ok {
			return c.DeepCopy()
		}
	}
	return s
}

// SpecEqual implements [resource.SpecEqualer]: when other is a
// *Resource[S, D] it compares the specs as [resource.SpecEqual] does and
// reports ok.
func (r *Resource[S, D]) SpecEqual(other resource.Resource) (equal, ok bool) {
	o, isTyped := other.(*Resource[S, D])
	if !isTyped {
		return false, false
	}
	if e, has := any(r.spec).(interface{ Equal(any) bool }); has {
		return e.Equal(o.spec), true
	}
	return resource.SpecEqual(any(r.spec), any(o.spec)), true
}
