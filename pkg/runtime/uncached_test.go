package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// holdingState delays the events of its kind watches while hold is set,
// until held is closed: the engine's cache then lags behind the state.
type holdingState struct {
	state.State
	hold atomic.Bool
	held chan struct{}
}

func (h *holdingState) pass(ctx context.Context) bool {
	if !h.hold.Load() {
		return true
	}
	select {
	case <-h.held:
		return true
	case <-ctx.Done():
		return false
	}
}

func forward[E any](ctx context.Context, h *holdingState, in <-chan E, out chan<- E) {
	for {
		select {
		case e := <-in:
			if !h.pass(ctx) {
				return
			}
			select {
			case out <- e:
			case <-ctx.Done():
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

func (h *holdingState) WatchKind(ctx context.Context, k resource.Kind, ch chan<- state.Event, opts ...state.WatchKindOption) error {
	in := make(chan state.Event)
	if err := h.State.WatchKind(ctx, k, in, opts...); err != nil {
		return err
	}
	go forward(ctx, h, in, ch)
	return nil
}

func (h *holdingState) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	in := make(chan []state.Event)
	if err := h.State.WatchKindAggregated(ctx, k, in, opts...); err != nil {
		return err
	}
	go forward(ctx, h, in, ch)
	return nil
}

// listedIDs returns a function that takes a List's results and returns
// the IDs listed, failing t on an error.
func listedIDs(t *testing.T) func(resource.List, error) []string {
	return func(l resource.List, err error) []string {
		t.Helper()
		require.NoError(t, err)
		var out []string
		for _, r := range l.Items {
			out = append(out, r.Metadata().ID())
		}
		return out
	}
}

// TestUncached_ReadsBypassTheCache: an input declared Uncached is read by
// GetUncached and ListUncached from the state while the cache lags (Get
// and List still read the cache); the dependency graph marks its edge.
func TestUncached_ReadsBypassTheCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		ctx := t.Context()
		ids := listedIDs(t)
		require.NoError(t, st.Create(ctx, newPair(typeA, "a", 1)))
		h := &holdingState{State: st, held: make(chan struct{})}
		input := in(typeA, controller.InputWeak)
		input.Uncached = true
		c, rts := captureRuntime("c", []controller.Input{input, in(typeA, controller.InputWeak)}, nil)
		e := start(t, runtimetest.WithState(h), runtimetest.WithRuntimeOptions(runtime.WithCachedResource(testNS, typeA)), runtimetest.WithControllers(c))
		r := <-rts

		h.hold.Store(true)
		require.NoError(t, st.Create(ctx, newPair(typeA, "b", 2)))
		synctest.Wait()

		_, err := r.Get(ctx, ptr(typeA, "b"))
		assert.True(t, state.IsNotFoundError(err), "the cache lags: %v", err)
		got, err := r.GetUncached(ctx, ptr(typeA, "b"))
		require.NoError(t, err)
		assert.Equal(t, 2, specA(t, got))
		assert.Equal(t, []string{"a"}, ids(r.List(ctx, kind(typeA))))
		assert.Equal(t, []string{"a", "b"}, ids(r.ListUncached(ctx, kind(typeA))))
		assert.Equal(t, []string{"b"}, ids(r.ListUncached(ctx, kind(typeA), state.WithIDQuery(resource.IDRegexpMatch(regexpOf(t, "^b$"))))))

		g, err := e.Runtime.GetDependencyGraph()
		require.NoError(t, err)
		var edges []controller.DependencyEdge
		for _, ed := range g.Edges {
			if ed.ControllerName == "c" {
				edges = append(edges, ed)
			}
		}
		require.Len(t, edges, 1, "an input declared cached and uncached is one edge (E2)")
		assert.True(t, edges[0].Uncached)
		close(h.held)
	})
}

