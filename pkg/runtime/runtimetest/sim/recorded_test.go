package sim_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
	"github.com/resgraph/resgraph/pkg/state"
)

func numbersCodec(t testing.TB) *codec.Registry {
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[NumberSpec, NumberDef](reg))
	require.NoError(t, codec.Register[LabelSpec, LabelDef](reg))
	return reg
}

func number(id string, n int) *Number {
	return typed.NewDefault[NumberSpec, NumberDef](id, NumberSpec{N: n})
}

// recordNumbers runs number-to-label for real with a recorder, makes
// outside writes (each once the Runtime settled), and returns what the
// recorder kept.
func recordNumbers(t *testing.T, reg *codec.Registry) *recording.Recording {
	t.Helper()
	env := runtimetest.Start(t, runtimetest.WithControllers(numberToLabel()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, env.State.Create(ctx, number("one", 1)))
	runtimetest.Settle(t, env.Runtime)
	rec := startRecorder(t, ctx, env, reg)
	for _, w := range []func() error{
		func() error { return env.State.Create(ctx, number("two", 2)) },
		func() error { return setNumber(ctx, env.State, "one", 10) },
		func() error {
			return env.State.TeardownAndDestroy(ctx, resource.NewPointer("default", NumberDef{}.Definition().Type, "two"))
		},
		func() error { return env.State.Create(ctx, number("three", 3)) },
	} {
		require.NoError(t, w())
		runtimetest.Settle(t, env.Runtime)
	}
	require.NoError(t, rec.Sync(ctx))
	r, err := rec.Take()
	require.NoError(t, err)
	return r
}

// startRecorder starts a recorder of env's Runtime, until ctx is done
// (the test's end waits for it), and waits until it started.
func startRecorder(t *testing.T, ctx context.Context, env *runtimetest.Env, reg *codec.Registry, opts ...recording.Option) *recording.Recorder {
	t.Helper()
	rec, err := recording.New(env.State, reg, append([]recording.Option{recording.WithRuntime(env.Runtime)}, opts...)...)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	t.Cleanup(func() { require.NoError(t, <-done) })
	<-rec.Started()
	return rec
}

func setNumber(ctx context.Context, st state.State, id string, n int) error {
	_, err := st.UpdateWithConflicts(ctx, resource.NewPointer("default", NumberDef{}.Definition().Type, id), func(r resource.Resource) error {
		r.(*Number).TypedSpec().N = n
		return nil
	})
	return err
}

func numbersScenario(reg *codec.Registry) sim.Scenario {
	return sim.Scenario{
		Name:  "numbers recorded",
		Codec: reg,
		Setup: func(*sim.World) (sim.System, error) {
			return sim.System{Register: func(e controller.Engine) error { return e.RegisterController(numberToLabel()) }}, nil
		},
		Faults: sim.AllFaults(),
		Seeds:  10,
	}
}

// TestRecording_ReplayedReproducesAndExplores: a recording of a real run
// replays in the simulator — its starting state, its outside writes at
// their times — and the reference run makes the same commits of each
// resource and ends in the same state (MatchRecording); the seeds explore
// orderings and faults around it; and a recording written to a file
// replays from it.
func TestRecording_ReplayedReproducesAndExplores(t *testing.T) {
	reg := numbersCodec(t)
	rec := recordNumbers(t, reg)
	require.Len(t, rec.Outside(), 5, "create two, update one, teardown and destroy two, create three")
	sc := numbersScenario(reg)
	sc.Recording, sc.MatchRecording = rec, true
	sim.Test(t, sc)

	var file bytes.Buffer
	require.NoError(t, recording.Write(&file, rec, reg))
	back, err := recording.Decode(file.Bytes(), reg)
	require.NoError(t, err)
	sc.Recording = back
	res, err := sim.Replay(t, sc, "seed=1")
	require.NoError(t, err)
	require.Nil(t, res.Failure)
	assert.Contains(t, res.Transcript.String(), "set Numbers.example.dev(default/three)")
}

// TestRecording_OfAnotherDaemonIsRefused: a recording that lacks a kind
// the scenario's controllers read fails the run's setup, naming it.
func TestRecording_OfAnotherDaemonIsRefused(t *testing.T) {
	reg := numbersCodec(t)
	rec := recordNumbers(t, reg)
	rec.Kinds = rec.Kinds[1:] // the Labels' kind is gone
	sc := numbersScenario(reg)
	sc.Recording = rec
	res, err := sim.Replay(t, sc, "seed=1")
	require.NoError(t, err)
	require.NotNil(t, res.Failure)
	assert.Equal(t, "setup", res.Failure.Check)
	assert.Contains(t, res.Failure.Message, "the recording holds no Labels.example.dev(default)")
}

// TestRecording_ADifferentDaemonDoesNotMatch: replaying a recording with
// controllers that write otherwise fails MatchRecording's check, naming
// the first commit that differs.
func TestRecording_ADifferentDaemonDoesNotMatch(t *testing.T) {
	reg := numbersCodec(t)
	rec := recordNumbers(t, reg)
	sc := numbersScenario(reg)
	sc.Recording, sc.MatchRecording = rec, true
	sc.Setup = func(*sim.World) (sim.System, error) {
		return sim.System{Register: func(e controller.Engine) error { return e.RegisterController(numberToLabelTwice()) }}, nil
	}
	sc.WantFailure = true
	res := sim.Test(t, sc)
	require.NotNil(t, res.Found)
	assert.Equal(t, "recording", res.Found.Failure.Check, res.Found.Failure.Message)
}

// TestRecording_ADepartureIsReportedBeforeTheFinalChecks: a replay that
// must match its recording and departed from it fails as a departure,
// even when a final check fails too — the world's reads it was served
// are the recording's, so its final state says nothing about the daemon.
func TestRecording_ADepartureIsReportedBeforeTheFinalChecks(t *testing.T) {
	reg := numbersCodec(t)
	rec := recordNumbers(t, reg)
	sc := numbersScenario(reg)
	sc.Recording, sc.MatchRecording = rec, true
	sc.Setup = func(*sim.World) (sim.System, error) {
		return sim.System{
			Register: func(e controller.Engine) error { return e.RegisterController(numberToLabelTwice()) },
			Final:    func(sim.View) error { return errors.New("the world disagrees") },
		}, nil
	}
	res, err := sim.Replay(t, sc, "seed=1")
	require.NoError(t, err)
	require.NotNil(t, res.Failure)
	assert.Equal(t, "recording", res.Failure.Check, res.Failure.Message)
}

// numberToLabelTwice is number-to-label writing other labels.
func numberToLabelTwice() controller.Controller {
	return transform.NewController(transform.Settings[*Number, *Label]{
		Name: "number-to-label",
		MapMetadataFunc: func(n *Number) *Label {
			return typed.NewDefault[LabelSpec, LabelDef](n.Metadata().ID(), LabelSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, n *Number, l *Label) error {
			l.TypedSpec().Text = "n=" + strconv.Itoa(n.TypedSpec().N)
			return nil
		},
	})
}

// TestRecording_AFileReplaysWithItsFile: a failure found replaying a
// -sim.recording file (here its environment variable) prints a replay
// command that names the file by its absolute path, so that the command
// replays the same recording from wherever it is run.
func TestRecording_AFileReplaysWithItsFile(t *testing.T) {
	reg := numbersCodec(t)
	rec := recordNumbers(t, reg)
	dir := t.TempDir()
	file := filepath.Join(dir, "numbers.rgrec")
	require.NoError(t, recording.WriteFile(file, rec, reg))
	sc := numbersScenario(reg)
	sc.MatchRecording, sc.WantFailure = true, true
	sc.Setup = func(*sim.World) (sim.System, error) {
		return sim.System{Register: func(e controller.Engine) error { return e.RegisterController(numberToLabelTwice()) }}, nil
	}
	t.Setenv("RESGRAPH_SIM_RECORDING", file)
	res := sim.Test(t, sc)
	require.NotNil(t, res.Found)
	assert.True(t, strings.HasSuffix(res.Command, " -sim.recording="+file), res.Command)

}
