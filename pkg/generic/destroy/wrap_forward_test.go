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

// pauser writes C "c" with the number of its pass after reading A "a"
// twice; in the pass whose first read sees a's N at 2 it stops between the
// two reads until released, and sends what its second read saw.
type pauser struct {
	paused  chan struct{}
	release chan struct{}
	second  chan int
}

func (pauser) Name() string { return "pauser" }
func (pauser) Inputs() []controller.Input {
	return []controller.Input{{Namespace: kindA.Namespace(), Type: kindA.Type(), Kind: controller.InputWeak}}
}
func (pauser) Outputs() []controller.Output { return []controller.Output{{Type: kindC.Type()}} }
func (p pauser) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		a, err := safe.ReaderGet[*fixture.A](ctx, r, ptrA("a"))
		if err != nil {
			return err
		}
		if a.TypedSpec().N == 2 {
			if err := p.pause(ctx, r); err != nil {
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

// pause stops the pass until released, then reads a again.
func (p pauser) pause(ctx context.Context, r controller.Runtime) error {
	close(p.paused)
	select {
	case <-ctx.Done():
		return nil
	case <-p.release:
	}
	a, err := safe.ReaderGet[*fixture.A](ctx, r, ptrA("a"))
	if err != nil {
		return err
	}
	p.second <- a.TypedSpec().N
	return nil
}

// passTap keeps the commits of C "c" it sees, and closes listed at the
// first List of kind C (the forwarder's Ready) once armed.
type passTap struct {
	mu      gosync.Mutex
	commits []commit
	armed   bool
	listed  chan struct{}
	changed chan struct{} // 1-buffered: a commit was kept
}

func (t *passTap) Committed(_ string, p resource.Pointer, version, read, pass uint64, _ *resource.PointerKey) {
	ptr := resource.PointerOf(p)
	if ptr.ID() != "c" {
		return
	}
	t.mu.Lock()
	t.commits = append(t.commits, commit{ptr, version, read, pass})
	t.mu.Unlock()
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

func (t *passTap) Read(_ string, _ uint64, _ uint32, _ uint64, kind resource.KindKey, _ *resource.PointerKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.armed && kind == resource.KindOf(kindC) {
		t.armed = false
		close(t.listed)
	}
}

// arm makes the next List of kind C close listed.
func (t *passTap) arm() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.armed = true
}

// waitCommits waits until the tap kept n commits, and returns them.
func (t *passTap) waitCommits(tb testing.TB, n int) []commit {
	tb.Helper()
	deadline := time.After(time.Minute) // a deadline, not a wait
	for {
		t.mu.Lock()
		got := append([]commit(nil), t.commits...)
		t.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-t.changed:
		case <-deadline:
			tb.Fatalf("%d commits of c after a minute, want %d: %+v", len(got), n, got)
		}
	}
}

// setA sets A "a"'s N to n.
func setA(tb testing.TB, st state.State, n int) {
	tb.Helper()
	a, err := safe.StateGetByID[*fixture.A](context.Background(), st, "a")
	require.NoError(tb, err)
	a = a.DeepCopy().(*fixture.A)
	a.TypedSpec().N = n
	require.NoError(tb, st.Update(context.Background(), a))
}

// within waits until ch is closed, failing the test with what after a
// minute.
func within(tb testing.TB, ch <-chan struct{}, what string) {
	tb.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute): // a deadline, not a wait
		tb.Fatal(what)
	}
}

// TestWrappedControllersPassesRunFromOneEventChCallOfTheirsToTheNext: a
// wrapped controller's pass is what it read and wrote from one of its own
// EventCh calls to the next, in a commit tap's log, also when the Runtime
// woke the controller in the middle of the pass (Wrap's forwarder then
// takes the event and calls the Runtime's EventCh): the pass's commit
// carries the revision its first read saw, and the pass that takes the
// event that came meanwhile is a pass of its own.
func TestWrappedControllersPassesRunFromOneEventChCallOfTheirsToTheNext(t *testing.T) {
	p := pauser{paused: make(chan struct{}), release: make(chan struct{}), second: make(chan int, 1)}
	wrapped, err := destroy.Wrap(p, kindC)
	require.NoError(t, err)
	st := runtimetest.NewState(t)
	runtimetest.Create(t, st, fixture.New[fixture.ADef]("a", 1))
	env := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(wrapped))
	runtimetest.AssertResource(t, st, "c", runtimetest.Holds(func(*fixture.C) bool { return true }))
	tap := &passTap{listed: make(chan struct{}), changed: make(chan struct{}, 1)}
	remove, err := env.Runtime.TapCommits(tap)
	require.NoError(t, err)
	defer remove()

	setA(t, st, 2)
	within(t, p.paused, "the pass that reads N=2 never ran")
	var before uint64
	_, err = st.Get(context.Background(), ptrA("a"), state.WithGetRevision(&before))
	require.NoError(t, err)
	tap.arm()
	setA(t, st, 3) // wakes the controller in the middle of its pass
	within(t, tap.listed, "the forwarder never took the wake-up (its Ready lists C)")
	close(p.release)
	var second int
	select {
	case second = <-p.second:
	case <-time.After(time.Minute): // a deadline, not a wait
		t.Fatal("the paused pass never read again")
	}
	require.Equal(t, 3, second, "the pass's second read sees the write that woke it")

	commits := tap.waitCommits(t, 2)
	paused, next := commits[0], commits[1]
	assert.LessOrEqual(t, paused.read, before, "the paused pass's commit carries its first read (at or before %d): %+v", before, commits)
	assert.NotEqual(t, paused.pass, next.pass, "the pass after the paused one is a pass of its own: %+v", commits)
}
