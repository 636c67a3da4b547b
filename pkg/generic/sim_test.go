package generic_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
)

// TestSimulation_Chains runs G1's chains of generic controllers (transform,
// qtransform and mixed; without finalizers, with them, and with them on
// the last two stages) under the simulator, every fault on: each converges
// to D = f(A) for every input, with no orphan, and to the reference run's
// final state, for every seed. `make sim` runs 1,000 seeds of each.
func TestSimulation_Chains(t *testing.T) {
	for _, ch := range simChains() {
		t.Run(ch.name, func(t *testing.T) {
			sim.Test(t, chainScenario(ch))
		})
	}
}

type simChain struct {
	name     string
	register func(e controller.Engine) error
}

// stage returns the Controller or QController of stage i of the chain
// from DI to DO, with input finalizers or not.
func stage[DI, DO typed.DefinitionProvider](i int, q, finalizers bool) any {
	f := stageFuncs[i]
	if q {
		opts := []qtransform.ControllerOption{qtransform.WithConcurrency(2)}
		if !finalizers {
			opts = append(opts, qtransform.WithoutInputFinalizers())
		}
		return qtransform.NewQController(qtransform.Settings[res[DI], res[DO]]{
			Name:              stageNames[i],
			MapMetadataFunc:   fixture.Map[res[DI], DO],
			UnmapMetadataFunc: fixture.Map[res[DO], DI],
			TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in res[DI], out res[DO]) error {
				out.TypedSpec().N = f(in.TypedSpec().N)
				return nil
			},
		}, opts...)
	}
	var opts []transform.ControllerOption
	if finalizers {
		opts = append(opts, transform.WithInputFinalizers())
	}
	return transform.NewController(transform.Settings[res[DI], res[DO]]{
		Name:            stageNames[i],
		MapMetadataFunc: fixture.Map[res[DI], DO],
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in res[DI], out res[DO]) error {
			out.TypedSpec().N = f(in.TypedSpec().N)
			return nil
		},
	}, opts...)
}

func simChains() []simChain {
	var out []simChain
	for _, fins := range [][3]bool{{false, false, false}, {true, true, true}, {false, true, true}} {
		name := fmt.Sprintf("finalizers=%v%v%v", b2i(fins[0]), b2i(fins[1]), b2i(fins[2]))
		for _, kinds := range []struct {
			name string
			q    [3]bool
		}{{"transform", [3]bool{}}, {"qtransform", [3]bool{true, true, true}}, {"mixed", [3]bool{false, true, false}}} {
			out = append(out, simChain{name: kinds.name + "/" + name, register: func(e controller.Engine) error {
				for _, c := range []any{
					stage[fixture.ADef, fixture.BDef](0, kinds.q[0], fins[0]),
					stage[fixture.BDef, fixture.CDef](1, kinds.q[1], fins[1]),
					stage[fixture.CDef, fixture.DDef](2, kinds.q[2], fins[2]),
				} {
					var err error
					switch c := c.(type) {
					case controller.QController:
						err = e.RegisterQController(c)
					case controller.Controller:
						err = e.RegisterController(c)
					}
					if err != nil {
						return err
					}
				}
				return nil
			}})
		}
	}
	return out
}

func chainScenario(ch simChain) sim.Scenario {
	ids := make([]resource.ID, g1IDs)
	for i := range ids {
		ids[i] = fmt.Sprintf("r%d", i)
	}
	return sim.Scenario{
		Name:    "chain " + ch.name,
		Setup:   func(*sim.World) (sim.System, error) { return sim.System{Register: ch.register}, nil },
		Initial: []resource.Resource{fixture.New[fixture.ADef](sentinel, 1000)},
		Workload: sim.Generate(20, sim.Template{IDs: ids, New: func(id resource.ID, rng *rand.Rand) resource.Resource {
			return fixture.New[fixture.ADef](id, rng.IntN(100))
		}}),
		Faults: sim.AllFaults(),
		Final:  chainConverged,
		Seeds:  20,
	}
}

// chainConverged checks that every A has its B, C and D, each the
// chain's function of the one before, and that every output has its A.
func chainConverged(v sim.View) error {
	as := sim.List[res[fixture.ADef]](v)
	for _, a := range as {
		id, n := a.Metadata().ID(), a.TypedSpec().N
		for i, get := range []func() (int, bool){
			func() (int, bool) { r, ok := sim.Get[res[fixture.BDef]](v, id); return specN(r, ok) },
			func() (int, bool) { r, ok := sim.Get[res[fixture.CDef]](v, id); return specN(r, ok) },
			func() (int, bool) { r, ok := sim.Get[res[fixture.DDef]](v, id); return specN(r, ok) },
		} {
			n = stageFuncs[i](n)
			got, ok := get()
			if !ok || got != n {
				return fmt.Errorf("stage %s of %s: N=%d (present %v), want %d", stageNames[i], id, got, ok, n)
			}
		}
	}
	for _, k := range chainKinds[1:] {
		for _, out := range v.List(k) {
			if _, ok := sim.Get[res[fixture.ADef]](v, out.Metadata().ID()); !ok {
				return fmt.Errorf("orphan %s", resource.String(out))
			}
		}
	}
	return nil
}

func specN[R interface{ TypedSpec() *fixture.Spec }](r R, ok bool) (int, bool) {
	if !ok {
		return 0, false
	}
	return r.TypedSpec().N, true
}
