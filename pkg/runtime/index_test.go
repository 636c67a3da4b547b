package runtime_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// byG indexes a Pair under each comma-separated value of its label g, and
// panics for g=boom.
var byG = safe.IndexFunc(func(p *Pair) []string {
	g, ok := p.Metadata().Labels().Get("g")
	if !ok {
		return nil
	}
	if g == "boom" {
		panic("boom")
	}
	return strings.Split(g, ",")
})

// labelled returns the Pair typ/id with label g (none when empty).
func labelled(typ resource.Type, id, g string) *Pair {
	p := newPair(typ, id, 0)
	if g != "" {
		p.Metadata().Labels().Set("g", g)
	}
	return p
}

// relabel sets (or, when empty, removes) the label g of typeA/id in st.
func relabel(t *testing.T, st state.State, id, g string) {
	t.Helper()
	require.NoError(t, st.Modify(context.Background(), newPair(typeA, id, 0), func(r resource.Resource) error {
		if g == "" {
			r.Metadata().Labels().Delete("g")
		} else {
			r.Metadata().Labels().Set("g", g)
		}
		return nil
	}))
}

// TestIndex_ListByIndexFollowsEveryChange: a controller lists a cached
// kind by a custom index (WithIndex) through its Reader, with the typed
// helper of package safe; the index follows creations, label changes and
// removals, destructions and re-creations of its inputs, and the
// controller's own writes at once (read your writes); List's options
// apply; an unknown index is an invalid-class error, an undeclared kind an
// access error; a panicking index function is logged at ERROR with its
// stack and lists that resource under no key.
func TestIndex_ListByIndexFollowsEveryChange(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.DebugLevel)
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		ctx := t.Context()
		c, rts := captureRuntime("c", []controller.Input{in(typeA, controller.InputWeak)}, []controller.Output{out(typeB, controller.OutputExclusive)})
		start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.New(core)), runtimetest.WithControllers(c),
			runtimetest.WithRuntimeOptions(runtime.WithCachedResource(testNS, typeA), runtime.WithCachedResource(testNS, typeB),
				runtime.WithIndex(testNS, typeA, "g", byG), runtime.WithIndex(testNS, typeB, "g", byG)))
		r := <-rts
		list := func(typ resource.Type, key string, opts ...state.ListOption) []string {
			t.Helper()
			l, err := safe.ReaderListByIndex[*Pair](ctx, r, resource.NewKind(testNS, typ), "g", key, opts...)
			require.NoError(t, err)
			var got []string
			for p := range l.All() {
				got = append(got, p.Metadata().ID())
			}
			return got
		}

		mustCreate(t, st, labelled(typeA, "a2", "x,y"))
		mustCreate(t, st, labelled(typeA, "a1", "x"))
		mustCreate(t, st, labelled(typeA, "a3", ""))
		synctest.Wait()
		assert.Equal(t, []string{"a1", "a2"}, list(typeA, "x"))
		assert.Equal(t, []string{"a2"}, list(typeA, "y"))

		relabel(t, st, "a1", "y") // a label change moves it
		synctest.Wait()
		assert.Equal(t, []string{"a2"}, list(typeA, "x"))
		assert.Equal(t, []string{"a1", "a2"}, list(typeA, "y"))
		relabel(t, st, "a2", "") // a label removed
		relabel(t, st, "a3", "x")
		synctest.Wait()
		assert.Equal(t, []string{"a3"}, list(typeA, "x"))
		assert.Equal(t, []string{"a1"}, list(typeA, "y"))

		require.NoError(t, st.Destroy(ctx, ptr(typeA, "a1"))) // destroyed
		synctest.Wait()
		assert.Empty(t, list(typeA, "y"))
		mustCreate(t, st, labelled(typeA, "a1", "x")) // re-created
		synctest.Wait()
		assert.Equal(t, []string{"a1", "a3"}, list(typeA, "x"))

		// List's options apply on top of the index.
		assert.Equal(t, []string{"a3"}, list(typeA, "x", state.WithIDQuery(resource.IDRegexpMatch(regexpOf(t, "3$")))))
		ro, err := safe.ReaderListAllByIndex[*Pair](ctx, r, "g", "x", state.WithReadOnlyList())
		require.NoError(t, err)
		snap, err := st.Get(ctx, ptr(typeA, "a1"), state.WithReadOnlyGet())
		require.NoError(t, err)
		assert.Same(t, snap, ro.Get(0), "read-only: the shared snapshot")

		// The controller's own writes are listed at once, before the watch
		// delivers them.
		require.NoError(t, r.Create(ctx, labelled(typeB, "b1", "x")))
		assert.Equal(t, []string{"b1"}, list(typeB, "x"))
		require.NoError(t, r.Modify(ctx, newPair(typeB, "b1", 0), func(res resource.Resource) error {
			res.Metadata().Labels().Set("g", "w")
			return nil
		}))
		assert.Empty(t, list(typeB, "x"))
		assert.Equal(t, []string{"b1"}, list(typeB, "w"))
		require.NoError(t, r.Destroy(ctx, ptr(typeB, "b1")))
		assert.Empty(t, list(typeB, "w"))
		synctest.Wait()
		assert.Empty(t, list(typeB, "w"))

		// Errors.
		_, err = r.(controller.IndexReader).ListByIndex(ctx, resource.NewKind(testNS, typeA), "nope", "x")
		assert.True(t, state.IsInvalidError(err), "%v", err)
		_, err = r.(controller.IndexReader).ListByIndex(ctx, resource.NewKind(testNS, typeC), "g", "x")
		assert.True(t, controller.IsAccessDeniedError(err), "%v", err)

		// A panicking index function.
		mustCreate(t, st, labelled(typeA, "a4", "boom"))
		synctest.Wait()
		assert.Empty(t, list(typeA, "boom"))
		panicked := logs.FilterMessage("index function panicked; the resource is listed under no key of the index").All()
		require.NotEmpty(t, panicked)
		assert.Equal(t, zapcore.ErrorLevel, panicked[0].Level)
		assert.Equal(t, "a4", panicked[0].ContextMap()["id"])
		assert.Contains(t, panicked[0].ContextMap()["stack"], "runtime_test")
	})
}

