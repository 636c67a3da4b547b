package sim_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// ranker is a QController with one worker that writes, for each A, the
// B of its ID whose N is how many Bs there were when its item ran: the
// Bs say in which order the items ran.
func ranker() controller.QController {
	return qtransform.NewQController(qtransform.Settings[*A, *B]{
		Name:              "ranker",
		MapMetadataFunc:   func(a *A) *B { return typed.NewDefault[NumSpec, BDef](a.Metadata().ID(), NumSpec{}) },
		UnmapMetadataFunc: func(b *B) *A { return typed.NewDefault[NumSpec, ADef](b.Metadata().ID(), NumSpec{}) },
		TransformFunc: func(ctx context.Context, r controller.Reader, _ *zap.Logger, _ *A, b *B) error {
			bs, err := safe.ReaderListAll[*B](ctx, r)
			if err != nil {
				return err
			}
			b.TypedSpec().N = bs.Len()
			return nil
		},
	}, qtransform.WithConcurrency(1))
}

// TestRecording_AQControllersItemsRunInTheRecordedOrder (the replay's
// pick of a QController's items, sched.Picker): the As c, b and a are
// written before the recorded Runtime runs, so its first listing queues
// their items in ID order (a, b, c) and ranker ranks them so; the replay
// writes them as the recording has them, after its Runtime started, so
// that its queue holds them in the order written (c, b, a). The replay
// picks from the queue the item the recording says made the next commit,
// and matches the recording commit for commit, ranks included.
func TestRecording_AQControllersItemsRunInTheRecordedOrder(t *testing.T) {
	reg := pairAndSumCodec(t)
	rec := recordRanker(t, reg)
	ranks := map[string]int{}
	for _, r := range rec.Final {
		if b, ok := r.(*B); ok {
			ranks[b.Metadata().ID()] = b.TypedSpec().N
		}
	}
	require.Equal(t, map[string]int{"a": 0, "b": 1, "c": 2}, ranks, "the recorded Runtime ran the items in its listing's order")

	sc := sim.Scenario{
		Name:  "ranker recorded",
		Codec: reg,
		Setup: func(*sim.World) (sim.System, error) {
			return sim.System{Register: func(e controller.Engine) error { return e.RegisterQController(ranker()) }}, nil
		},
		// The ranks depend on the order of the items: explored runs
		// rank otherwise; the reference run must match the recording.
		Equivalent:     func(sim.View, sim.View) error { return nil },
		Recording:      rec,
		MatchRecording: true,
		Seeds:          3,
	}
	res, err := sim.Replay(t, sc, "seed=1")
	require.NoError(t, err)
	require.Nil(t, res.Failure, "%s", res)
}

// recordRanker records ranker from before its Runtime runs (the As are
// written in between) until it ranked the three As.
func recordRanker(t *testing.T, reg *codec.Registry) *recording.Recording {
	t.Helper()
	st := inmem.NewState()
	rt, err := runtime.New(st, nil)
	require.NoError(t, err)
	require.NoError(t, rt.RegisterQController(ranker()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, err := recording.New(st, reg, recording.WithRuntime(rt))
	require.NoError(t, err)
	require.NoError(t, rec.Attach(ctx))
	recDone := make(chan error, 1)
	go func() { recDone <- rec.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-recDone) }()
	<-rec.Started()
	for _, id := range []string{"c", "b", "a"} {
		require.NoError(t, st.Create(ctx, newA(id, 0)))
	}
	rtDone := make(chan error, 1)
	go func() { rtDone <- rt.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-rtDone) }()
	runtimetest.Settle(t, rt)
	require.NoError(t, rec.Sync(ctx))
	r, err := rec.Take()
	require.NoError(t, err)
	return r
}
