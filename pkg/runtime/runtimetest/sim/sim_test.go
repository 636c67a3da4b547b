package sim_test

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
)

// TestMain checks for leaks, but for the goroutine the LeaksGoroutine
// mutant leaves on purpose (the simulator reports it; nothing can stop it).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim_test.leakScenario.func1.1"))
}

func TestChain_Passes(t *testing.T) {
	sim.Test(t, chainScenario(sim.AllFaults()))
}

// TestDeterminism_SameSeedSameTrace: a seed run twice gives the same
// trace, event by event, and so does the replay of its token.
func TestDeterminism_SameSeedSameTrace(t *testing.T) {
	sc := chainScenario(sim.AllFaults())
	for seed := uint64(1); seed <= 20; seed++ {
		a := sim.RunSeed(t, sc, seed)
		b := sim.RunSeed(t, sc, seed)
		if a.Failure != nil {
			t.Fatalf("seed %d failed: %v\n%s", seed, a.Failure, a.Trace)
		}
		if a.Trace.String() != b.Trace.String() {
			t.Fatalf("seed %d: traces differ:\n--- first\n%s\n--- second\n%s", seed, a.Trace, b.Trace)
		}
		c, err := sim.Replay(t, sc, a.Token)
		if err != nil {
			t.Fatal(err)
		}
		if a.Trace.String() != c.Trace.String() {
			t.Fatalf("seed %d: the replay of %s differs:\n--- run\n%s\n--- replay\n%s", seed, a.Token, a.Trace, c.Trace)
		}
	}
}

// TestFaults_EachIsInjected: each fault, alone at a high rate, shows in
// the trace as what it is, and a run with it still converges (the chain's
// controllers are correct).
func TestFaults_EachIsInjected(t *testing.T) {
	for _, c := range []struct {
		name   string
		faults sim.Faults
		want   string
	}{
		{"conflict", sim.Faults{Conflict: 0.5}, "fault  conflict on "},
		{"transient", sim.Faults{Transient: 0.5}, "fault  transient failure of "},
		{"crash", sim.Faults{Crash: 0.5}, "fault  crash of "},
		{"kill", sim.Faults{Kill: 0.5}, "fault  kill of the Runtime after "},
		{"restart", sim.Faults{Restart: 0.2}, "fault  restart of the Runtime"},
		{"relist", sim.Faults{Relist: 0.2}, "fault  re-list of "},
		{"stale cache", sim.Faults{StaleCache: true}, "step   cache of "},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := chainScenario(c.faults)
			sc.Options = append(sc.Options, runtime.WithCachedResource(ns, "Bs.sim.test"))
			seen := false
			for seed := uint64(1); seed <= 5 && !seen; seed++ {
				o := sim.RunSeed(t, sc, seed)
				if o.Failure != nil {
					t.Fatalf("seed %d: %v\n%s", seed, o.Failure, o.Trace)
				}
				seen = strings.Contains(o.Trace.String(), c.want)
			}
			if !seen {
				t.Fatalf("no %q in 5 seeds", c.want)
			}
		})
	}
}

// TestReport_SaysWhereWhatAndHowToReplay: a failure's report names the
// seed, the step and the check, shows the shrunk run's trace, and gives
// the command that replays it; the shrunk run is no larger than the
// original, and its token replays it event by event.
func TestReport_SaysWhereWhatAndHowToReplay(t *testing.T) {
	sc := noCleanupScenario(false)
	res := sim.Explore(t, sc)
	rp := res.Failure
	if rp == nil {
		t.Fatal("no failure found")
	}
	text := rp.String()
	for _, want := range []string{
		fmt.Sprintf("seed %d failed at step %d", rp.Original.Seed, rp.Original.Failure.Step),
		"final: ", "trace of the shrunk run", "commit Copier: created Bs.sim.test",
		"go test github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim -run '^TestReport_SaysWhereWhatAndHowToReplay$' -count=1 -v -sim.replay=s1-",
		fmt.Sprintf("-sim.seed=%d -sim.seeds=1", rp.Original.Seed),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	o, s := rp.Original, rp.Shrunk
	if s.Ops > o.Ops || s.Faults > o.Faults || (s.Ops == o.Ops && s.Faults == o.Faults && s.Steps > o.Steps) {
		t.Errorf("shrunk %d/%d/%d, original %d/%d/%d (ops/faults/steps)", s.Ops, s.Faults, s.Steps, o.Ops, o.Faults, o.Steps)
	}
	again, err := sim.Replay(t, sc, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	if again.Trace.String() != s.Trace.String() {
		t.Errorf("the replay differs:\n--- shrunk\n%s\n--- replay\n%s", s.Trace, again.Trace)
	}
}

func TestReplay_RefusesABadToken(t *testing.T) {
	for _, tok := range []string{"", "s2-AAAA", "s1-!!", "s1-AQ"} {
		if _, err := sim.Replay(t, chainScenario(sim.Faults{}), tok); err == nil {
			t.Errorf("token %q accepted", tok)
		}
	}
}

// TestBudget_EnvironmentThenScenario: without flags, the environment sets
// the seed count and the first seed, then the scenario.
func TestBudget_EnvironmentThenScenario(t *testing.T) {
	sc := chainScenario(sim.Faults{})
	sc.Seeds = 2
	if res := sim.Explore(t, sc); res.Seeds != 2 {
		t.Errorf("Scenario.Seeds 2: %d seeds run", res.Seeds)
	}
	t.Setenv("RESGRAPH_SIM_SEEDS", "3")
	t.Setenv("RESGRAPH_SIM_SEED", "40")
	res := sim.Explore(t, sc)
	if res.Seeds != 3 {
		t.Errorf("RESGRAPH_SIM_SEEDS=3: %d seeds run", res.Seeds)
	}
	t.Setenv("RESGRAPH_SIM_SEEDS", "")
	t.Setenv("RESGRAPH_SIM_TIME", "1ns")
	if res := sim.Explore(t, sc); res.Seeds != 1 {
		t.Errorf("RESGRAPH_SIM_TIME=1ns: %d seeds run, want the one begun before the budget ran out", res.Seeds)
	}
}
