package remote_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe/remote"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/plan"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

func flightCodec(t *testing.T) *codec.Registry {
	t.Helper()
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[linkSpec, linkDef](reg))
	require.NoError(t, codec.Register[statusSpec, statusDef](reg))
	return reg
}

// runRecorder runs a recorder of the daemon's Runtime until the test
// ends, once it read the state.
func runRecorder(t *testing.T, d *daemon, reg *codec.Registry) *recording.Recorder {
	t.Helper()
	rec, err := recording.New(d.env.State, reg, recording.WithRuntime(d.env.Runtime), recording.WithSource("remote test"),
		recording.WithReplayCommand("go test ./x -sim.recording=FILE"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	<-rec.Started()
	return rec
}

// TestOB4_ARecordingCrossesTheWireWhole: Record sends the recorder's
// recording as its file, in chunks, whole (it decodes with the daemon's
// types to the same recording as the daemon's own take), with a summary
// that counts what it holds; a recording for a duration says so; a
// duration out of bounds is invalid; a recorder that has not started is
// FailedPrecondition; a daemon that serves no recorder answers Unimplemented.
func TestOB4_ARecordingCrossesTheWireWhole(t *testing.T) {
	defer remote.SetRecordChunk(100)()
	reg := flightCodec(t)
	d := start(t)
	rec := runRecorder(t, d, reg)
	d = d.serve(t, remote.WithRecorder(rec, reg))
	ctx := context.Background()
	for _, id := range []string{"eth0", "eth1"} {
		runtimetest.Create(t, d.env.State, typed.NewDefault[linkSpec, linkDef](id, linkSpec{MTU: 1500}))
	}
	runtimetest.AssertResource(t, d.env.State, "eth1", runtimetest.Holds(func(s *linkStatus) bool { return s.TypedSpec().MTU == 1500 }))
	runtimetest.Settle(t, d.env.Runtime)
	require.NoError(t, rec.Sync(ctx))

	c := remote.NewFlightClient(dial(t, d.target))
	var file bytes.Buffer
	sum, err := c.Record(ctx, 0, &file)
	require.NoError(t, err)
	require.Greater(t, file.Len(), 300, "several chunks of 100 bytes")
	got, err := recording.Decode(file.Bytes(), reg)
	require.NoError(t, err)
	want, err := rec.Take()
	require.NoError(t, err)
	assert.Equal(t, len(want.Changes), len(got.Changes))
	assert.Equal(t, []any{"remote test", "on demand", len(got.Kinds), len(got.Initial), len(got.Changes), len(got.Outside()), int64(file.Len()), got.Replay},
		[]any{sum.Source, sum.Reason, sum.Kinds, sum.Initial, sum.Changes, sum.Outside, sum.Size, sum.Replay})
	assert.Equal(t, 2, sum.Outside, "the two links created")
	assert.True(t, got.Start.Equal(sum.Start) && got.End.Equal(sum.End))

	file.Reset()
	sum, err = c.Record(ctx, time.Millisecond, &file)
	require.NoError(t, err)
	assert.Equal(t, "recorded for 1ms", sum.Reason)
	_, err = recording.Decode(file.Bytes(), reg)
	require.NoError(t, err)

	for _, bad := range []time.Duration{-time.Second, recording.MaxRecordFor + time.Second} {
		_, err = c.Record(ctx, bad, &bytes.Buffer{})
		assert.True(t, state.IsInvalidError(err), "for %v: %v", bad, err)
	}

	idle, err := recording.New(d.env.State, reg, recording.WithRuntime(d.env.Runtime))
	require.NoError(t, err)
	_, err = remote.NewFlightClient(dial(t, d.serve(t, remote.WithRecorder(idle, reg)).target)).Record(ctx, 0, &bytes.Buffer{})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)
	_, err = remote.NewFlightClient(dial(t, d.serve(t).target)).Record(ctx, 0, &bytes.Buffer{})
	assert.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
}

// linkDaemon is the test daemon as a plan runs it.
func linkDaemon() plan.Daemon {
	return plan.Daemon{Setup: func([]resource.Resource) (plan.System, error) {
		return plan.System{Register: func(e controller.Engine) error { return e.RegisterController(linkToStatus()) }}, nil
	}}
}

// TestOB5_APlanCrossesTheWire: Plan returns the daemon's plan of a change
// file (its text, whether it converges, its counts) and the live state is
// untouched; a change the daemon refuses (an unknown type, a
// controller's output, an empty file) is of the invalid class; a planner
// that panics ends that call with Internal and the server goes on; a
// daemon that serves no planner answers Unimplemented.
func TestOB5_APlanCrossesTheWire(t *testing.T) {
	reg := flightCodec(t)
	d := start(t)
	var panicky bool
	planner := func(ctx context.Context, change []byte) (*plan.Plan, error) {
		if panicky {
			panic("the planner broke")
		}
		c, err := plan.ParseChange(bytes.NewReader(change), reg)
		if err != nil {
			return nil, err
		}
		return plan.Make(ctx, d.env.State, linkDaemon(), c)
	}
	d = d.serve(t, remote.WithPlanner(planner))
	c := remote.NewFlightClient(dial(t, d.target))
	ctx := context.Background()

	p, err := c.Plan(ctx, "change.yaml", []byte("set:\n  - {type: Links.test.resgraph.dev, id: eth9, spec: {MTU: 9000}}\n"))
	require.NoError(t, err)
	assert.True(t, p.Converged, p.Why)
	assert.Equal(t, []int{2, 0, 0}, []int{p.Create, p.Update, p.Destroy}, p.Text)
	assert.Contains(t, p.Text, "LinkStatuses.test.resgraph.dev(net/eth9)")
	_, err = d.env.State.Get(ctx, resource.NewPointer("net", "Links.test.resgraph.dev", "eth9"))
	assert.True(t, state.IsNotFoundError(err), "the plan wrote nothing: %v", err)

	for _, bad := range []string{
		"set: [{type: Nope.test.resgraph.dev, id: a}]",
		"set: [{type: LinkStatuses.test.resgraph.dev, id: a}]",
		"  \n",
	} {
		_, err := c.Plan(ctx, "bad.yaml", []byte(bad))
		require.Error(t, err, bad)
		assert.True(t, state.IsInvalidError(err), "%q: %v", bad, err)
	}
	_, err = c.Plan(ctx, "bad.yaml", []byte("set: [{type: LinkStatuses.test.resgraph.dev, id: a}]"))
	assert.Contains(t, err.Error(), "LinkToStatus")

	panicky = true
	_, err = c.Plan(ctx, "x.yaml", []byte("set: []"))
	assert.Equal(t, codes.Internal, status.Code(err), "%v", err)
	assert.Contains(t, err.Error(), "the planner broke")
	panicky = false
	_, err = c.Plan(ctx, "x.yaml", []byte("set: []"))
	require.NoError(t, err, "the server goes on after a panic")

	_, err = remote.NewFlightClient(dial(t, d.serve(t).target)).Plan(ctx, "x.yaml", []byte("set: []"))
	assert.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
}
