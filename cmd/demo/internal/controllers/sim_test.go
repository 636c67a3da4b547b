package controllers_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"

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
