package plan_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
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
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestPL5_AnObserversWriteFollowsTheWorldActionsItsActorTook: the
// controller turner sets a dial (the world) to each note's value; the
// controller watcher, which reads no kind and is woken by the dial,
// mirrors the dial as echoes (turner's reconcile waits for the mirror,
// so the plan sees it before the daemon is idle). The plan gives the
// echo the chain change → turner's world action → watcher's write.
func TestPL5_AnObserversWriteFollowsTheWorldActionsItsActorTook(t *testing.T) {
	out := planDial(t, []string{"watcher"})
	assert.Contains(t, out, "  + Echoes.test.resgraph.dev(plan/x) (by watcher)\n"+
		"      owner: watcher\n      spec.n: 1\n"+
		"      because: Notes.test.resgraph.dev(plan/x) (the change) → turner set x to 1 → watcher modify Echoes.test.resgraph.dev(plan/x)\n")
}

// TestPL5_AWriteNothingExplainsSaysSo: the same daemon, its watcher not
// declared an observer of the world: the plan says that nothing it saw
// leads to the echo, rather than giving no cause.
func TestPL5_AWriteNothingExplainsSaysSo(t *testing.T) {
	out := planDial(t, nil)
	assert.Contains(t, out, "  + Echoes.test.resgraph.dev(plan/x) (by watcher)\n"+
		"      owner: watcher\n      spec.n: 1\n"+
		"      because: nothing the plan saw: no proposed change nor world action leads to it (watcher modify Echoes.test.resgraph.dev(plan/x))\n")
}

// planDial plans note x = 1 for the dial's daemon (observers declared as
// such) and returns the plan's text.
func planDial(t *testing.T, observers []string) string {
	t.Helper()
	d := plan.Daemon{Setup: func([]resource.Resource) (plan.System, error) {
		w := &dial{values: map[resource.ID]int{}, shown: map[string]chan struct{}{}, notify: make(chan struct{}, 1)}
		return plan.System{
			Register: func(e controller.Engine) error {
				if err := e.RegisterQController(turner{w}); err != nil {
					return err
				}
				return e.RegisterController(watcher{w})
			},
			Actions:   w.actions,
			Actors:    []string{"turner"},
			Observers: observers,
		}, nil
	}}
	p, err := plan.Make(context.Background(), inmem.NewState(), d,
		plan.Change{Set: []resource.Resource{note("x", 1)}}, plan.WithTimeout(time.Minute))
	require.NoError(t, err)
	require.True(t, p.Converged, p.Why)
	require.Equal(t, []string{"set x to 1"}, p.World)
	var out bytes.Buffer
	require.NoError(t, p.WriteText(&out))
	return out.String()
}

// dial is a world of values set by id; each setting wakes its watcher.
type dial struct {
	mu     sync.Mutex
	values map[resource.ID]int
	log    []string
	// shown has, for each "id=n" set, a channel closed once the watcher
	// mirrored it.
	shown  map[string]chan struct{}
	notify chan struct{} // capacity 1, coalescing
}

// set sets id to n and returns a channel closed once the watcher
// mirrored it.
func (d *dial) set(id resource.ID, n int) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.values[id] != n {
		d.values[id] = n
		d.log = append(d.log, fmt.Sprintf("set %s to %d", id, n))
	}
	select {
	case d.notify <- struct{}{}:
	default:
	}
	return d.shownLocked(id, n)
}

func (d *dial) shownLocked(id resource.ID, n int) chan struct{} {
	key := fmt.Sprintf("%s=%d", id, n)
	if d.shown[key] == nil {
		d.shown[key] = make(chan struct{})
	}
	return d.shown[key]
}

// mirrored says the watcher mirrored id = n.
func (d *dial) mirrored(id resource.ID, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.shownLocked(id, n)
	select {
	case <-c:
	default:
		close(c)
	}
}

func (d *dial) read() map[resource.ID]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[resource.ID]int, len(d.values))
	for id, n := range d.values {
		out[id] = n
	}
	return out
}

func (d *dial) actions() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.log...)
}

// turner sets the dial to each note's value and waits until the watcher
// mirrored it.
type turner struct{ d *dial }

func (turner) Name() string { return "turner" }

func (turner) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs: []controller.Input{{Namespace: ns, Type: NoteDef{}.Definition().Type, Kind: controller.InputQPrimary}},
	}
}

func (c turner) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, ptr resource.Pointer) error {
	n, err := safe.ReaderGetByID[*Note](ctx, r, ptr.ID())
	if state.IsNotFoundError(err) {
		return nil
	} else if err != nil {
		return err
	}
	select {
	case <-c.d.set(ptr.ID(), n.TypedSpec().N):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (turner) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// watcher mirrors the dial as echoes, woken by the dial: it reads no
// kind.
type watcher struct{ d *dial }

func (watcher) Name() string               { return "watcher" }
func (watcher) Inputs() []controller.Input { return nil }
func (watcher) Outputs() []controller.Output {
	return []controller.Output{{Type: EchoDef{}.Definition().Type, Kind: controller.OutputExclusive}}
}

func (c watcher) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		case <-c.d.notify:
		}
		for id, n := range c.d.read() {
			e := typed.NewDefault[NSpec, EchoDef](id, NSpec{})
			if err := safe.WriterModify(ctx, r, e, func(e *Echo) error { e.TypedSpec().N = n; return nil }); err != nil {
				return err
			}
			c.d.mirrored(id, n)
		}
	}
}