// TestIndex_RefusedOptions: an index on a kind that is not cached, with an
// empty name or a nil function, or registered twice, is an invalid option.
func TestIndex_RefusedOptions(t *testing.T) {
	t.Parallel()
	cached := runtime.WithCachedResource(testNS, typeA)
	for name, opts := range map[string][]runtime.Option{
		"not cached": {runtime.WithIndex(testNS, typeB, "g", byG), cached},
		"empty name": {cached, runtime.WithIndex(testNS, typeA, "", byG)},
		"nil func":   {cached, runtime.WithIndex(testNS, typeA, "g", nil)},
		"twice":      {cached, runtime.WithIndex(testNS, typeA, "g", byG), runtime.WithIndex(testNS, typeA, "g", byG)},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := runtime.New(inmem.NewState(), zap.NewNop(), opts...)
			assert.True(t, state.IsInvalidError(err), "%v", err)
		})
	}
	_, err := runtime.New(inmem.NewState(), zap.NewNop(), cached, runtime.WithIndex(testNS, typeA, "g", byG), runtime.WithIndex(testNS, typeA, "h", byG))
	assert.NoError(t, err, "two indexes on one kind")
}

func regexpOf(t *testing.T, s string) *regexp.Regexp {
	t.Helper()
	re, err := regexp.Compile(s)
	require.NoError(t, err)
	return re
}

// heldState holds back the watch of typeB while hold is set: what the
// Runtime's cache of typeB sees then is only the controller's own writes.
type heldState struct {
	state.State
	mu   sync.Mutex
	gate chan struct{} // nil, or closed at release; protected by mu
}

func (h *heldState) hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate == nil {
		h.gate = make(chan struct{})
	}
}

func (h *heldState) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate != nil {
		close(h.gate)
		h.gate = nil
	}
}

