package generic_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// The chain A → B → C → D of G1: B = A+1, C = 2B, D = C-3.
var (
	stageNames = []string{"AtoB", "BtoC", "CtoD"}
	stageFuncs = []func(int) int{
		func(n int) int { return n + 1 },
		func(n int) int { return 2 * n },
		func(n int) int { return n - 3 },
	}
	chainKinds = []resource.Kind{
		typed.Kind[*fixture.A](), typed.Kind[*fixture.B](), typed.Kind[*fixture.C](), typed.Kind[*fixture.D](),
	}
)

type res[D typed.DefinitionProvider] = *typed.Resource[fixture.Spec, D]

// tStage is a transform stage of the chain.
func tStage[DI, DO typed.DefinitionProvider](i int, finalizers bool) runtimetest.Option {
	var opts []transform.ControllerOption
	if finalizers {
		opts = append(opts, transform.WithInputFinalizers())
	}
	f := stageFuncs[i]
	return runtimetest.WithControllers(transform.NewController(transform.Settings[res[DI], res[DO]]{
		Name:            stageNames[i],
		MapMetadataFunc: fixture.Map[res[DI], DO],
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in res[DI], out res[DO]) error {
			out.TypedSpec().N = f(in.TypedSpec().N)
			return nil
		},
	}, opts...))
}

// qStage is a qtransform stage of the chain.
func qStage[DI, DO typed.DefinitionProvider](i int, finalizers bool) runtimetest.Option {
	opts := []qtransform.ControllerOption{qtransform.WithConcurrency(2)}
	if !finalizers {
		opts = append(opts, qtransform.WithoutInputFinalizers())
	}
	f := stageFuncs[i]
	return runtimetest.WithQControllers(qtransform.NewQController(qtransform.Settings[res[DI], res[DO]]{
		Name:              stageNames[i],
		MapMetadataFunc:   fixture.Map[res[DI], DO],
		UnmapMetadataFunc: fixture.Map[res[DO], DI],
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in res[DI], out res[DO]) error {
			out.TypedSpec().N = f(in.TypedSpec().N)
			return nil
		},
	}, opts...))
}

type chain struct {
	build func() []runtimetest.Option
	name  string
	// fins says which stages hold finalizers on their inputs.
	fins [3]bool
}

func chains() []chain {
	var out []chain
	for _, fins := range [][3]bool{{false, false, false}, {true, true, true}, {false, true, true}} {
		name := fmt.Sprintf("finalizers=%v%v%v", b2i(fins[0]), b2i(fins[1]), b2i(fins[2]))
		out = append(out,
			chain{name: "transform/" + name, fins: fins, build: func() []runtimetest.Option {
				return []runtimetest.Option{tStage[fixture.ADef, fixture.BDef](0, fins[0]), tStage[fixture.BDef, fixture.CDef](1, fins[1]), tStage[fixture.CDef, fixture.DDef](2, fins[2])}
			}},
			chain{name: "qtransform/" + name, fins: fins, build: func() []runtimetest.Option {
				return []runtimetest.Option{qStage[fixture.ADef, fixture.BDef](0, fins[0]), qStage[fixture.BDef, fixture.CDef](1, fins[1]), qStage[fixture.CDef, fixture.DDef](2, fins[2])}
			}},
			chain{name: "mixed/" + name, fins: fins, build: func() []runtimetest.Option {
				return []runtimetest.Option{tStage[fixture.ADef, fixture.BDef](0, fins[0]), qStage[fixture.BDef, fixture.CDef](1, fins[1]), tStage[fixture.CDef, fixture.DDef](2, fins[2])}
			}},
		)
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

const (
	g1Seeds     = 20
	g1IDs       = 6
	g1Sequences = 3
	g1Ops       = 15
	sentinel    = "sentinel"
)

// TestG1_ChainsConvergeWhateverTheOrderOfChanges applies random sequences of
// create, update, teardown, destroy and re-create to the inputs of a chain
// of generic controllers, and checks after each sequence settles that every
// output equals the chain's function of its input, that the outputs of
// tearing-down and destroyed inputs are gone (and, with finalizers, that
// every finalizer was handed back), and that no orphan output is left. A
// sentinel input that is never touched must keep its outputs unchanged
// throughout (same versions: the chain settles, it does not ripple).
func TestG1_ChainsConvergeWhateverTheOrderOfChanges(t *testing.T) {
	for _, ch := range chains() {
		t.Run(ch.name, func(t *testing.T) {
			for seed := uint64(1); seed <= g1Seeds; seed++ {
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					t.Logf("seed %d", seed)
					runG1(t, ch, seed)
				})
			}
		})
	}
}

