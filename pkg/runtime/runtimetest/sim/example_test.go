package sim_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
)

// The README's minimal controller and its simulation, as the README and
// docs/simulation.md write them: a whole-file example of sim.Test.

type NumberSpec struct{ N int }
type NumberDef struct{}

func (NumberDef) Definition() typed.Definition {
	return typed.Definition{Type: "Numbers.example.dev", DefaultNamespace: "default"}
}

type Number = typed.Resource[NumberSpec, NumberDef]

type LabelSpec struct{ Text string }
type LabelDef struct{}

func (LabelDef) Definition() typed.Definition {
	return typed.Definition{Type: "Labels.example.dev", DefaultNamespace: "default"}
}

type Label = typed.Resource[LabelSpec, LabelDef]

func numberToLabel() controller.Controller {
	return transform.NewController(transform.Settings[*Number, *Label]{
		Name: "number-to-label",
		MapMetadataFunc: func(n *Number) *Label {
			return typed.NewDefault[LabelSpec, LabelDef](n.Metadata().ID(), LabelSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, n *Number, l *Label) error {
			l.TypedSpec().Text = "number " + strconv.Itoa(n.TypedSpec().N)
			return nil
		},
	})
}

// simulateNumbers is a simulation test as docs/simulation.md writes it (a Test
// function in your package; here in lower case, since an example's file
// holds no test, and TestREADME_Simulation runs it): sim.Test runs the
// real controller on the real Runtime under seeded schedules, with the
// workload's writes and every kind of fault, and checks Final once each
// run converged (and that it converged to the state of the run without a
// fault); a failure fails t with the shrunk run and the command that
// replays it.
func simulateNumbers(t *testing.T) {
	sim.Test(t, sim.Scenario{
		Name: "numbers",
		Setup: func(*sim.World) (sim.System, error) {
			return sim.System{Register: func(e controller.Engine) error { return e.RegisterController(numberToLabel()) }}, nil
		},
		Workload: sim.Generate(20, sim.Template{
			IDs: []resource.ID{"one", "two", "three"},
			New: func(id resource.ID, rng *rand.Rand) resource.Resource {
				return typed.NewDefault[NumberSpec, NumberDef](id, NumberSpec{N: rng.IntN(100)})
			},
		}),
		Faults: sim.AllFaults(),
		Final: func(v sim.View) error { // every Number has its Label, nothing else
			for _, n := range sim.List[*Number](v) {
				l, ok := sim.Get[*Label](v, n.Metadata().ID())
				if !ok || l.TypedSpec().Text != "number "+strconv.Itoa(n.TypedSpec().N) {
					return fmt.Errorf("no right label for %s", resource.String(n))
				}
			}
			if len(sim.List[*Label](v)) != len(sim.List[*Number](v)) {
				return errors.New("an orphan label")
			}
			return nil
		},
		Seeds: 20,
	})
}

// A simulation test: see simulateNumbers above, a test function (an
// example is given no *testing.T, so this one is compiled, with no output
// to check, and TestREADME_Simulation runs simulateNumbers).
func ExampleTest() {}
