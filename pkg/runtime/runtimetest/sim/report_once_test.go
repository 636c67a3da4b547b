package sim_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
)

// alwaysFails is a scenario whose final check fails in every run, the
// same way.
func alwaysFails() sim.Scenario {
	return sim.Scenario{
		Name: "always fails",
		Setup: func(*sim.World) (sim.System, error) {
			return sim.System{Register: func(controller.Engine) error { return nil }}, nil
		},
		Initial:     []resource.Resource{newA("a0", 1)},
		Final:       func(sim.View) error { return errors.New("the final check fails") },
		NoReference: true,
		Seeds:       1,
	}
}

// childEnv marks the run of TestReport_PrintedOnce's child process.
const childEnv = "RESGRAPH_SIM_TEST_CHILD"

// TestReport_PrintedOnce: a failing sim.Test prints its report once — in
// the failure it fails the test with — not once more in a log line. The
// failing test runs in a child process (the real test binary), whose
// output is counted.
func TestReport_PrintedOnce(t *testing.T) {
	if os.Getenv(childEnv) == "printed-once" {
		t.Setenv("RESGRAPH_SIM_SHRINKTIME", "1ns")
		sim.Test(t, alwaysFails())
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", "^TestReport_PrintedOnce$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=printed-once")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the child test must fail (exit status), got %v:\n%s", err, out)
	}
	text := string(out)
	if n := strings.Count(text, "seed 1 failed at step"); n != 1 {
		t.Fatalf("the report is printed %d times, want once:\n%s", n, text)
	}
	if !strings.Contains(text, "sim always fails failed:") {
		t.Fatalf("the failure does not carry the report:\n%s", text)
	}
}

// TestNondeterminism_ShrunkRunReplaysClean: a failure that reproduces
// from its seed but whose shrunk run's token then replays clean (here:
// user code that fails on its first two runs only — global state the
// simulator does not control) is reported as nondeterministic, with why.
// Shrinking is given no time, so that the runs are: the seed's, its
// recheck, and the token's replay.
func TestNondeterminism_ShrunkRunReplaysClean(t *testing.T) {
	t.Setenv("RESGRAPH_SIM_SHRINKTIME", "1ns")
	runs, current := 0, 0
	sc := alwaysFails()
	sc.Name = "fails twice"
	sc.Setup = func(*sim.World) (sim.System, error) {
		runs++
		current = runs
		return sim.System{Register: func(controller.Engine) error { return nil }}, nil
	}
	sc.Final = func(sim.View) error {
		if current <= 2 {
			return errors.New("fails on its first two runs")
		}
		return nil
	}
	sc.WantFailure = true
	res := sim.Test(t, sc)
	if res.Nondeterministic == nil {
		t.Fatalf("not reported as nondeterministic:\n%s", res)
	}
	if got := res.Nondeterministic.Why; got != "the shrunk run replays clean" {
		t.Fatalf("why = %q, want the shrunk run replaying clean:\n%s", got, res)
	}
	if runs != 3 {
		t.Fatalf("%d runs, want 3 (seed, recheck, replay of the token)", runs)
	}
	if !strings.Contains(res.String(), "nondeterministic user code: the shrunk run replays clean") {
		t.Fatalf("the report does not say so:\n%s", res)
	}
}
