package sim_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
	"github.com/resgraph/resgraph/pkg/safe"
)

// pairWriter writes, for the A "a", two Bs (x1 and x2) with its N, one
// after the other in one pass; between them it calls between (nil: none).
type pairWriter struct{ between func(context.Context) }

func (pairWriter) Name() string { return "pair" }
func (pairWriter) Inputs() []controller.Input {
	return []controller.Input{{Namespace: ns, Type: ADef{}.Definition().Type, Kind: controller.InputWeak}}
}
func (pairWriter) Outputs() []controller.Output {
	return []controller.Output{{Type: BDef{}.Definition().Type, Kind: controller.OutputExclusive}}
}

func (p pairWriter) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		a, err := safe.ReaderGetByID[*A](ctx, r, "a")
		if err != nil {
			continue
		}
		for i, id := range []resource.ID{"x1", "x2"} {
			if i == 1 && p.between != nil {
				p.between(ctx)
			}
			if err := safe.WriterModify(ctx, r, typed.NewDefault[NumSpec, BDef](id, NumSpec{}), func(b *B) error {
				b.TypedSpec().N = a.TypedSpec().N
				return nil
			}); err != nil {
				return err
			}
		}
	}
}

// summer writes the C "sum", the sum of the Bs' N; after each write it
// calls wrote with the sum (nil: none).
type summer struct{ wrote func(int) }

func (summer) Name() string { return "sum" }
func (summer) Inputs() []controller.Input {
	return []controller.Input{{Namespace: ns, Type: BDef{}.Definition().Type, Kind: controller.InputWeak}}
}
func (summer) Outputs() []controller.Output {
	return []controller.Output{{Type: CDef{}.Definition().Type, Kind: controller.OutputExclusive}}
}

func (s summer) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		bs, err := safe.ReaderListAll[*B](ctx, r)
		if err != nil || bs.Len() == 0 {
			continue
		}
		sum := 0
		for b := range bs.All() {
			sum += b.TypedSpec().N
		}
		if err := safe.WriterModify(ctx, r, typed.NewDefault[NumSpec, CDef]("sum", NumSpec{}), func(c *C) error {
			c.TypedSpec().N = sum
			return nil
		}); err != nil {
			return err
		}
		if s.wrote != nil {
			s.wrote(sum)
		}
	}
}

// TestRecording_CommitsInterleaveAsRecorded: a pass that in production
// read the state half-way through another pass's writes commits an
// intermediate state (sum wrote 1 between pair's x1 and x2); the replay
// takes each commit as a step of its own in the recorded order, so that
// it makes that intermediate commit too, and matches the recording
// commit for commit.
func TestRecording_CommitsInterleaveAsRecorded(t *testing.T) {
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[NumSpec, ADef](reg))
	require.NoError(t, codec.Register[NumSpec, BDef](reg))
	require.NoError(t, codec.Register[NumSpec, CDef](reg))
	rec := recordInterleaved(t, reg)
	var sums []uint64
	for _, c := range rec.Changes {
		if c.Pointer.String() == "Cs.sim.test(sim/sum)" {
			sums = append(sums, c.Version)
		}
	}
	require.Equal(t, []uint64{1, 2}, sums, "sum committed twice: the intermediate state, then the final one")
	sc := sim.Scenario{
		Name:  "pair and sum recorded",
		Codec: reg,
		Setup: func(*sim.World) (sim.System, error) {
			return sim.System{Register: func(e controller.Engine) error {
				return firstErr(e.RegisterController(pairWriter{}), e.RegisterController(summer{}))
			}}, nil
		},
		Recording: rec, MatchRecording: true, Seeds: 3,
	}
	res, err := sim.Replay(t, sc, "seed=1")
	require.NoError(t, err)
	require.Nil(t, res.Failure, "%s", res)
	sim.Test(t, sc)
}

// recordInterleaved runs pair and sum for real with a recorder: pair
// waits between its two writes until sum committed the sum of the first.
func recordInterleaved(t *testing.T, reg *codec.Registry) *recording.Recording {
	t.Helper()
	midway := make(chan struct{})
	pair := pairWriter{between: func(ctx context.Context) {
		select {
		case <-midway:
		case <-ctx.Done():
		}
	}}
	sum := summer{wrote: func(n int) {
		if n == 1 {
			close(midway)
		}
	}}
	env := runtimetest.Start(t, runtimetest.WithControllers(pair, sum))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, err := recording.New(env.State, reg, recording.WithRuntime(env.Runtime))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	<-rec.Started()
	require.NoError(t, env.State.Create(ctx, newA("a", 1)))
	runtimetest.Settle(t, env.Runtime)
	require.NoError(t, rec.Sync(ctx))
	r, err := rec.Take()
	require.NoError(t, err)
	return r
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
