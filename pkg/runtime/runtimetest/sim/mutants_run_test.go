package sim_test

import (
	"testing"

	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
)

// TestMutants: the simulator finds every mutant within the default
// budget, and the shrunk run's token replays the failure.
func TestMutants(t *testing.T) {
	for _, m := range mutants {
		t.Run(m.name, func(t *testing.T) {
			sc := m.scenario(false)
			sc.WantFailure = true
			res := sim.Test(t, sc)
			t.Logf("FOUND %s: seed %d (after %d seeds, %v wall, %v virtual), check %q; shrunk to %d workload ops, %d faults, %d steps",
				m.name, res.Found.Seed, res.Seeds, res.Wall, res.Virtual, res.Found.Failure.Check, res.Ops, res.Faults, res.Steps)
			again, err := sim.Replay(t, sc, res.Token)
			if err != nil {
				t.Fatal(err)
			}
			if again.Failure == nil || again.Failure.Check != res.Failure.Check {
				t.Fatalf("the replay of %s does not fail the same way: %v", res.Token, again.Failure)
			}
		})
	}
}

// TestMutants_FixedPass: each mutant's scenario passes with the mistake
// fixed: the checks that catch the mutants are not what fails.
func TestMutants_FixedPass(t *testing.T) {
	for _, m := range mutants {
		t.Run(m.name, func(t *testing.T) {
			sc := m.scenario(true)
			sc.Seeds = 30
			sim.Test(t, sc)
		})
	}
}
