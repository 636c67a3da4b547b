package runtime_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// lossyState is an inmem state whose kind watches lose the changes they
// receive while losing is set: what a watch that silently missed changes
// looks like, which Runtime.Relist repairs. It forwards the optional
// interfaces of the state.
type lossyState struct {
	forwardingState
	losing atomic.Bool
}

func (l *lossyState) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	inner := make(chan []state.Event, 1)
	if err := l.State.WatchKindAggregated(ctx, k, inner, opts...); err != nil {
		return err
	}
	go func() {
		for {
			var b []state.Event
			select {
			case b = <-inner:
			case <-ctx.Done():
				return
			}
			if l.losing.Load() {
				b = slices.DeleteFunc(b, func(ev state.Event) bool {
					return ev.Type == state.Created || ev.Type == state.Updated || ev.Type == state.Destroyed
				})
				if len(b) == 0 {
					continue
				}
			}
			select {
			case ch <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
}

// relists returns the Relists counter of typ's watch.
func relists(t *testing.T, rt *runtime.Runtime, typ resource.Type) uint64 {
	t.Helper()
	for _, k := range rt.Observe().Metrics().Kinds {
		if k.Type == typ {
			return k.Relists
		}
	}
	require.FailNow(t, "kind not watched", typ)
	return 0
}

// TestRelist_RoutesExactlyWhatDiffersAndReturnsWhenQueued: after changes
// the kind's watch lost, Relist queues exactly the items that differ (an
// update, a destroy, a create; not the unchanged resource) before it
// returns, wakes a Controller of the kind, counts one re-list, and a
// Relist with nothing lost routes nothing.
func TestRelist_RoutesExactlyWhatDiffersAndReturnsWhenQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &lossyState{forwardingState: forwardingState{inmem.NewState()}}
		gate := make(chan struct{})
		var (
			mu    sync.Mutex
			calls []string
			held  atomic.Bool
		)
		q := &funcQController{
			name:     "items",
			settings: primaryOf(typeA),
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				mu.Lock()
				calls = append(calls, p.ID())
				mu.Unlock()
				if held.Load() {
					select { // held until the test has looked at the queue
					case <-gate:
					case <-ctx.Done():
					}
				}
				return nil
			},
		}
		wakes := newEventCounter(false)
		c := &funcController{name: "watcher", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: wakes.run}
		for _, id := range []string{"a", "b", "c"} {
			mustCreate(t, st, newPair(typeA, id, 1))
		}
		e := start(t, runtimetest.WithState(st), runtimetest.WithQControllers(q), runtimetest.WithControllers(c))
		runtimetest.Settle(t, e.Runtime)
		mu.Lock()
		calls = nil
		mu.Unlock()
		wakes.count() // (count drains)
		ctx := context.Background()

		st.losing.Store(true)
		setPair(t, st, typeA, "a", 2)
		require.NoError(t, st.Destroy(ctx, ptr(typeA, "b")))
		mustCreate(t, st, newPair(typeA, "d", 1))
		synctest.Wait()
		mu.Lock()
		require.Empty(t, calls, "the watch lost the changes")
		mu.Unlock()
		st.losing.Store(false)

		held.Store(true)
		require.NoError(t, e.Runtime.Relist(ctx, kind(typeA)))
		// Queued before Relist returned: one item in flight (held), the
		// others due; nothing for c.
		act := activityOf(t, e.Runtime, "items")
		assert.Equal(t, 3, act.Due+act.InFlight, "the items that differ are queued when Relist returns: %+v", act)
		held.Store(false)
		close(gate)
		runtimetest.Settle(t, e.Runtime)
		mu.Lock()
		got := slices.Clone(calls)
		calls = nil
		mu.Unlock()
		slices.Sort(got)
		assert.Equal(t, []string{"a", "b", "d"}, got, "exactly what differs")
		assert.Positive(t, wakes.count(), "the Controller of the kind is woken")
		assert.Equal(t, uint64(1), relists(t, e.Runtime, typeA))

		// Nothing lost: nothing routed, one more re-list counted.
		require.NoError(t, e.Runtime.Relist(ctx, kind(typeA)))
		runtimetest.Settle(t, e.Runtime)
		mu.Lock()
		assert.Empty(t, calls)
		mu.Unlock()
		assert.Zero(t, wakes.count(), "nothing differs: nobody is woken")
		assert.Equal(t, uint64(2), relists(t, e.Runtime, typeA))
	})
}

// TestRelist_Errors: Relist refuses an unusable kind and a kind the Runtime
// does not watch (invalid class), fails before Run, and returns the
// context's error when it is done first.
func TestRelist_Errors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		idle, err := runtime.New(inmem.NewState(), zap.NewNop())
		require.NoError(t, err)
		assert.Error(t, idle.Relist(context.Background(), kind(typeA)), "before Run")

		e := start(t, runtimetest.WithQControllers(&funcQController{name: "q", settings: primaryOf(typeA)}))
		err = e.Runtime.Relist(context.Background(), kind(typeB))
		assert.True(t, state.IsInvalidError(err), "a kind nobody watches: %v", err)
		err = e.Runtime.Relist(context.Background(), resource.NewKind("", typeA))
		assert.True(t, state.IsInvalidError(err), "an empty namespace: %v", err)
		err = e.Runtime.Relist(context.Background(), nil)
		assert.True(t, state.IsInvalidError(err), "a nil kind: %v", err)

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err = e.Runtime.Relist(ctx, kind(typeA))
		if err != nil { // the re-list may have been routed already
			assert.ErrorIs(t, err, context.Canceled)
		}
		runtimetest.Settle(t, e.Runtime)
	})
}

// activityOf returns the activity of the controller name.
func activityOf(t *testing.T, rt *runtime.Runtime, name string) observe.ControllerActivity {
	t.Helper()
	for _, c := range rt.Observe().Activity(context.Background()).Controllers {
		if c.Name == name {
			return c
		}
	}
	require.FailNow(t, "no controller", name)
	return observe.ControllerActivity{}
}

// setPair sets spec A of the Pair typ/id in st (creating it when absent).
func setPair(t testing.TB, st state.State, typ resource.Type, id resource.ID, a int) {
	t.Helper()
	require.NoError(t, st.Modify(context.Background(), newPair(typ, id, 0), func(r resource.Resource) error {
		r.(*Pair).TypedSpec().A = a
		return nil
	}))
}
