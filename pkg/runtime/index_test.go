package runtime_test

import (
	"context"
	"regexp"
	"strings"
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
		assert.True(t, runtime.IsAccessDeniedError(err), "%v", err)

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