func runG1(t *testing.T, ch chain, seed uint64) {
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(seed, 0x61))
	st := inmem.NewState()
	runtimetest.Create(t, st, fixture.New[fixture.ADef](sentinel, 1000))
	runtimetest.Start(t, append(ch.build(), runtimetest.WithState(st))...)
	awaitFixedPoint(t, st, ch)
	before := sentinelVersions(t, st)

	for range g1Sequences {
		for range g1Ops {
			applyRandomOp(t, st, rnd, ch)
			if rnd.IntN(3) == 0 {
				goruntime.Gosched()
			}
		}
		awaitFixedPoint(t, st, ch)
		destroyReleased(t, st)
		awaitFixedPoint(t, st, ch)
	}
	require.Equal(t, before, sentinelVersions(t, st), "the untouched input's outputs were rewritten")

	// Destroy every input: no output may be left.
	list, err := st.List(ctx, chainKinds[0])
	require.NoError(t, err)
	for _, a := range list.Items {
		_, err := st.Teardown(ctx, a.Metadata())
		require.NoError(t, err)
	}
	awaitFixedPoint(t, st, ch)
	destroyReleased(t, st)
	awaitFixedPoint(t, st, ch)
	for _, k := range chainKinds {
		l, err := st.List(ctx, k)
		require.NoError(t, err)
		require.Empty(t, l.Items, "%s left", resource.KindString(k))
	}
}

// applyRandomOp applies one random change to a random input.
func applyRandomOp(t *testing.T, st state.State, rnd *rand.Rand, ch chain) {
	t.Helper()
	ctx := context.Background()
	id := fmt.Sprintf("r%d", rnd.IntN(g1IDs))
	ptr := typed.Pointer[*fixture.A](id)
	cur, err := st.Get(ctx, ptr)
	if state.IsNotFoundError(err) {
		runtimetest.Create(t, st, fixture.New[fixture.ADef](id, rnd.IntN(100)))
		return
	}
	require.NoError(t, err)
	running := cur.Metadata().Phase() == resource.PhaseRunning
	switch op := rnd.IntN(4); {
	case op == 0 && running: // update
		fixture.SetN[res[fixture.ADef]](t, st, ptr, rnd.IntN(100))
	case op == 1 && running: // teardown
		_, err := st.Teardown(ctx, ptr)
		require.NoError(t, err)
	default: // destroy (when finalizers allow), and maybe re-create at once
		if running {
			_, err := st.Teardown(ctx, ptr)
			require.NoError(t, err)
		}
		err := st.Destroy(ctx, ptr)
		if state.IsPendingFinalizersError(err) {
			require.True(t, ch.fins[0], "finalizers on %s without input finalizers", id)
			return
		}
		require.NoError(t, err)
		if rnd.IntN(2) == 0 {
			runtimetest.Create(t, st, fixture.New[fixture.ADef](id, rnd.IntN(100)))
		}
	}
}

