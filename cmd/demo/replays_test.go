package main

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
	"github.com/resgraph/resgraph/cmd/demo/internal/scenario"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
)

// savedReplays holds recordings of the agent under load, as
// TestRecording_DemoUnderLoadReplaysTheSameCommits records it (80 of
// them, taken with -race, four test binaries at once, each written once
// and never changed since): a replay is deterministic, so each one
// replays the same way on every run.
const savedReplays = "testdata/replays.tar.gz"

// departingReplays are the saved recordings whose replay still departs
// from the recording's order, both at a LinkStatus commit: of version 3,
// they do not say where a pass's reads spread over other passes' commits,
// nor where a Modify's function read (the replay runs it where the pass
// began), and LinkApplyController's item there read KernelLinks later
// than its first read. Each is replayed all the same, and must depart:
// one that matches is taken off this list.
var departingReplays = map[string]bool{
	"r-1795952164344580226.rgrec": true,
	"r-1795952170667399929.rgrec": true,
}

// TestRecording_SavedRecordingsReplayTheSameCommits: every saved
// recording of the agent under load replays in the simulator, on its
// first try, to the same final state and the same commits of every
// resource (MatchRecording), but those departingReplays lists, which
// must still depart.
func TestRecording_SavedRecordingsReplayTheSameCommits(t *testing.T) {
	recs := readSavedReplays(t)
	require.Len(t, recs, 80)
	names := make([]string, 0, len(recs))
	for name := range recs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec, err := recording.Decode(recs[name], netres.Codec())
			require.NoError(t, err)
			sc := scenario.Simulation()
			sc.Workload, sc.Recording, sc.MatchRecording = nil, rec, true
			res, err := sim.Replay(t, sc, "seed=1")
			require.NoError(t, err)
			if departingReplays[name] {
				require.NotNil(t, res.Failure, "%s now matches its recording: take it off departingReplays", name)
				return
			}
			require.Nil(t, res.Failure, "%s", res)
		})
	}
}

// readSavedReplays returns the files of savedReplays by name.
func readSavedReplays(t *testing.T) map[string][]byte {
	t.Helper()
	f, err := os.Open(savedReplays)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		out[filepath.Base(h.Name)] = b
	}
}
