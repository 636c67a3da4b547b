package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
	"github.com/resgraph/resgraph/cmd/demo/internal/scenario"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
)

// TestRecordCorpus is a tool, skipped unless RESGRAPH_RECORD_N is set: it
// records the agent under load RESGRAPH_RECORD_N times, as
// TestRecording_DemoUnderLoadReplaysTheSameCommits does, and writes each
// recording into the directory RESGRAPH_RECORD_DIR (which must exist).
// Run two -race test binaries of it at once for recordings under load:
//
//	go test -race -c -o demo.test ./cmd/demo
//	RESGRAPH_RECORD_N=50 RESGRAPH_RECORD_DIR=/tmp/corpus ./demo.test -test.run '^TestRecordCorpus$' &
//	RESGRAPH_RECORD_N=50 RESGRAPH_RECORD_DIR=/tmp/corpus ./demo.test -test.run '^TestRecordCorpus$'
func TestRecordCorpus(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("RESGRAPH_RECORD_N"))
	if err != nil {
		t.Skip("a tool: set RESGRAPH_RECORD_N and RESGRAPH_RECORD_DIR")
	}
	dir := os.Getenv("RESGRAPH_RECORD_DIR")
	for range n {
		rec := recordDemo(t)
		f, err := os.CreateTemp(dir, "r-*.rgrec")
		require.NoError(t, err)
		require.NoError(t, recording.Write(f, rec, netres.Codec()))
		require.NoError(t, f.Close())
		t.Logf("recorded %s: %d changes, %d passes", f.Name(), len(rec.Changes), len(rec.Passes))
	}
}

// TestReplayCorpus is a tool, skipped unless RESGRAPH_REPLAY_DIR is set:
// it replays every recording (*.rgrec) of that directory once, as
// TestRecording_DemoUnderLoadReplaysTheSameCommits does (MatchRecording,
// seed 1), logs each one that departs with where it departed (with
// RESGRAPH_REPLAY_VERBOSE set, its whole transcript too), and fails when one
// did.
func TestReplayCorpus(t *testing.T) {
	dir := os.Getenv("RESGRAPH_REPLAY_DIR")
	if dir == "" {
		t.Skip("a tool: set RESGRAPH_REPLAY_DIR")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.rgrec"))
	require.NoError(t, err)
	slices.Sort(files)
	departed := 0
	for _, file := range files {
		rec, err := recording.ReadFile(file, netres.Codec())
		require.NoError(t, err)
		sc := scenario.Simulation()
		sc.Workload, sc.Recording, sc.MatchRecording = nil, rec, true
		res, err := sim.Replay(t, sc, "seed=1")
		require.NoError(t, err)
		switch {
		case res.Failure == nil:
			t.Logf("matches: %s", file)
		case os.Getenv("RESGRAPH_REPLAY_VERBOSE") != "":
			departed++
			t.Logf("departs: %s: %s\n%s", file, res.Failure.Message, res.Transcript)
		default:
			departed++
			t.Logf("departs: %s: %s", file, res.Failure.Message)
		}
	}
	require.Zero(t, departed, "of %d recordings, %d departed", len(files), departed)
}