// destroyReleased destroys the tearing-down inputs: at a fixed point their
// finalizers are all handed back.
func destroyReleased(t *testing.T, st state.State) {
	t.Helper()
	ctx := context.Background()
	list, err := st.List(ctx, chainKinds[0])
	require.NoError(t, err)
	for _, a := range list.Items {
		if a.Metadata().Phase() == resource.PhaseTearingDown {
			require.NoError(t, st.Destroy(ctx, a.Metadata()))
		}
	}
}

// awaitFixedPoint waits until the outputs are exactly what the inputs say.
func awaitFixedPoint(t *testing.T, st state.State, ch chain) {
	t.Helper()
	runtimetest.AssertState(t, st, chainKinds, func(ctx context.Context, asrt *assert.Assertions) {
		asrt.Empty(fixedPointViolation(ctx, st, ch))
	})
}

// fixedPointViolation returns why the state is not the fixed point of the
// chain ("" when it is).
func fixedPointViolation(ctx context.Context, st state.State, ch chain) string {
	lists := make([]map[resource.ID]resource.Resource, len(chainKinds))
	for i, k := range chainKinds {
		l, err := st.List(ctx, k)
		if err != nil {
			return err.Error()
		}
		lists[i] = map[resource.ID]resource.Resource{}
		for _, r := range l.Items {
			lists[i][r.Metadata().ID()] = r
		}
	}
	var problems []string
	for id, a := range lists[0] {
		md := a.Metadata()
		wantFins := []string(nil)
		if ch.fins[0] && md.Phase() == resource.PhaseRunning {
			wantFins = []string{stageNames[0]}
		}
		if got := []string(*md.Finalizers()); !slices.Equal(got, wantFins) {
			problems = append(problems, fmt.Sprintf("%s: finalizers %v, want %v", md, got, wantFins))
		}
		n := a.(res[fixture.ADef]).TypedSpec().N
		for stage := 1; stage < len(chainKinds); stage++ {
			out, ok := lists[stage][id]
			delete(lists[stage], id)
			if md.Phase() != resource.PhaseRunning {
				if ok {
					problems = append(problems, fmt.Sprintf("%s: output of a tearing-down input", out.Metadata()))
				}
				continue
			}
			n = stageFuncs[stage-1](n)
			if p := checkOutput(out, ok, stage, n, ch.fins); p != "" {
				problems = append(problems, fmt.Sprintf("%s of %s: %s", resource.KindString(chainKinds[stage]), id, p))
			}
		}
	}
	for stage := 1; stage < len(chainKinds); stage++ {
		for _, orphan := range lists[stage] {
			problems = append(problems, fmt.Sprintf("orphan %s", orphan.Metadata()))
		}
	}
	slices.Sort(problems)
	return strings.Join(problems, "; ")
}

func checkOutput(out resource.Resource, ok bool, stage, want int, fins [3]bool) string {
	if !ok {
		return "missing"
	}
	md := out.Metadata()
	if md.Phase() != resource.PhaseRunning {
		return md.String() + " is tearing down"
	}
	if md.Owner() != stageNames[stage-1] {
		return md.String() + " has the wrong owner"
	}
	var wantFins []string
	if stage < len(stageNames) && fins[stage] {
		wantFins = []string{stageNames[stage]}
	}
	if got := []string(*md.Finalizers()); !slices.Equal(got, wantFins) {
		return fmt.Sprintf("%s: finalizers %v, want %v", md, got, wantFins)
	}
	if got := out.Spec().(fixture.Spec).N; got != want {
		return fmt.Sprintf("%s: N=%d, want %d", md, got, want)
	}
	return ""
}

// sentinelVersions returns the versions of the sentinel's chain.
func sentinelVersions(t *testing.T, st state.State) []uint64 {
	t.Helper()
	var vs []uint64
	for _, k := range chainKinds {
		r, err := st.Get(context.Background(), resource.NewPointer(k.Namespace(), k.Type(), sentinel))
		require.NoError(t, err)
		vs = append(vs, r.Metadata().Version().Value())
	}
	return vs
}
