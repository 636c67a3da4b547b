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
	"github.com/resgraph/resgraph/pkg/state"
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
	return handOver(ctx, h.handed, ptr.ID())
}

// RunHook echoes each note handed to it as N+1, until the controller
// stops.
func (h *hookEchoer) RunHook(ctx context.Context, _ *zap.Logger, r controller.QRuntime) error {
	return serveHandoffs(ctx, h.handed, func(id resource.ID) error { return h.echo(ctx, r, id) })
}

// handOver hands id to a run hook on handed and waits until it is done
// with it (or ctx is done).
func handOver(ctx context.Context, handed chan<- handoff, id resource.ID) error {
	ho := handoff{id: id, done: make(chan error, 1)}
	select {
	case handed <- ho:
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

// serveHandoffs is a run hook's loop: fn for each ID handed on handed,
// until ctx is done.
func serveHandoffs(ctx context.Context, handed <-chan handoff, fn func(resource.ID) error) error {
	for {
		select {
		case ho := <-handed:
			ho.done <- fn(ho.id)
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

// TestPL5_AOneWorkerRunHooksWriteIsNotItsOpenReconciles: a QController
// of ONE worker (tallier, of echoes, which mirror writes from notes; it
// reads notes too) hands each echo it reconciles to its RunHook, which
// writes a tally while the reconcile is still open. The hook's write is
// not the reconcile's: it follows from the note tallier reads, not through
// the echo the reconcile was for (the trace names the worker of a
// QController with a RunHook, and a hook's write names none).
func TestPL5_AOneWorkerRunHooksWriteIsNotItsOpenReconciles(t *testing.T) {
	d := plan.Daemon{Setup: func([]resource.Resource) (plan.System, error) {
		q := &tallier{handed: make(chan handoff)}
		return plan.System{Register: func(e controller.Engine) error {
			return errors.Join(e.RegisterController(mirror{}), e.RegisterQController(q))
		}}, nil
	}}
	p, err := plan.Make(context.Background(), inmem.NewState(), d,
		plan.Change{Set: []resource.Resource{note("x", 1)}}, plan.WithTimeout(time.Minute))
	require.NoError(t, err)
	require.True(t, p.Converged, p.Why)
	var out bytes.Buffer
	require.NoError(t, p.WriteText(&out))
	assert.Contains(t, out.String(), "  + Tallies.test.resgraph.dev(plan/x) (by tallier)\n"+
		"      owner: tallier\n      spec.n: 1\n"+
		"      because: Notes.test.resgraph.dev(plan/x) (the change) → tallier modify Tallies.test.resgraph.dev(plan/x)\n")
}

type TallyDef struct{}

func (TallyDef) Definition() typed.Definition {
	return typed.Definition{Type: "Tallies.test.resgraph.dev", DefaultNamespace: ns}
}

type Tally = typed.Resource[NSpec, TallyDef]

// tallier is a QController of one worker over echoes (and notes, mapped
// to nothing) whose RunHook writes the tallies: each reconcile hands its
// echo to the hook and waits until it wrote the tally.
type tallier struct{ handed chan handoff }

func (*tallier) Name() string { return "tallier" }

func (*tallier) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs: []controller.Input{
			{Namespace: ns, Type: EchoDef{}.Definition().Type, Kind: controller.InputQPrimary},
			{Namespace: ns, Type: NoteDef{}.Definition().Type, Kind: controller.InputQMapped},
		},
		Outputs: []controller.Output{{Type: TallyDef{}.Definition().Type, Kind: controller.OutputExclusive}},
	}
}

func (q *tallier) Reconcile(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, ptr resource.Pointer) error {
	return handOver(ctx, q.handed, ptr.ID())
}

// RunHook writes the tally of each echo handed to it, until the
// controller stops.
func (q *tallier) RunHook(ctx context.Context, _ *zap.Logger, r controller.QRuntime) error {
	return serveHandoffs(ctx, q.handed, func(id resource.ID) error { return q.tally(ctx, r, id) })
}

func (*tallier) tally(ctx context.Context, r controller.QRuntime, id resource.ID) error {
	e, err := safe.ReaderGetByID[*Echo](ctx, r, id)
	if state.IsNotFoundError(err) {
		return nil
	} else if err != nil {
		return err
	}
	t := typed.NewDefault[NSpec, TallyDef](id, NSpec{})
	return safe.WriterModify(ctx, r, t, func(t *Tally) error { t.TypedSpec().N = e.TypedSpec().N; return nil })
}

func (*tallier) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}