// TestUncached_UndeclaredIsInvalid: an uncached read of a kind that no
// input declared Uncached covers — an input without the mark, an input
// with an ID for ListUncached, an own output, an undeclared kind — is an
// invalid-class error naming the controller, the call and the fix;
// nothing is read. A bad label query is refused as by List.
func TestUncached_UndeclaredIsInvalid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		ctx := t.Context()
		require.NoError(t, st.Create(ctx, newPair(typeA, "a", 1)))
		byID := inID(typeB, "x", controller.InputWeak)
		byID.Uncached = true
		c, rts := captureRuntime("c", []controller.Input{in(typeA, controller.InputWeak), byID}, []controller.Output{out(typeC, controller.OutputExclusive)})
		start(t, runtimetest.WithState(st), runtimetest.WithControllers(c))
		r := <-rts

		for name, call := range map[string]func() error{
			"GetUncached of a cached input":  func() error { _, err := r.GetUncached(ctx, ptr(typeA, "a")); return err },
			"ListUncached of a cached input": func() error { _, err := r.ListUncached(ctx, kind(typeA)); return err },
			"ListUncached of an ID input":    func() error { _, err := r.ListUncached(ctx, kind(typeB)); return err },
			"GetUncached of another ID":      func() error { _, err := r.GetUncached(ctx, ptr(typeB, "y")); return err },
			"GetUncached of an output":       func() error { _, err := r.GetUncached(ctx, ptr(typeC, "o")); return err },
			"ListUncached of an output":      func() error { _, err := r.ListUncached(ctx, kind(typeC)); return err },
		} {
			err := call()
			assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
			assert.ErrorContains(t, err, `controller "c"`, name)
			assert.ErrorContains(t, err, "Uncached: true", name)
		}
		_, err := r.GetUncached(ctx, ptr(typeB, "x"))
		assert.True(t, state.IsNotFoundError(err), "declared: read from the state: %v", err)
		_, err = r.GetUncached(ctx, nil)
		assert.True(t, state.IsInvalidError(err))
	})
}

// TestCachedState_ServesTheCacheReadOnly: the Runtime's cached view reads
// a cached kind from the cache (lagging while the watch does), with the
// options of a List (a union of label queries, a bad query refused), any
// other kind from the state; every write is refused with an invalid-class
// error wrapping ErrReadOnlyView, and nothing is written.
func TestCachedState_ServesTheCacheReadOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		ctx := t.Context()
		ids := listedIDs(t)
		a := newPair(typeA, "a", 1)
		a.Metadata().Labels().Set("app", "web")
		require.NoError(t, st.Create(ctx, a))
		require.NoError(t, st.Create(ctx, newPair(typeB, "x", 1)))
		h := &holdingState{State: st, held: make(chan struct{})}
		e := start(t, runtimetest.WithState(h), runtimetest.WithRuntimeOptions(runtime.WithCachedResource(testNS, typeA)))
		view := e.Runtime.CachedState()

		h.hold.Store(true)
		b := newPair(typeA, "b", 2)
		b.Metadata().Labels().Set("app", "db")
		require.NoError(t, st.Create(ctx, b))
		require.NoError(t, st.Create(ctx, newPair(typeB, "y", 2)))
		synctest.Wait()

		assert.Equal(t, []string{"a"}, ids(view.List(ctx, kind(typeA))), "the cache, lagging")
		_, err := view.Get(ctx, ptr(typeA, "b"))
		assert.True(t, state.IsNotFoundError(err), "%v", err)
		assert.Equal(t, []string{"x", "y"}, ids(view.List(ctx, kind(typeB))), "not cached: the state")

		close(h.held)
		synctest.Wait()
		assert.Equal(t, []string{"a", "b"}, ids(view.List(ctx, kind(typeA),
			state.WithLabelQuery(resource.LabelEqual("app", "web")), state.WithLabelQuery(resource.LabelEqual("app", "db")))))
		ro, err := view.Get(ctx, ptr(typeA, "b"), state.WithReadOnlyGet())
		require.NoError(t, err)
		assert.Equal(t, 2, specA(t, ro))
		_, err = view.List(ctx, kind(typeA), state.WithLabelQuery(resource.LabelEqual("", "x")))
		assert.True(t, state.IsInvalidError(err), "%v", err)

		for name, write := range map[string]func() error{
			"Create":  func() error { return view.Create(ctx, newPair(typeA, "c", 3)) },
			"Update":  func() error { return view.Update(ctx, ro.DeepCopy()) },
			"Destroy": func() error { return view.Destroy(ctx, ptr(typeA, "a")) },
			"Modify": func() error {
				return view.Modify(ctx, newPair(typeA, "a", 0), func(r resource.Resource) error {
					r.(*Pair).TypedSpec().A = 100
					return nil
				})
			},
			"AddFinalizer": func() error { return view.AddFinalizer(ctx, ptr(typeA, "a"), "f") },
		} {
			err := write()
			assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
			assert.ErrorIs(t, err, runtime.ErrReadOnlyView, name)
		}
		l, err := st.List(ctx, kind(typeA))
		assert.Equal(t, []string{"a", "b"}, ids(l, err), "nothing written")
		got, err := st.Get(ctx, ptr(typeA, "a"))
		require.NoError(t, err)
		assert.Equal(t, 1, specA(t, got))
		assert.True(t, got.Metadata().Finalizers().Empty())
	})
}
