package plan_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/plan"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestPL5_WorldActionsOfControllersActingAtOnceAreInOneOrder: two
// controllers act on the world at once after the same proposed note, in
// one order in one plan and in the other order in the next (each waits
// for the other's action). The plans list the same world actions in the
// same order.
func TestPL5_WorldActionsOfControllersActingAtOnceAreInOneOrder(t *testing.T) {
	var worlds [][]string
	for _, first := range []string{"left", "right"} {
		p, err := plan.Make(context.Background(), inmem.NewState(), ringers(first),
			plan.Change{Set: []resource.Resource{note("x", 1)}}, plan.WithTimeout(time.Minute))
		require.NoError(t, err)
		require.True(t, p.Converged, p.Why)
		worlds = append(worlds, p.World)
	}
	assert.Equal(t, []string{"left rings x", "right rings x"}, worlds[0])
	assert.Equal(t, worlds[0], worlds[1], "the same world actions in the same order")
}

// ringers is a daemon of two controllers, left and right, that each ring
// a bell once per note; the one not first rings after the first rang.
func ringers(first string) plan.Daemon {
	return plan.Daemon{Setup: func([]resource.Resource) (plan.System, error) {
		b := &bell{first: first, rang: make(chan struct{})}
		return plan.System{
			Register: func(e controller.Engine) error {
				return errors.Join(e.RegisterController(ringer{"left", b}), e.RegisterController(ringer{"right", b}))
			},
			Actions: b.actions,
		}, nil
	}}
}

// bell is the ringers' world: it logs each ring.
type bell struct {
	first string
	rang  chan struct{} // closed once first rang
	mu    sync.Mutex
	log   []string
}

// ring logs who rang for id, the one not first once first rang.
func (b *bell) ring(ctx context.Context, who string, id resource.ID) error {
	if who != b.first {
		select {
		case <-b.rang:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	b.mu.Lock()
	b.log = append(b.log, who+" rings "+id)
	b.mu.Unlock()
	if who == b.first {
		close(b.rang)
	}
	return nil
}

func (b *bell) actions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.log...)
}

// ringer rings the bell once for each note.
type ringer struct {
	name string
	b    *bell
}

func (c ringer) Name() string { return c.name }
func (ringer) Inputs() []controller.Input {
	return []controller.Input{{Namespace: ns, Type: NoteDef{}.Definition().Type, Kind: controller.InputWeak}}
}
func (ringer) Outputs() []controller.Output { return nil }
func (c ringer) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	rung := map[resource.ID]bool{}
	return eachNote(ctx, r, func(n *Note) error {
		if id := n.Metadata().ID(); !rung[id] {
			rung[id] = true
			return c.b.ring(ctx, c.name, id)
		}
		return nil
	})
}
