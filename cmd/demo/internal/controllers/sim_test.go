package controllers_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
	"github.com/resgraph/resgraph/cmd/demo/internal/scenario"
)

// TestSimulation runs the agent's controllers on the real Runtime under the
// simulator (package sim, scenario.Simulation): a random workload of link
// intents written, rewritten and deleted, carriers lost and regained, every
// fault on; after
// every step the teardown order the finalizers promise holds, and once the
// workload is done the agent converges to what the intents and the
// kernel's carriers ask for, whatever the schedule. A failure prints the
// command that replays its shrunk run. `make sim` runs it with 1,000
// seeds. With -sim.recording=FILE it replays a recording of the agent
// (run --record FILE) instead, and explores around it.
func TestSimulation(t *testing.T) {
	sim.Test(t, scenario.Simulation())
}

// TestSimulation_SameSeedSameTranscript: the agent's controllers are
// deterministic enough for the simulator: a seed run twice gives the same
// transcript, entry by entry (a controller that wrote in map order would
// not).
func TestSimulation_SameSeedSameTranscript(t *testing.T) {
	sc := scenario.Simulation()
	for seed := uint64(1); seed <= 5; seed++ {
		token := fmt.Sprintf("seed=%d", seed)
		a, err := sim.Replay(t, sc, token)
		require.NoError(t, err)
		b, err := sim.Replay(t, sc, token)
		require.NoError(t, err)
		if a.Transcript.String() != b.Transcript.String() {
			t.Fatalf("seed %d: the transcripts differ:\n--- first\n%s\n--- second\n%s", seed, a.Transcript, b.Transcript)
		}
	}
}

// TestSimulation_Mutant: the agent with a deliberate bug
// (scenario.Mutant: AddressCleanupController lets an address go while
// routes go through it) replays a recorded incident and fails, and the
// simulator shrinks the failure to the fewest recorded changes that still
// fail. Without -sim.recording the incident is testdata/incident.rgrec
// (the agent recorded by docs/demo.md's command: its carriers flapping,
// link eth1 deleted meanwhile), and the report is the one docs/demo.md
// shows, line for line (its "..." standing for the lines and the text it
// leaves out); with -sim.recording=FILE it is FILE's.
func TestSimulation_Mutant(t *testing.T) {
	sc := scenario.Mutant()
	readme := flag.Lookup("sim.recording").Value.String() == "" && os.Getenv("RESGRAPH_SIM_RECORDING") == ""
	if readme {
		rec, err := recording.ReadFile("../../testdata/incident.rgrec", netres.Codec())
		require.NoError(t, err)
		sc.Workload, sc.Recording = nil, rec
	}
	res := sim.Test(t, sc)
	if !readme || os.Getenv("RESGRAPH_SIM_REPLAY") != "" || flag.Lookup("sim.replay").Value.String() != "" {
		return
	}
	require.NotNil(t, res.Found)
	quote := readmeBlock(t, "<!-- the shrunk incident: TestSimulation_Mutant -->")
	requireQuoted(t, quote, strings.Split(res.String(), "\n"))
}

// readmeBlock returns the lines of the first code block after marker in
// docs/demo.md (the demo's page, moved there from the README).
func readmeBlock(t *testing.T, marker string) []string {
	t.Helper()
	b, err := os.ReadFile("../../../../docs/demo.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), marker)
	require.True(t, ok, "docs/demo.md has %q", marker)
	_, after, ok = strings.Cut(after, "```\n")
	require.True(t, ok, "a code block follows %q", marker)
	block, _, ok := strings.Cut(after, "```\n")
	require.True(t, ok, "the code block after %q ends", marker)
	return strings.Split(strings.TrimSuffix(block, "\n"), "\n")
}

// requireQuoted fails unless every line of quote matches a line of out,
// in order: "..." within a line stands for any text, a line "..." for
// any lines, white space runs compare equal; a line "$ ..." is the
// command that prints the rest.
func requireQuoted(t *testing.T, quote, out []string) {
	t.Helper()
	i := 0
	for _, q := range quote {
		if strings.TrimSpace(q) == "..." || strings.HasPrefix(q, "$ ") {
			continue
		}
		for i < len(out) && !lineMatches(out[i], q) {
			i++
		}
		require.Less(t, i, len(out), "docs/demo.md quotes %q, which the report does not have (in that order); the report:\n%s", q, strings.Join(out, "\n"))
		i++
	}
}

func lineMatches(line, quote string) bool {
	line = strings.Join(strings.Fields(line), " ")
	frags := strings.Split(strings.Join(strings.Fields(quote), " "), "...")
	for k, frag := range frags {
		frag = strings.TrimSpace(frag)
		j := strings.Index(line, frag)
		if j < 0 || k == 0 && j != 0 {
			return false
		}
		line = line[j+len(frag):]
	}
	return len(frags) > 1 && strings.TrimSpace(frags[len(frags)-1]) == "" || line == ""
}
