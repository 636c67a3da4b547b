package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
	"github.com/resgraph/resgraph/pkg/state"

	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
	"github.com/resgraph/resgraph/cmd/demo/internal/scenario"
)

// TestRecording_DemoUnderLoadReplaysTheSameCommits: the agent runs for
// real with its sample intent while its kernel flaps carriers every 40 to
// 90 ms and refuses each new link once, and a link is deleted while the
// carriers flap; once it is gone the carriers stop flapping and the
// recording ends where the agent settled (a recording that ends in the
// middle of the agent's reaction to a flap cannot be replayed to its
// final state: the replay converges). Its flight recorder's recording,
// written to a file and read back, replays in the simulator with the
// agent's own scenario to the same final state and the same commits of
// every resource (MatchRecording), also under the race detector, and the
// simulator explores orderings and faults around it without a failure.
//
// The replay takes each commit as a step of its own in the recorded
// order, lets each pass read the state it read when recorded (the newest
// of its reads' revisions at which every kind it read was as its read saw
// it, from the recording's pass log, rule RC13; a read of a cache behind
// the others included), offers a Controller its wake-up only between its
// passes, runs a Modify's function where its pass read and commits it at
// its turn, has LinkApplyController's workers take from the queue the
// items the recording says made its commits, each where its run read the
// state (sched.Picker), feeds KernelLinkObserver's reads of the kernel
// from the recording (rule RC12, sim.World.Observed), each where it was
// read (signalling the kernel's relay again while the observer waits for
// a read the recording has before its next commit: the fake kernel's
// signals coalesce where the agent's kernel signalled twice), opens a
// LinkApplyController item's run where the resources of its link were as
// it read them, and takes each carrier change and outside write at its place
// among the commits and the kernel's reads, whatever the time
// (Scenario.MatchRecording). TestRecording_SavedRecordingsReplayTheSameCommits
// lists the saved recordings of version 3 that still depart.
// AddressCleanupController and DefaultRouteController are incremental:
// each of their passes is woken where the batch of changes it took had
// come (recording.Pass.Batch), not where its reads saw the state, so that
// it handles the changes it handled when recorded. The test records once
// and replays once: a departure names where the replay departed.
func TestRecording_DemoUnderLoadReplaysTheSameCommits(t *testing.T) {
	rec := recordDemo(t)
	sc := scenario.Simulation()
	sc.Workload, sc.Recording, sc.MatchRecording, sc.Seeds = nil, rec, true, 5
	res, err := sim.Replay(t, sc, "seed=1")
	require.NoError(t, err)
	require.Nil(t, res.Failure, "%s", res)
	sim.Test(t, sc)
}

// recordDemo runs the agent under load (see the test) and returns its
// recording, written to a file and read back.
func recordDemo(t *testing.T) *recording.Recording {
	t.Helper()
	in, err := loadIntent("")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "incident.rgrec")
	d, _ := startDaemon(t, config{
		Intent: in, DeleteLink: "eth1", DeleteAfter: 400 * time.Millisecond, Record: file,
		Kernel: kernel.Config{FailFirst: 1, FlapMin: 40 * time.Millisecond, FlapMax: 90 * time.Millisecond, Seed: 7},
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	waitGone(t, d, "eth1")
	d.kernel.StopFlapping() // the agent settles, and the recording ends where it settled
	settle(t, d)
	require.NoError(t, d.recorder.Sync(ctx))
	rec, err := d.recorder.Take()
	require.NoError(t, err)
	if rec.Coalesced > 0 {
		t.Skipf("the recorder fell behind the agent (%d changes coalesced): the machine is too loaded to record every change", rec.Coalesced)
	}
	var carriers, outside int
	for _, c := range rec.Outside() {
		if c.By == recording.ByWorld {
			carriers++
		} else {
			outside++
		}
	}
	require.Positive(t, carriers, "carriers flapped during the recording")
	require.GreaterOrEqual(t, outside, 4, "the intent's three links created, one torn down")
	var buf bytes.Buffer
	require.NoError(t, recording.Write(&buf, rec, netres.Codec()))
	back, err := recording.Decode(buf.Bytes(), netres.Codec())
	require.NoError(t, err)
	return back
}

// waitGone waits until the agent destroyed the LinkSpec of link name.
func waitGone(t *testing.T, d *daemon, name string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		if _, err := d.state.Get(context.Background(), linkSpecPointer(name)); state.IsNotFoundError(err) {
			return
		}
		require.False(t, time.Now().After(deadline), "link %s was never deleted", name)
		time.Sleep(20 * time.Millisecond) // the deletion is the daemon's timer's
	}
}

func linkSpecPointer(name string) resource.Pointer {
	return resource.NewPointer(netres.ConfigNamespace, netres.LinkSpecType, name)
}
