package plan_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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

// TestPL5_AQControllersWritesAreCausedByTheirOwnWorkersReconcile: a
// change to note x makes fanout write mids x-1 and x-2, which a
// QController of two workers reconciles at once, x-1's write coming after
// x-2's reconcile started (the other worker's). The chain of each echo
// leads through its own mid, the change of its own worker's reconcile,
// not through the mid of the controller's last reconcile to start.
func TestPL5_AQControllersWritesAreCausedByTheirOwnWorkersReconcile(t *testing.T) {
	q := &pairedEchoer{started: map[string]chan struct{}{"x-1": make(chan struct{}), "x-2": make(chan struct{})}, firstWrote: make(chan struct{})}
	d := plan.Daemon{Setup: func([]resource.Resource) (plan.System, error) {
		return plan.System{Register: func(e controller.Engine) error {
			return errors.Join(e.RegisterController(fanout{}), e.RegisterQController(q))
		}}, nil
	}}
	p, err := plan.Make(context.Background(), inmem.NewState(), d,
		plan.Change{Set: []resource.Resource{note("x", 1)}}, plan.WithTimeout(time.Minute))
	require.NoError(t, err)
	require.True(t, p.Converged, p.Why)
	require.Len(t, p.Changes, 5)
	for i, id := range []string{"x-1", "x-2"} {
		echo := p.Changes[i]
		assert.Equal(t, "Echoes.test.resgraph.dev(plan/"+id+")", echo.Pointer.String())
		assert.Equal(t, []string{
			"Notes.test.resgraph.dev(plan/x) (the change)",
			"fanout modify Mids.test.resgraph.dev(plan/" + id + ")",
			"pairs modify Echoes.test.resgraph.dev(plan/" + id + ")",
		}, echo.Chain)
	}
}

type MidDef struct{}

func (MidDef) Definition() typed.Definition {
	return typed.Definition{Type: "Mids.test.resgraph.dev", DefaultNamespace: ns}
}

type Mid = typed.Resource[NSpec, MidDef]

// fanout writes two mids per note, ID-1 and ID-2, of the note's N.
type fanout struct{}

func (fanout) Name() string { return "fanout" }
func (fanout) Inputs() []controller.Input {
	return []controller.Input{{Namespace: ns, Type: NoteDef{}.Definition().Type, Kind: controller.InputWeak}}
}
func (fanout) Outputs() []controller.Output {
	return []controller.Output{{Type: MidDef{}.Definition().Type, Kind: controller.OutputExclusive}}
}
func (fanout) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	return eachNote(ctx, r, func(n *Note) error {
		for _, suffix := range []string{"-1", "-2"} {
			mid := typed.NewDefault[NSpec, MidDef](n.Metadata().ID()+suffix, NSpec{})
			if err := safe.WriterModify(ctx, r, mid, func(m *Mid) error { m.TypedSpec().N = n.TypedSpec().N; return nil }); err != nil {
				return err
			}
		}
		return nil
	})
}

// pairedEchoer echoes each mid as N+1 with two workers, its first
// reconciles of x-1 and x-2 interleaved: one starts, the other starts,
// the first writes, then the other.
type pairedEchoer struct {
	once       sync.Map // the IDs whose first reconcile started
	started    map[string]chan struct{}
	first      atomic.Value // the ID whose first reconcile started first
	firstWrote chan struct{}
}

func (*pairedEchoer) Name() string { return "pairs" }

func (*pairedEchoer) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs:      []controller.Input{{Namespace: ns, Type: MidDef{}.Definition().Type, Kind: controller.InputQPrimary}},
		Outputs:     []controller.Output{{Type: EchoDef{}.Definition().Type, Kind: controller.OutputExclusive}},
		Concurrency: optional.Some[uint](2),
	}
}

func (q *pairedEchoer) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, ptr resource.Pointer) error {
	id := ptr.ID()
	if _, again := q.once.LoadOrStore(id, true); !again {
		if err := q.interleave(ctx, id); err != nil {
			return err
		}
	}
	m, err := safe.ReaderGetByID[*Mid](ctx, r, id)
	if err != nil {
		return err // the test destroys no mid
	}
	echo := typed.NewDefault[NSpec, EchoDef](id, NSpec{})
	if err := safe.WriterModify(ctx, r, echo, func(e *Echo) error { e.TypedSpec().N = m.TypedSpec().N + 1; return nil }); err != nil {
		return err
	}
	if q.first.Load() == id {
		close(q.firstWrote)
	}
	return nil
}

// interleave is the first reconcile of id's wait: the first to start
// waits until the other started, the other until the first wrote.
func (q *pairedEchoer) interleave(ctx context.Context, id string) error {
	wait := q.firstWrote
	if q.first.CompareAndSwap(nil, id) {
		wait = q.started[map[string]string{"x-1": "x-2", "x-2": "x-1"}[id]]
	}
	close(q.started[id])
	select {
	case <-wait:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (*pairedEchoer) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}
