package sim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
)

// TestRunHook_IsAStepOfTheSchedule: a QController's RunHook is called when
// the schedule picks it (sched.GateHook), as a step of the transcript, and
// two replays of one seed give the same transcript.
func TestRunHook_IsAStepOfTheSchedule(t *testing.T) {
	sc := hookScenario(qtransform.WithRunHook(func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime) error {
		<-ctx.Done()
		return nil
	}))
	for seed := 1; seed <= 3; seed++ {
		first, err := sim.Replay(t, sc, fmt.Sprintf("seed=%d", seed))
		if err != nil {
			t.Fatal(err)
		}
		if first.Failure != nil {
			t.Fatalf("seed %d failed:\n%s", seed, first)
		}
		if !strings.Contains(first.Transcript.String(), "RunHook of Hooked") {
			t.Fatalf("seed %d: the RunHook is not a step:\n%s", seed, first.Transcript)
		}
		again, err := sim.Replay(t, sc, fmt.Sprintf("seed=%d", seed))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := first.Transcript.String(), again.Transcript.String(); a != b {
			t.Fatalf("seed %d: two runs differ:\n%s\n---\n%s", seed, a, b)
		}
	}
}

// TestRunHook_NoneIsNoStep: a generic QController built without a run
// hook adds no step to the schedule (it says so with HasRunHook).
func TestRunHook_NoneIsNoStep(t *testing.T) {
	res, err := sim.Replay(t, hookScenario(), "seed=1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil {
		t.Fatalf("failed:\n%s", res)
	}
	if strings.Contains(res.Transcript.String(), "RunHook of") {
		t.Fatalf("a controller without a run hook has a RunHook step:\n%s", res.Transcript)
	}
}

// hookScenario runs a qtransform A → B named Hooked, built with opts.
func hookScenario(opts ...qtransform.ControllerOption) sim.Scenario {
	return sim.Scenario{
		Name: "run hook",
		Setup: func(*sim.World) (sim.System, error) {
			return sim.System{Register: func(e controller.Engine) error {
				return e.RegisterQController(qtransform.NewQController(qtransform.Settings[*A, *B]{
					Name:            "Hooked",
					MapMetadataFunc: func(a *A) *B { return typed.NewDefault[NumSpec, BDef](a.Metadata().ID(), NumSpec{}) },
					TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, a *A, b *B) error {
						b.TypedSpec().N = a.TypedSpec().N
						return nil
					},
				}, opts...))
			}}, nil
		},
		Initial: []resource.Resource{newA("a0", 1), newA("a1", 2)},
	}
}
