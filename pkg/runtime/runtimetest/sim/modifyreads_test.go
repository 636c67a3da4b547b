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

// bcopier (the controller "copier") writes the C "c" with the N of the B "b", once the A "a"
// exists; it reads b inside its Modify's function (as a generic
// controller's transform reads what it needs), then calls read with
// what it read (nil: nothing).
type bcopier struct{ read func(context.Context, int) }

func (bcopier) Name() string { return "copier" }
func (bcopier) Inputs() []controller.Input {
	return []controller.Input{
		{Namespace: ns, Type: ADef{}.Definition().Type, Kind: controller.InputWeak},
		{Namespace: ns, Type: BDef{}.Definition().Type, Kind: controller.InputWeak},
	}
}
func (bcopier) Outputs() []controller.Output {
	return []controller.Output{{Type: CDef{}.Definition().Type, Kind: controller.OutputExclusive}}
}

func (c bcopier) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		if _, err := safe.ReaderGetByID[*A](ctx, r, "a"); err != nil {
			continue
		}
		if err := safe.WriterModify(ctx, r, typed.NewDefault[NumSpec, CDef]("c", NumSpec{}), func(out *C) error {
			b, err := safe.ReaderGetByID[*B](ctx, r, "b")
			if err != nil {
				return err
			}
			out.TypedSpec().N = b.TypedSpec().N
			if c.read != nil {
				c.read(ctx, b.TypedSpec().N)
			}
			return nil
		}); err != nil {
			return err
		}
	}
}

// TestRecording_AModifyReadsWhereItsPassReadAndCommitsWhereItCommitted:
// a controller whose Modify's function read b = 1 in production, then
// committed after an outside writer set b = 2 (and committed again, the
// copy of 2, in its next pass), makes in the replay the same two commits:
// its Modify's function runs where its pass read, and the write waits at
// its gate, after the function, until its commit is the recording's next
// (sched.GateWrite); its pass opens before the outside write the recording
// has after its read. With the gate before the function, the function
// read b = 2 at the commit's turn; with the outside write taken first,
// the pass read b = 2; either way the next pass had nothing to commit.
func TestRecording_AModifyReadsWhereItsPassReadAndCommitsWhereItCommitted(t *testing.T) {
	reg := copierCodec(t)
	read, proceed := make(chan struct{}), make(chan struct{})
	first := true
	cp := bcopier{read: func(ctx context.Context, n int) {
		if first && n == 1 {
			first = false
			close(read)
			wait(ctx, proceed)
		}
	}}
	env := runtimetest.Start(t, runtimetest.WithControllers(cp))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := startRecorder(t, ctx, env, reg)
	require.NoError(t, env.State.Create(ctx, typed.NewDefault[NumSpec, BDef]("b", NumSpec{N: 1})))
	require.NoError(t, env.State.Create(ctx, newA("a", 1)))
	<-read
	_, err := env.State.UpdateWithConflicts(ctx, resource.NewPointer(ns, BDef{}.Definition().Type, "b"), func(r resource.Resource) error {
		r.(*B).TypedSpec().N = 2
		return nil
	})
	require.NoError(t, err)
	close(proceed)
	runtimetest.Settle(t, env.Runtime)
	require.NoError(t, rec.Sync(ctx))
	r, err := rec.Take()
	require.NoError(t, err)
	versions, afterB2 := copies(r)
	require.Equal(t, []uint64{1, 2}, versions, "copier committed twice: the b it read, 1, then 2")
	require.Equal(t, []bool{true, true}, afterB2, "its first commit came after b became 2")

	res, err := sim.Replay(t, copierScenario(reg, r), "seed=1")
	require.NoError(t, err)
	require.Nil(t, res.Failure, "%s", res)
}

// copies returns the versions of the C "c" the recording has and, for
// each, whether the outside writer had set b = 2 before it.
func copies(rec *recording.Recording) (versions []uint64, afterB2 []bool) {
	b2 := false
	for _, c := range rec.Changes {
		switch {
		case c.By == recording.ByOutside && c.Pointer.String() == "Bs.sim.test(sim/b)" && c.Version == 2:
			b2 = true
		case c.By == recording.ByController && c.Pointer.String() == "Cs.sim.test(sim/c)":
			versions, afterB2 = append(versions, c.Version), append(afterB2, b2)
		}
	}
	return versions, afterB2
}

func copierScenario(reg *codec.Registry, rec *recording.Recording) sim.Scenario {
	return sim.Scenario{
		Name:  "copier recorded",
		Codec: reg,
		Setup: func(*sim.World) (sim.System, error) {
			return sim.System{Register: func(e controller.Engine) error { return e.RegisterController(bcopier{}) }}, nil
		},
		Recording: rec, MatchRecording: true, Seeds: 1,
	}
}

func copierCodec(t *testing.T) *codec.Registry {
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[NumSpec, ADef](reg))
	require.NoError(t, codec.Register[NumSpec, BDef](reg))
	require.NoError(t, codec.Register[NumSpec, CDef](reg))
	return reg
}
