// Package res declares the benchmark resource types A..E for COSI: typed
// resources whose spec is params.Spec (two ints), in namespace params.NS.
package res

import (
	"github.com/cosi-project/runtime/pkg/resource"
	"github.com/cosi-project/runtime/pkg/resource/meta"
	"github.com/cosi-project/runtime/pkg/resource/typed"

	"github.com/resgraph/resgraph/bench/common/params"
)

// Resource definitions (COSI's typed.Extension).
type (
	AExt struct{}
	BExt struct{}
	CExt struct{}
	DExt struct{}
	EExt struct{}
)

func definition(t resource.Type) meta.ResourceDefinitionSpec {
	return meta.ResourceDefinitionSpec{Type: t, DefaultNamespace: params.NS}
}

// ResourceDefinition implements typed.Extension.
func (AExt) ResourceDefinition() meta.ResourceDefinitionSpec { return definition(params.AType) }

// ResourceDefinition implements typed.Extension.
func (BExt) ResourceDefinition() meta.ResourceDefinitionSpec { return definition(params.BType) }

// ResourceDefinition implements typed.Extension.
func (CExt) ResourceDefinition() meta.ResourceDefinitionSpec { return definition(params.CType) }

// ResourceDefinition implements typed.Extension.
func (DExt) ResourceDefinition() meta.ResourceDefinitionSpec { return definition(params.DType) }

// ResourceDefinition implements typed.Extension.
func (EExt) ResourceDefinition() meta.ResourceDefinitionSpec { return definition(params.EType) }

// The resource types.
type (
	A = typed.Resource[params.Spec, AExt]
	B = typed.Resource[params.Spec, BExt]
	C = typed.Resource[params.Spec, CExt]
	D = typed.Resource[params.Spec, DExt]
	E = typed.Resource[params.Spec, EExt]
)

func md(t resource.Type, id resource.ID) resource.Metadata {
	return resource.NewMetadata(params.NS, t, id, resource.VersionUndefined)
}

// NewA returns A(ID(i)) with spec {v, i}.
func NewA(i, v int) *A { return AByID(params.ID(i), params.Spec{Value: v, Index: i}) }

// AByID returns an A with the given ID and spec.
func AByID(id resource.ID, s params.Spec) *A {
	return typed.NewResource[params.Spec, AExt](md(params.AType, id), s)
}

// NewB returns B(ID(i)) with spec {v, i}.
func NewB(i, v int) *B { return BByID(params.ID(i), params.Spec{Value: v, Index: i}) }

// BByID returns a B with the given ID and spec.
func BByID(id resource.ID, s params.Spec) *B {
	return typed.NewResource[params.Spec, BExt](md(params.BType, id), s)
}

// NewC returns C(ID(i)) with spec {v, i}.
func NewC(i, v int) *C { return CByID(params.ID(i), params.Spec{Value: v, Index: i}) }

// CByID returns a C with the given ID and spec.
func CByID(id resource.ID, s params.Spec) *C {
	return typed.NewResource[params.Spec, CExt](md(params.CType, id), s)
}

// NewD returns D(ID(i)) with spec {v, i}.
func NewD(i, v int) *D { return DByID(params.ID(i), params.Spec{Value: v, Index: i}) }

// DByID returns a D with the given ID and spec.
func DByID(id resource.ID, s params.Spec) *D {
	return typed.NewResource[params.Spec, DExt](md(params.DType, id), s)
}

// NewE returns E(ID(i)) with spec {v, i}.
func NewE(i, v int) *E { return EByID(params.ID(i), params.Spec{Value: v, Index: i}) }

// EByID returns an E with the given ID and spec.
func EByID(id resource.ID, s params.Spec) *E {
	return typed.NewResource[params.Spec, EExt](md(params.EType, id), s)
}

// Kind returns a kind (an ID-less metadata) of type t in params.NS.
func Kind(t resource.Type) resource.Kind {
	k := resource.NewMetadata(params.NS, t, "", resource.VersionUndefined)

	return &k
}

// Pointer returns a pointer to the i-th resource of type t.
func Pointer(t resource.Type, i int) resource.Pointer {
	p := md(t, params.ID(i))

	return &p
}

// Valued is implemented by *A .. *E.
type Valued interface {
	meta.ResourceWithRD
	TypedSpec() *params.Spec
}

// SpecOf returns the spec of any benchmark resource (Index -1 for another type).
func SpecOf(r resource.Resource) params.Spec {
	if v, ok := r.(interface{ TypedSpec() *params.Spec }); ok {
		return *v.TypedSpec()
	}

	return params.Spec{Index: -1}
}
