// Package res declares the benchmark resource types A..E for resgraph: typed
// resources whose spec is params.Spec (two ints), in namespace params.NS.
// It mirrors ../../cosi/res.
package res

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"

	"github.com/resgraph/resgraph/bench/common/params"
)

// Resource definitions (typed.DefinitionProvider, callable on the zero value).
type (
	ADef struct{}
	BDef struct{}
	CDef struct{}
	DDef struct{}
	EDef struct{}
)

func definition(t resource.Type) typed.Definition {
	return typed.Definition{Type: t, DefaultNamespace: params.NS}
}

// Definition implements typed.DefinitionProvider.
func (ADef) Definition() typed.Definition { return definition(params.AType) }

// Definition implements typed.DefinitionProvider.
func (BDef) Definition() typed.Definition { return definition(params.BType) }

// Definition implements typed.DefinitionProvider.
func (CDef) Definition() typed.Definition { return definition(params.CType) }

// Definition implements typed.DefinitionProvider.
func (DDef) Definition() typed.Definition { return definition(params.DType) }

// Definition implements typed.DefinitionProvider.
func (EDef) Definition() typed.Definition { return definition(params.EType) }

// The resource types.
type (
	A = typed.Resource[params.Spec, ADef]
	B = typed.Resource[params.Spec, BDef]
	C = typed.Resource[params.Spec, CDef]
	D = typed.Resource[params.Spec, DDef]
	E = typed.Resource[params.Spec, EDef]
)

func md(t resource.Type, id resource.ID) resource.Metadata {
	return resource.NewMetadata(params.NS, t, id, resource.VersionUndefined)
}

// NewA returns A(ID(i)) with spec {v, i}.
func NewA(i, v int) *A { return AByID(params.ID(i), params.Spec{Value: v, Index: i}) }

// AByID returns an A with the given ID and spec.
func AByID(id resource.ID, s params.Spec) *A {
	return typed.New[params.Spec, ADef](md(params.AType, id), s)
}

// NewB returns B(ID(i)) with spec {v, i}.
func NewB(i, v int) *B { return BByID(params.ID(i), params.Spec{Value: v, Index: i}) }

// BByID returns a B with the given ID and spec.
func BByID(id resource.ID, s params.Spec) *B {
	return typed.New[params.Spec, BDef](md(params.BType, id), s)
}

// NewC returns C(ID(i)) with spec {v, i}.
func NewC(i, v int) *C { return CByID(params.ID(i), params.Spec{Value: v, Index: i}) }

// CByID returns a C with the given ID and spec.
func CByID(id resource.ID, s params.Spec) *C {
	return typed.New[params.Spec, CDef](md(params.CType, id), s)
}

// NewD returns D(ID(i)) with spec {v, i}.
func NewD(i, v int) *D { return DByID(params.ID(i), params.Spec{Value: v, Index: i}) }

// DByID returns a D with the given ID and spec.
func DByID(id resource.ID, s params.Spec) *D {
	return typed.New[params.Spec, DDef](md(params.DType, id), s)
}

// NewE returns E(ID(i)) with spec {v, i}.
func NewE(i, v int) *E { return EByID(params.ID(i), params.Spec{Value: v, Index: i}) }

// EByID returns an E with the given ID and spec.
func EByID(id resource.ID, s params.Spec) *E {
	return typed.New[params.Spec, EDef](md(params.EType, id), s)
}

// Kind returns the kind of type t in params.NS.
func Kind(t resource.Type) resource.Kind { return resource.NewKind(params.NS, t) }

// Pointer returns a pointer to the i-th resource of type t.
func Pointer(t resource.Type, i int) resource.Pointer {
	return resource.NewPointer(params.NS, t, params.ID(i))
}

// Valued is implemented by *A .. *E.
type Valued interface {
	typed.ResourceWithDefinition
	TypedSpec() *params.Spec
}

// SpecOf returns the spec of any benchmark resource (Index -1 for another type).
func SpecOf(r resource.Resource) params.Spec {
	if v, ok := r.(interface{ TypedSpec() *params.Spec }); ok {
		return *v.TypedSpec()
	}

	return params.Spec{Index: -1}
}

// Registry returns a codec registry of A..E with the default (JSON) spec
// encoding: what the states that encode resources need (etcd, the remote
// State's server and client).
func Registry() *codec.Registry {
	reg := codec.NewRegistry()
	codec.MustRegister[params.Spec, ADef](reg)
	codec.MustRegister[params.Spec, BDef](reg)
	codec.MustRegister[params.Spec, CDef](reg)
	codec.MustRegister[params.Spec, DDef](reg)
	codec.MustRegister[params.Spec, EDef](reg)

	return reg
}
