package plan_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/plan"
	"github.com/resgraph/resgraph/pkg/safe"
)

// TestPL5_ACleanupOutputsDestroyHasItsChain: the Controller mirror keeps
// an echo of each note and lets CleanupOutputs destroy the echoes of
// notes that are gone. Removing a note, the plan gives its echo's
// destroy the chain from the removed note through mirror's teardown of
// the echo: a CleanupOutputs teardown and destroy are the controller's
// writes in the trace.
func TestPL5_ACleanupOutputsDestroyHasItsChain(t *testing.T) {
	d := plan.Daemon{Setup: func([]resource.Resource) (plan.System, error) {
		return plan.System{Register: func(e controller.Engine) error { return e.RegisterController(mirror{}) }}, nil
	}}
	ctx := context.Background()
	reached, err := plan.Make(ctx, plan.NewState(nil), d, plan.Change{Set: []resource.Resource{note("x", 1), note("y", 2)}},
		plan.WithTimeout(time.Minute))
	require.NoError(t, err)
	require.True(t, reached.Converged, reached.Why)
	x := resource.NewPointer(ns, NoteDef{}.Definition().Type, "x")
	p, err := plan.Make(ctx, plan.NewState(reached.Final), d, plan.Change{Remove: []resource.Pointer{x}}, plan.WithTimeout(time.Minute))
	require.NoError(t, err)
	require.True(t, p.Converged, p.Why)
	var out bytes.Buffer
	require.NoError(t, p.WriteText(&out))
	assert.Contains(t, out.String(), "  - Echoes.test.resgraph.dev(plan/x) (by mirror)\n"+
		"      because: Notes.test.resgraph.dev(plan/x) (the change) → mirror teardown Echoes.test.resgraph.dev(plan/x)\n")
	assert.NotContains(t, out.String(), "Echoes.test.resgraph.dev(plan/y)")
}

// mirror echoes each note (N as is) and destroys, with CleanupOutputs, the
// echoes of notes that are gone.
type mirror struct{}

func (mirror) Name() string { return "mirror" }
func (mirror) Inputs() []controller.Input {
	return []controller.Input{{Namespace: ns, Type: NoteDef{}.Definition().Type, Kind: controller.InputWeak}}
}
func (mirror) Outputs() []controller.Output {
	return []controller.Output{{Type: EchoDef{}.Definition().Type, Kind: controller.OutputExclusive}}
}

func (mirror) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		r.StartTrackingOutputs()
		notes, err := safe.ReaderListAll[*Note](ctx, r)
		if err != nil {
			return err
		}
		for n := range notes.All() {
			e := typed.NewDefault[NSpec, EchoDef](n.Metadata().ID(), NSpec{})
			if err := safe.WriterModify(ctx, r, e, func(e *Echo) error { e.TypedSpec().N = n.TypedSpec().N; return nil }); err != nil {
				return err
			}
		}
		if err := r.CleanupOutputs(ctx, resource.NewKind(ns, EchoDef{}.Definition().Type)); err != nil {
			return err
		}
	}
}