func (h *heldState) WatchKindAggregated(ctx context.Context, kind resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if kind.Type() != typeB {
		return h.State.WatchKindAggregated(ctx, kind, ch, opts...)
	}
	inner := make(chan []state.Event)
	if err := h.State.WatchKindAggregated(ctx, kind, inner, opts...); err != nil {
		return err
	}
	go func() {
		for {
			var evs []state.Event
			select {
			case <-ctx.Done():
				return
			case evs = <-inner:
			}
			h.mu.Lock()
			gate := h.gate
			h.mu.Unlock()
			if gate != nil {
				select {
				case <-gate:
				case <-ctx.Done():
					return
				}
			}
			select {
			case ch <- evs:
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
}

// TestIndex_ExactUnderRandomSchedules: random sequences (fixed seeds) of
// changes to a cached, indexed input kind made by others (creations, label
// changes and removals, destructions, re-creations) and of the
// controller's own writes to a cached, indexed output kind, with the
// Runtime's watches running concurrently (run it under -race) and the
// output kind's watch held back at random (so that reads of own writes
// come from the cache's overlay). After each own write the written
// resource is listed under exactly its keys at once; whenever the Runtime
// is quiet and nothing is held, every key lists exactly the resources of
// the model (the test's record of the state) that have it.
func TestIndex_ExactUnderRandomSchedules(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { randomIndexSchedule(t, seed) })
		})
	}
}

func randomIndexSchedule(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 42))
	st := &heldState{State: inmem.NewState()}
	ctx := t.Context()
	held := false
	c, rts := captureRuntime("c", []controller.Input{in(typeA, controller.InputWeak)}, []controller.Output{out(typeB, controller.OutputExclusive)})
	start(t, runtimetest.WithState(st), runtimetest.WithControllers(c),
		runtimetest.WithRuntimeOptions(runtime.WithCachedResource(testNS, typeA), runtime.WithCachedResource(testNS, typeB),
			runtime.WithIndex(testNS, typeA, "g", byG), runtime.WithIndex(testNS, typeB, "g", byG)))
	r := <-rts
	keys := []string{"x", "y", "z"}
	model := map[resource.Type]map[string]string{typeA: {}, typeB: {}} // ID → label g ("" = none)
	randomG := func() string {
		var parts []string
		for _, k := range keys {
			if rng.IntN(3) == 0 {
				parts = append(parts, k)
			}
		}
		return strings.Join(parts, ",")
	}
	listed := func(typ resource.Type, key string) []string {
		t.Helper()
		l, err := safe.ReaderListByIndex[*Pair](ctx, r, resource.NewKind(testNS, typ), "g", key)
		require.NoError(t, err)
		var got []string
		for p := range l.All() {
			got = append(got, p.Metadata().ID())
		}
		return got
	}
	want := func(typ resource.Type, key string) []string {
		var ids []string
		for id, g := range model[typ] {
			if slices.Contains(strings.Split(g, ","), key) {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return ids
	}
	setG := func(res resource.Resource, g string) {
		if g == "" {
			res.Metadata().Labels().Delete("g")
		} else {
			res.Metadata().Labels().Set("g", g)
		}
	}
	for step := range 300 {
		typ := []resource.Type{typeA, typeB}[rng.IntN(2)]
		id := fmt.Sprintf("%c%d", 'a'+rng.IntN(2), rng.IntN(6))
		g, exists := model[typ][id]
		switch op := rng.IntN(12); {
		case op >= 10: // hold or release the output kind's watch
			if held {
				st.release()
			} else {
				st.hold()
			}
			held = !held
			continue
		case op < 6: // create or relabel
			g = randomG()
			if typ == typeA {
				require.NoError(t, st.Modify(ctx, newPair(typeA, id, 0), func(res resource.Resource) error { setG(res, g); return nil }))
			} else {
				require.NoError(t, r.Modify(ctx, newPair(typeB, id, 0), func(res resource.Resource) error { setG(res, g); return nil }))
			}
			model[typ][id] = g
		case op < 8: // destroy
			if !exists {
				continue
			}
			if typ == typeA {
				require.NoError(t, st.Destroy(ctx, ptr(typeA, id)))
			} else {
				require.NoError(t, r.Destroy(ctx, ptr(typeB, id)))
			}
			delete(model[typ], id)
			g = ""
		default: // let the Runtime catch up
			synctest.Wait()
			kinds := []resource.Type{typeA, typeB}
			if held {
				kinds = kinds[:1]
			}
			for _, k := range keys {
				for _, kt := range kinds {
					require.Equal(t, want(kt, k), listed(kt, k), "step %d: %s key %s", step, kt, k)
				}
			}
			continue
		}
		if typ == typeB { // read your writes, through the index
			mine := strings.Split(g, ",")
			_, present := model[typeB][id]
			for _, k := range keys {
				require.Equal(t, present && slices.Contains(mine, k), slices.Contains(listed(typeB, k), id),
					"step %d: own write of %s (g=%q) under key %s", step, id, g, k)
			}
		}
	}
}
