package sim_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
)

const ns = "sim"

// NumSpec is the spec of every test kind: a number and a list.
type NumSpec struct {
	N    int
	List []int
}

type ADef struct{}

func (ADef) Definition() typed.Definition {
	return typed.Definition{Type: "As.sim.test", DefaultNamespace: ns}
}

type BDef struct{}

func (BDef) Definition() typed.Definition {
	return typed.Definition{Type: "Bs.sim.test", DefaultNamespace: ns}
}

type CDef struct{}

func (CDef) Definition() typed.Definition {
	return typed.Definition{Type: "Cs.sim.test", DefaultNamespace: ns}
}

type (
	A = typed.Resource[NumSpec, ADef]
	B = typed.Resource[NumSpec, BDef]
	C = typed.Resource[NumSpec, CDef]
)

func newA(id string, n int) *A { return typed.NewDefault[NumSpec, ADef](id, NumSpec{N: n}) }

// aTemplate is the workload's A: IDs a0..a<n-1>, N in [0, 10).
func aTemplate(n int) sim.Template {
	ids := make([]resource.ID, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("a%d", i)
	}
	return sim.Template{IDs: ids, New: func(id resource.ID, rng *rand.Rand) resource.Resource { return newA(id, rng.IntN(10)) }}
}

// goodChain registers A → B (transform: N*2) → C (qtransform: N+1).
func goodChain(e controller.Engine) error {
	ab := transform.NewController(transform.Settings[*A, *B]{
		Name:            "AtoB",
		MapMetadataFunc: func(a *A) *B { return typed.NewDefault[NumSpec, BDef](a.Metadata().ID(), NumSpec{}) },
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, a *A, b *B) error {
			b.TypedSpec().N = a.TypedSpec().N * 2
			return nil
		},
	})
	bc := qtransform.NewQController(qtransform.Settings[*B, *C]{
		Name:              "BtoC",
		MapMetadataFunc:   func(b *B) *C { return typed.NewDefault[NumSpec, CDef](b.Metadata().ID(), NumSpec{}) },
		UnmapMetadataFunc: func(c *C) *B { return typed.NewDefault[NumSpec, BDef](c.Metadata().ID(), NumSpec{}) },
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, b *B, c *C) error {
			c.TypedSpec().N = b.TypedSpec().N + 1
			return nil
		},
	}, qtransform.WithConcurrency(2))
	if err := e.RegisterController(ab); err != nil {
		return err
	}
	return e.RegisterQController(bc)
}

// chainFinal checks the chain's converged state: for every A a B = 2N and
// a C = 2N+1, nothing else.
func chainFinal(v sim.View) error {
	as := sim.List[*A](v)
	if bs := sim.List[*B](v); len(bs) != len(as) {
		return fmt.Errorf("%d As but %d Bs", len(as), len(bs))
	}
	if cs := sim.List[*C](v); len(cs) != len(as) {
		return fmt.Errorf("%d As but %d Cs", len(as), len(cs))
	}
	for _, a := range as {
		id := a.Metadata().ID()
		b, ok := sim.Get[*B](v, id)
		if !ok || b.TypedSpec().N != 2*a.TypedSpec().N {
			return fmt.Errorf("B %s wrong for A N=%d", id, a.TypedSpec().N)
		}
		c, ok := sim.Get[*C](v, id)
		if !ok || c.TypedSpec().N != 2*a.TypedSpec().N+1 {
			return fmt.Errorf("C %s wrong for A N=%d", id, a.TypedSpec().N)
		}
	}
	return nil
}

func chainScenario(faults sim.Faults) sim.Scenario {
	return sim.Scenario{
		Name:     "chain",
		Setup:    func(*sim.World) (sim.System, error) { return sim.System{Register: goodChain}, nil },
		Initial:  []resource.Resource{newA("a0", 1)},
		Workload: sim.Generate(12, aTemplate(3)),
		Faults:   faults,
		Final:    chainFinal,
	}
}
