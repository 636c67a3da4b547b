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

// TestPL3_TheFixedPointWaitsForTheWorldsObservers: the QController
// setter sets a gauge (the world) to each note's value and returns at
// once; the gauge wakes the Controller reader on a channel of its own,
// which the Runtime's idleness does not cover, and reader mirrors it as
// echoes only once the plan asked the world whether it is quiet (after
// the Runtime went idle and stayed so: as late as an observer can
// wake). The plan waits for the world to be quiet: each echo is in it,
// in its own note's stretch, with its chain through its own action.
func TestPL3_TheFixedPointWaitsForTheWorldsObservers(t *testing.T) {
	d := plan.Daemon{Setup: func([]resource.Resource) (plan.System, error) {
		g := &gauge{values: map[resource.ID]int{}, notify: make(chan struct{}, 1), asked: make(chan struct{})}
		return plan.System{
			Register: func(e controller.Engine) error {
				if err := e.RegisterQController(setter{g}); err != nil {
					return err
				}
				return e.RegisterController(reader{g})
			},
			Actions:   g.actions,
			Actors:    []string{"setter"},
			Observers: []string{"reader"},
			Quiet:     g.quiet,
		}, nil
	}}
	p, err := plan.Make(context.Background(), inmem.NewState(), d,
		plan.Change{Set: []resource.Resource{note("x", 1), note("y", 2)}}, plan.WithTimeout(time.Minute))
	require.NoError(t, err)
	require.True(t, p.Converged, p.Why)
	var out bytes.Buffer
	require.NoError(t, p.WriteText(&out))
	for _, n := range []struct {
		id string
		v  int
	}{{"x", 1}, {"y", 2}} {
		assert.Contains(t, out.String(), fmt.Sprintf("  + Echoes.test.resgraph.dev(plan/%s) (by reader)\n"+
			"      owner: reader\n      spec.n: %d\n"+
			"      because: Notes.test.resgraph.dev(plan/%s) (the change) → setter set %s to %d → reader modify Echoes.test.resgraph.dev(plan/%s)\n",
			n.id, n.v, n.id, n.id, n.v, n.id))
	}
}

// gauge is a world of values set by id: each setting is counted and
// wakes its reader, which says when it mirrored what it read.
type gauge struct {
	mu     sync.Mutex
	values map[resource.ID]int
	log    []string
	// sent counts the settings; read is sent when the reader last read,
	// and mirrored is read once it mirrored that read.
	sent, read, mirrored int
	notify               chan struct{} // capacity 1, coalescing
	// asked is closed the first time quiet is asked while the reader
	// has not mirrored every setting.
	asked     chan struct{}
	askedOnce sync.Once
}

func (g *gauge) set(id resource.ID, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.values[id] == n {
		return
	}
	g.values[id], g.sent = n, g.sent+1
	g.log = append(g.log, fmt.Sprintf("set %s to %d", id, n))
	select {
	case g.notify <- struct{}{}:
	default:
	}
}

// quiet is the System's Quiet: every setting mirrored.
func (g *gauge) quiet() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mirrored != g.sent {
		g.askedOnce.Do(func() { close(g.asked) })
		return false
	}
	return true
}

// snapshot reads the values, noting what the reader read.
func (g *gauge) snapshot() map[resource.ID]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.read = g.sent
	out := make(map[resource.ID]int, len(g.values))
	for id, n := range g.values {
		out[id] = n
	}
	return out
}

func (g *gauge) done() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mirrored = g.read
}

func (g *gauge) actions() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.log...)
}

// setter sets the gauge to each note's value.
type setter struct{ g *gauge }

func (setter) Name() string { return "setter" }

func (setter) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs: []controller.Input{{Namespace: ns, Type: NoteDef{}.Definition().Type, Kind: controller.InputQPrimary}},
	}
}

func (c setter) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, ptr resource.Pointer) error {
	n, err := safe.ReaderGetByID[*Note](ctx, r, ptr.ID())
	if state.IsNotFoundError(err) {
		return nil
	} else if err != nil {
		return err
	}
	c.g.set(ptr.ID(), n.TypedSpec().N)
	return nil
}

func (setter) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// reader mirrors the gauge as echoes, woken by the gauge (it reads no
// kind), once the plan asked whether the world is quiet.
type reader struct{ g *gauge }

func (reader) Name() string               { return "reader" }
func (reader) Inputs() []controller.Input { return nil }
func (reader) Outputs() []controller.Output {
	return []controller.Output{{Type: EchoDef{}.Definition().Type, Kind: controller.OutputExclusive}}
}

func (c reader) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		case <-c.g.notify:
			select {
			case <-c.g.asked:
			case <-ctx.Done():
				return nil
			}
		}
		for id, n := range c.g.snapshot() {
			e := typed.NewDefault[NSpec, EchoDef](id, NSpec{})
			if err := safe.WriterModify(ctx, r, e, func(e *Echo) error { e.TypedSpec().N = n; return nil }); err != nil {
				return err
			}
		}
		c.g.done()
	}
}
