package plan_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/plan"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestPL5_ARunHooksWriteIsCausedByTheChangeItsControllerRead: a
// QController of two workers hands each note it reconciles to its RunHook,
// which echoes it (and the reconcile waits for the echo, so the plan sees
// it before the daemon is idle). The hook's write is made outside any
// reconcile; the plan gives it the change it follows from, the note its
// controller reads, in its output.
func TestPL5_ARunHooksWriteIsCausedByTheChangeItsControllerRead(t *testing.T) {
	d := plan.Daemon{Setup: func([]resource.Resource) (plan.System, error) {
		h := &hookEchoer{handed: make(chan handoff)}
		return plan.System{Register: func(e controller.Engine) error { return e.RegisterQController(h) }}, nil
	}}
	p, err := plan.Make(context.Background(), inmem.NewState(), d,
		plan.Change{Set: []resource.Resource{note("x", 1)}}, plan.WithTimeout(time.Minute))
	require.NoError(t, err)
	require.True(t, p.Converged, p.Why)
	var out bytes.Buffer
	require.NoError(t, p.WriteText(&out))
	assert.Contains(t, out.String(), "  + Echoes.test.resgraph.dev(plan/x) (by hooked)\n"+
		"      owner: hooked\n      spec.n: 2\n"+
		"      because: Notes.test.resgraph.dev(plan/x) (the change) → hooked modify Echoes.test.resgraph.dev(plan/x)\n")
}

// handoff is a note a reconcile hands to the run hook, and where the hook
// says it echoed it.
type handoff struct {
	id   resource.ID
	done chan error
}

// hookEchoer is a QController of notes whose RunHook writes the echoes:
// each reconcile hands its note to the hook and waits for its echo.
type hookEchoer struct{ handed chan handoff }

func (*hookEchoer) Name() string { return "hooked" }

func (*hookEchoer) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs:      []controller.Input{{Namespace: ns, Type: NoteDef{}.Definition().Type, Kind: controller.InputQPrimary}},
		Outputs:     []controller.Output{{Type: EchoDef{}.Definition().Type, Kind: controller.OutputExclusive}},
		Concurrency: optional.Some[uint](2),
	}
}

func (h *hookEchoer) Reconcile(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, ptr resource.Pointer) error {
	ho := handoff{id: ptr.ID(), done: make(chan error, 1)}
	select {
	case h.handed <- ho:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-ho.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RunHook echoes each note handed to it as N+1, until the controller
// stops.
func (h *hookEchoer) RunHook(ctx context.Context, _ *zap.Logger, r controller.QRuntime) error {
	for {
		select {
		case ho := <-h.handed:
			ho.done <- h.echo(ctx, r, ho.id)
		case <-ctx.Done():
			return nil
		}
	}
}

func (*hookEchoer) echo(ctx context.Context, r controller.QRuntime, id resource.ID) error {
	n, err := safe.ReaderGetByID[*Note](ctx, r, id)
	if err != nil {
		return errors.Join(errors.New("the hook reads its note"), err)
	}
	e := typed.NewDefault[NSpec, EchoDef](id, NSpec{})
	return safe.WriterModify(ctx, r, e, func(e *Echo) error { e.TypedSpec().N = n.TypedSpec().N + 1; return nil })
}

func (*hookEchoer) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}
