package etcd_test

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// The chain of the multi-process tests and of W3 (bench/README.md): five
// resource types A to E, one namespace, a spec of two ints, and the
// transforms A→B, B→C, C→D, D→E, each setting N of its output to N of its
// input plus one.

// chainNS is the namespace of the chain's resources.
const chainNS resource.Namespace = "chain"

// chainSpec is the spec of the chain's resources.
type chainSpec struct {
	N int `json:"n"`
	M int `json:"m"`
}

type (
	chainADef struct{}
	chainBDef struct{}
	chainCDef struct{}
	chainDDef struct{}
	chainEDef struct{}
)

func chainDef(letter string) typed.Definition {
	return typed.Definition{Type: "Chain" + letter + "s.test.resgraph.dev", DefaultNamespace: chainNS}
}

func (chainADef) Definition() typed.Definition { return chainDef("A") }
func (chainBDef) Definition() typed.Definition { return chainDef("B") }
func (chainCDef) Definition() typed.Definition { return chainDef("C") }
func (chainDDef) Definition() typed.Definition { return chainDef("D") }
func (chainEDef) Definition() typed.Definition { return chainDef("E") }

// chainA is the first resource of the chain, which the tests write.
type chainA = typed.Resource[chainSpec, chainADef]

// chainKinds are the kinds A to E.
var chainKinds = []resource.Kind{
	resource.NewKind(chainNS, chainDef("A").Type),
	resource.NewKind(chainNS, chainDef("B").Type),
	resource.NewKind(chainNS, chainDef("C").Type),
	resource.NewKind(chainNS, chainDef("D").Type),
	resource.NewKind(chainNS, chainDef("E").Type),
}

// registerChain registers the chain's types.
func registerChain(reg *codec.Registry) {
	codec.MustRegister[chainSpec, chainADef](reg)
	codec.MustRegister[chainSpec, chainBDef](reg)
	codec.MustRegister[chainSpec, chainCDef](reg)
	codec.MustRegister[chainSpec, chainDDef](reg)
	codec.MustRegister[chainSpec, chainEDef](reg)
}

// newChainA returns the A with ID id holding n.
func newChainA(id resource.ID, n int) *chainA {
	return typed.NewDefault[chainSpec, chainADef](id, chainSpec{N: n})
}

// chainN returns N of a chain resource.
func chainN(r resource.Resource) int { return r.Spec().(chainSpec).N }

// plusOne is a stage of the chain: a transform from DI to DO that sets
// N to the input's N plus one.
func plusOne[DI, DO typed.DefinitionProvider](name string, opts ...transform.ControllerOption) controller.Controller {
	type in = *typed.Resource[chainSpec, DI]
	type out = *typed.Resource[chainSpec, DO]
	return transform.NewController(transform.Settings[in, out]{
		Name: name,
		MapMetadataFunc: func(r in) out {
			return typed.NewDefault[chainSpec, DO](r.Metadata().ID(), chainSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, r in, o out) error {
			o.TypedSpec().N = r.TypedSpec().N + 1
			return nil
		},
	}, opts...)
}

// chainStages are the stages by name, in chain order.
var chainStages = []string{"AtoB", "BtoC", "CtoD", "DtoE"}

// chainStage returns the stage named name (one of chainStages).
func chainStage(name string, finalizers bool) (controller.Controller, error) {
	var opts []transform.ControllerOption
	if finalizers {
		opts = append(opts, transform.WithInputFinalizers())
	}
	switch name {
	case "AtoB":
		return plusOne[chainADef, chainBDef](name, opts...), nil
	case "BtoC":
		return plusOne[chainBDef, chainCDef](name, opts...), nil
	case "CtoD":
		return plusOne[chainCDef, chainDDef](name, opts...), nil
	case "DtoE":
		return plusOne[chainDDef, chainEDef](name, opts...), nil
	}
	return nil, fmt.Errorf("no chain stage %q", name)
}
