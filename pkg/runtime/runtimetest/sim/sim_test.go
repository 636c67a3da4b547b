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

// TestDeterminism_SameSeedSameTranscript: a seed run twice gives the
// same transcript, entry by entry, and so does the replay of its token.
func TestDeterminism_SameSeedSameTranscript(t *testing.T) {
	sc := chainScenario(sim.AllFaults())
	for seed := uint64(1); seed <= 20; seed++ {
		a := replay(t, sc, fmt.Sprintf("seed=%d", seed))
		b := replay(t, sc, fmt.Sprintf("seed=%d", seed))
		if a.Failure != nil {
			t.Fatalf("seed %d failed: %v\n%s", seed, a.Failure, a.Transcript)
		}
		if a.Transcript.String() != b.Transcript.String() {
			t.Fatalf("seed %d: transcripts differ:\n--- first\n%s\n--- second\n%s", seed, a.Transcript, b.Transcript)
		}
		c := replay(t, sc, a.Token)
		if a.Transcript.String() != c.Transcript.String() {
			t.Fatalf("seed %d: the replay of %s differs:\n--- run\n%s\n--- replay\n%s", seed, a.Token, a.Transcript, c.Transcript)
		}
	}
}

// replay replays token, failing t when it is not one.
func replay(t *testing.T, sc sim.Scenario, token string) sim.Result {
	t.Helper()
	res, err := sim.Replay(t, sc, token)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestFaults_EachIsInjected: each fault, alone at a high rate, shows in
// the transcript as what it is, and a run with it still converges (the chain's
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
				o := replay(t, sc, fmt.Sprintf("seed=%d", seed))
				if o.Failure != nil {
					t.Fatalf("seed %d: %v\n%s", seed, o.Failure, o.Transcript)
				}
				seen = strings.Contains(o.Transcript.String(), c.want)
			}
			if !seen {
				t.Fatalf("no %q in 5 seeds", c.want)
			}
		})
	}
}

// TestReport_SaysWhereWhatAndHowToReplay: a failure's report names the
// seed, the step and the check, shows the shrunk run's transcript, and
// gives the command that replays it; the shrunk run is no larger than the
// original, and its token replays it entry by entry.
func TestReport_SaysWhereWhatAndHowToReplay(t *testing.T) {
	sc := noCleanupScenario(false)
	sc.WantFailure = true
	res := sim.Test(t, sc)
	o := res.Found
	text := res.String()
	for _, want := range []string{
		fmt.Sprintf("seed %d failed at step %d", o.Seed, o.Failure.Step),
		"final: ", "transcript of the shrunk run", "commit Copier: created Bs.sim.test",
		"go test github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim -run '^TestReport_SaysWhereWhatAndHowToReplay$' -count=1 -v -sim.replay=s1-",
		fmt.Sprintf("-sim.seed=%d -sim.seeds=1", o.Seed),
		fmt.Sprintf("-sim.replay=seed=%d", o.Seed),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	if res.Ops > o.Ops || res.Faults > o.Faults || (res.Ops == o.Ops && res.Faults == o.Faults && res.Steps > o.Steps) {
		t.Errorf("shrunk %d/%d/%d, original %d/%d/%d (ops/faults/steps)", res.Ops, res.Faults, res.Steps, o.Ops, o.Faults, o.Steps)
	}
	again := replay(t, sc, res.Token)
	if again.Transcript.String() != res.Transcript.String() {
		t.Errorf("the replay differs:\n--- shrunk\n%s\n--- replay\n%s", res.Transcript, again.Transcript)
	}
	if seed := replay(t, sc, fmt.Sprintf("seed=%d", o.Seed)); seed.Failure == nil || seed.Failure.Check != o.Failure.Check {
		t.Errorf("the replay of seed %d does not fail as found: %v", o.Seed, seed.Failure)
	}
}

func TestReplay_RefusesABadToken(t *testing.T) {
	for _, tok := range []string{"", "s2-AAAA", "s1-!!", "s1-AQ", "seed=", "seed=x", "seed=-1"} {
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
	if res := sim.Test(t, sc); res.Seeds != 2 {
		t.Errorf("Scenario.Seeds 2: %d seeds run", res.Seeds)
	}
	t.Setenv("RESGRAPH_SIM_SEEDS", "3")
	t.Setenv("RESGRAPH_SIM_SEED", "40")
	res := sim.Test(t, sc)
	if res.Seeds != 3 {
		t.Errorf("RESGRAPH_SIM_SEEDS=3: %d seeds run", res.Seeds)
	}
	t.Setenv("RESGRAPH_SIM_SEEDS", "")
	t.Setenv("RESGRAPH_SIM_TIME", "1ns")
	if res := sim.Test(t, sc); res.Seeds != 1 {
		t.Errorf("RESGRAPH_SIM_TIME=1ns: %d seeds run, want the one begun before the budget ran out", res.Seeds)
	}
}

// TestREADME_Simulation runs the README's simulation, which ExampleTest
// shows.
func TestREADME_Simulation(t *testing.T) { simulateNumbers(t) }
