package sim_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
)

// twoHolders registers two transforms that each hold a finalizer on every
// A (A → B and A → C): the order of the finalizers on an A is the order
// in which the schedule ran them.
func twoHolders(e controller.Engine) error {
	for _, c := range []controller.Controller{
		transform.NewController(transform.Settings[*A, *B]{
			Name:            "AtoB",
			MapMetadataFunc: func(a *A) *B { return typed.NewDefault[NumSpec, BDef](a.Metadata().ID(), NumSpec{}) },
			TransformFunc:   func(context.Context, controller.Reader, *zap.Logger, *A, *B) error { return nil },
		}, transform.WithInputFinalizers()),
		transform.NewController(transform.Settings[*A, *C]{
			Name:            "AtoC",
			MapMetadataFunc: func(a *A) *C { return typed.NewDefault[NumSpec, CDef](a.Metadata().ID(), NumSpec{}) },
			TransformFunc:   func(context.Context, controller.Reader, *zap.Logger, *A, *C) error { return nil },
		}, transform.WithInputFinalizers()),
	} {
		if err := e.RegisterController(c); err != nil {
			return err
		}
	}
	return nil
}

func holdersScenario(ordered bool) sim.Scenario {
	return sim.Scenario{
		Name:              "holders",
		Setup:             func(*sim.World) (sim.System, error) { return sim.System{Register: twoHolders}, nil },
		Initial:           []resource.Resource{newA("a0", 1), newA("a1", 1), newA("a2", 1)},
		OrderedFinalizers: ordered,
		Seeds:             40,
	}
}

// TestEquivalence_FinalizersAreASet: two correct controllers that put
// their finalizers on one resource in either order pass the reference
// comparison by default; a scenario that asks for order tells them apart.
func TestEquivalence_FinalizersAreASet(t *testing.T) {
	sim.Test(t, holdersScenario(false))
	ordered := holdersScenario(true)
	ordered.WantFailure = true // a run puts the finalizers in another order
	res := sim.Test(t, ordered)
	if got := res.Failure.Check; got != "reference" {
		t.Errorf("failed check %q, want the reference comparison", got)
	}
}

// mapOrder registers A → B whose TransformFunc fills B.List in Go's map
// order: nondeterministic user code.
func mapOrder(e controller.Engine) error {
	return e.RegisterController(transform.NewController(transform.Settings[*A, *B]{
		Name:            "MapOrder",
		MapMetadataFunc: func(a *A) *B { return typed.NewDefault[NumSpec, BDef](a.Metadata().ID(), NumSpec{}) },
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, a *A, b *B) error {
			set := map[int]struct{}{}
			for i := range 8 {
				set[a.TypedSpec().N+i] = struct{}{}
			}
			b.TypedSpec().List = b.TypedSpec().List[:0]
			for n := range set {
				b.TypedSpec().List = append(b.TypedSpec().List, n)
			}
			return nil
		},
	}))
}

// TestNondeterminism_IsReportedAsSuch: a controller that builds its output
// in Go's map order fails the reference comparison, but not
// reproducibly: the report says it is nondeterministic user code, names
// the first step at which two runs of the seed differ, and does not
// shrink a flaky failure.
func TestNondeterminism_IsReportedAsSuch(t *testing.T) {
	res := sim.Test(t, sim.Scenario{
		Name:        "map order",
		Setup:       func(*sim.World) (sim.System, error) { return sim.System{Register: mapOrder}, nil },
		Initial:     []resource.Resource{newA("a0", 1), newA("a1", 5)},
		Seeds:       20,
		WantFailure: true,
	})
	if res.Nondeterministic == nil {
		t.Fatalf("not reported as nondeterministic:\n%s", res)
	}
	text := res.String()
	for _, want := range []string{"nondeterministic user code", "first differ at step", "first run:", "second run:", "MapOrder"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	if res.Found != nil {
		t.Error("a nondeterministic failure was shrunk")
	}
}

// TestConverge_NamesEachFailingItemsLastError: a run that does not
// converge because an item fails for ever says, for that item, its last
// error.
func TestConverge_NamesEachFailingItemsLastError(t *testing.T) {
	res := sim.Test(t, sim.Scenario{
		Name: "fails for ever",
		Setup: func(*sim.World) (sim.System, error) {
			return sim.System{Register: func(e controller.Engine) error {
				return e.RegisterQController(qtransform.NewQController(qtransform.Settings[*A, *B]{
					Name:            "Exists",
					MapMetadataFunc: func(a *A) *B { return typed.NewDefault[NumSpec, BDef](a.Metadata().ID(), NumSpec{}) },
					TransformFunc: func(context.Context, controller.Reader, *zap.Logger, *A, *B) error {
						return errors.New("resource already exists")
					},
				}))
			}}, nil
		},
		Initial:     []resource.Resource{newA("a0", 1)},
		NoReference: true,
		Seeds:       1,
		WantFailure: true,
	})
	msg := res.Failure.Message
	for _, want := range []string{"no convergence", "failing: Exists: Reconcile As.sim.test(sim/a0)", "already exists"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure lacks %q: %s", want, msg)
		}
	}
}
