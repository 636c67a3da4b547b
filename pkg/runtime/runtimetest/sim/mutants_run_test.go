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
			res := sim.Explore(t, m.scenario(false))
			if res.Failure == nil {
				t.Fatalf("mutant %s not found in %d seeds", m.name, res.Seeds)
			}
			rp := res.Failure
			t.Logf("FOUND %s: seed %d (after %d seeds, %v wall, %v virtual), check %q; shrunk to %d workload steps, %d faults, %d steps",
				m.name, rp.Original.Seed, rp.Seeds, rp.Wall, rp.Virtual, rp.Original.Failure.Check, rp.Shrunk.Ops, rp.Shrunk.Faults, rp.Shrunk.Steps)
			o, err := sim.Replay(t, m.scenario(false), rp.Shrunk.Token)
			if err != nil {
				t.Fatal(err)
			}
			if o.Failure == nil || o.Failure.Check != rp.Shrunk.Failure.Check {
				t.Fatalf("the replay of %s does not fail the same way: %v", rp.Shrunk.Token, o.Failure)
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
