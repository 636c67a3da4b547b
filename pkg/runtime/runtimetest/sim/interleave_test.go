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
// after the other in one pass; between them it calls between, after them
// done (nil: none).
type pairWriter struct{ between, done func(context.Context) }

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
		if p.done != nil {
			p.done(ctx)
		}
	}
}

// summer writes the C "sum", the sum of the Bs' N; it calls read with
// the sum before it writes it, wrote after (nil: none).
type summer struct{ read, wrote func(context.Context, int) }

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
		if s.read != nil {
			s.read(ctx, sum)
		}
		if err := safe.WriterModify(ctx, r, typed.NewDefault[NumSpec, CDef]("sum", NumSpec{}), func(c *C) error {
			c.TypedSpec().N = sum
			return nil
		}); err != nil {
			return err
		}
		if s.wrote != nil {
			s.wrote(ctx, sum)
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
	reg := pairAndSumCodec(t)
	midway := make(chan struct{})
	pair := pairWriter{between: func(ctx context.Context) { wait(ctx, midway) }}
	sum := summer{wrote: func(_ context.Context, n int) {
		if n == 1 {
			closeOnce(midway) // a second pass may write 1 again (unchanged) before x2
		}
	}}
	rec := recordPairAndSum(t, reg, pair, sum)
	versions, _ := sumVersions(rec)
	require.Equal(t, []uint64{1, 2}, versions, "sum committed twice: the intermediate state, then the final one")
	sc := pairAndSum(reg, rec)
	res, err := sim.Replay(t, sc, "seed=1")
	require.NoError(t, err)
	require.Nil(t, res.Failure, "%s", res)
	sim.Test(t, sc)
}

// recordPairAndSum runs pair and sum for real with a recorder, creates
// the A "a" and returns the recording once they settled.
func recordPairAndSum(t *testing.T, reg *codec.Registry, pair pairWriter, sum summer) *recording.Recording {
	t.Helper()
	env := runtimetest.Start(t, runtimetest.WithControllers(pair, sum))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := startRecorder(t, ctx, env, reg)
	require.NoError(t, env.State.Create(ctx, newA("a", 1)))
	runtimetest.Settle(t, env.Runtime)
	require.NoError(t, rec.Sync(ctx))
	r, err := rec.Take()
	require.NoError(t, err)
	return r
}

// closeOnce closes ch unless it is closed (called on the controller's
// goroutine only).
func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func wait(ctx context.Context, ch <-chan struct{}) {
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// pairAndSum is the scenario of a recording of pair and sum.
func pairAndSum(reg *codec.Registry, rec *recording.Recording) sim.Scenario {
	return sim.Scenario{
		Name:  "pair and sum recorded",
		Codec: reg,
		Setup: func(*sim.World) (sim.System, error) {
			return sim.System{Register: func(e controller.Engine) error {
				return firstErr(e.RegisterController(pairWriter{}), e.RegisterController(summer{}))
			}}, nil
		},
		Recording: rec, MatchRecording: true, Seeds: 3,
	}
}

func pairAndSumCodec(t *testing.T) *codec.Registry {
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[NumSpec, ADef](reg))
	require.NoError(t, codec.Register[NumSpec, BDef](reg))
	require.NoError(t, codec.Register[NumSpec, CDef](reg))
	return reg
}

// sumVersions returns the versions of the C "sum" the recording has, in
// order, and the revision each pass read.
func sumVersions(rec *recording.Recording) (versions, reads []uint64) {
	for _, c := range rec.Changes {
		if c.Pointer.String() == "Cs.sim.test(sim/sum)" {
			versions, reads = append(versions, c.Version), append(reads, c.Read)
		}
	}
	return versions, reads
}

// TestRecording_APassReadsWhatItReadWhenRecorded (rule RC9): a pass
// that in production read the state before a commit the recording puts
// before its own (sum read x1, then pair wrote x2, then sum wrote the
// sum of x1 alone) reads in the replay the state it read then — the
// recording keeps the revision each pass read — and the replay matches
// the recording commit for commit.
func TestRecording_APassReadsWhatItReadWhenRecorded(t *testing.T) {
	reg := pairAndSumCodec(t)
	midway, second := make(chan struct{}), make(chan struct{})
	pair := pairWriter{
		between: func(ctx context.Context) { wait(ctx, midway) },
		done:    func(context.Context) { closeOnce(second) },
	}
	sum := summer{read: func(ctx context.Context, n int) {
		if n == 1 {
			closeOnce(midway)
			wait(ctx, second)
		}
	}}
	rec := recordPairAndSum(t, reg, pair, sum)
	versions, reads := sumVersions(rec)
	require.Equal(t, []uint64{1, 2}, versions, "sum committed twice: the sum of x1 alone, then of both")
	require.NotZero(t, reads[0], "the recording says what sum's first pass read")
	res, err := sim.Replay(t, pairAndSum(reg, rec), "seed=1")
	require.NoError(t, err)
	require.Nil(t, res.Failure, "%s", res)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
