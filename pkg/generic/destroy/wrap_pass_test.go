package destroy_test

import (
	"context"
	gosync "sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/destroy"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

// counter writes C "c" with the count of its passes on every pass, and
// C "old" on its first.
type counter struct{}

func (counter) Name() string { return "counter" }
func (counter) Inputs() []controller.Input {
	return []controller.Input{{Namespace: kindA.Namespace(), Type: kindA.Type(), Kind: controller.InputWeak}}
}
func (counter) Outputs() []controller.Output { return []controller.Output{{Type: kindC.Type()}} }
func (counter) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		if _, err := safe.ReaderGet[*fixture.A](ctx, r, ptrA("a")); err != nil {
			return err
		}
		if n == 1 {
			if err := safe.WriterModify(ctx, r, fixture.New[fixture.CDef]("old", 0), func(*fixture.C) error { return nil }); err != nil {
				return err
			}
		}
		if err := safe.WriterModify(ctx, r, fixture.New[fixture.CDef]("c", 0), func(c *fixture.C) error {
			c.TypedSpec().N = n
			return nil
		}); err != nil {
			return err
		}
	}
}

// commit is one commit a commitTap saw.
type commit struct {
	ptr                 resource.PointerKey
	version, read, pass uint64
}

// commitTap keeps the commits it sees, in order, until it saw the
// destroy of C "old" (its only commit at a version above 1: the test tore
// it down) and a commit of C "c" after it; it then closes done.
type commitTap struct {
	mu      gosync.Mutex
	commits []commit
	// destroyed is 1 + the destroy's index in commits (0: none yet),
	// after the index of the commit of c after it.
	destroyed, after int
	done             chan struct{}
}

func (t *commitTap) Committed(_ string, p resource.Pointer, version, read, pass uint64, _ *resource.PointerKey) {
	ptr := resource.PointerOf(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.after > 0 { // done
		return
	}
	t.commits = append(t.commits, commit{ptr, version, read, pass})
	last := len(t.commits) - 1
	switch {
	case ptr.ID() == "old" && version > 1:
		t.destroyed = last + 1
	case ptr.ID() == "c" && t.destroyed > 0:
		t.after = last
		close(t.done)
	}
}

// TestWrappedControllersDestroyInPassesOfTheirOwn: the destroys of Wrap's
// forwarder make a pass of their own in a commit tap's log, so that the
// commits of inner's pass that follows are not counted in the
// forwarder's pass.
func TestWrappedControllersDestroyInPassesOfTheirOwn(t *testing.T) {
	wrapped, err := destroy.Wrap(counter{}, kindC)
	require.NoError(t, err)
	st := runtimetest.NewState(t)
	runtimetest.Create(t, st, fixture.New[fixture.ADef]("a", 1))
	env := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(wrapped))
	runtimetest.AssertResource(t, st, "old", runtimetest.Holds(func(*fixture.C) bool { return true }))
	tap := &commitTap{done: make(chan struct{})}
	remove, err := env.Runtime.TapCommits(tap)
	require.NoError(t, err)
	defer remove()

	_, err = st.Teardown(context.Background(), ptrC("old"), state.WithTeardownOwner("counter"))
	require.NoError(t, err)
	select {
	case <-tap.done:
	case <-time.After(time.Minute): // a deadline, not a wait
		t.Fatal("no commit of c after the destroy of old")
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	d, c := tap.commits[tap.destroyed-1], tap.commits[tap.after]
	assert.NotEqual(t, d.pass, c.pass, "inner's commit in the forwarder's pass: %+v", tap.commits)
}
