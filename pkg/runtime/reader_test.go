package runtime_test

import (
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

// TestReader_CopiesUnlessReadOnly: what rule S7 asks of a controller's
// reads (the rule itself is tested on states, in conformance.StateSuite):
// a controller's Get and List return
// private copies, and with WithReadOnlyGet/WithReadOnlyList the state's
// shared snapshots, whether the kind is cached or not; what a controller
// wrote and then changes never reaches what it reads.
func TestReader_CopiesUnlessReadOnly(t *testing.T) {
	for name, opts := range map[string][]runtime.Option{
		"uncached": nil,
		"cached":   {runtime.WithCachedResource(testNS, typeA), runtime.WithCachedResource(testNS, typeB)},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := inmem.NewState()
				ctx := t.Context()
				require.NoError(t, st.Create(ctx, newPair(typeA, "a", 1)))
				c, rts := captureRuntime("c", []controller.Input{in(typeA, controller.InputWeak)}, []controller.Output{out(typeB, controller.OutputExclusive)})
				start(t, runtimetest.WithState(st), runtimetest.WithRuntimeOptions(opts...), runtimetest.WithControllers(c))
				r := <-rts

				snapshot := func() resource.Resource {
					s, err := st.Get(ctx, ptr(typeA, "a"), state.WithReadOnlyGet())
					require.NoError(t, err)
					return s
				}
				// The cache follows the watch, which has caught up: it holds
				// the snapshot.
				ro, err := r.Get(ctx, ptr(typeA, "a"), state.WithReadOnlyGet())
				require.NoError(t, err)
				require.Same(t, snapshot(), ro)

				g1, err := r.Get(ctx, ptr(typeA, "a"))
				require.NoError(t, err)
				g2, err := r.Get(ctx, ptr(typeA, "a"))
				require.NoError(t, err)
				assert.NotSame(t, g1, g2)
				assert.NotSame(t, snapshot(), g1)
				assert.True(t, resource.Equal(snapshot(), g1))

				l, err := r.List(ctx, kind(typeA))
				require.NoError(t, err)
				lro, err := r.List(ctx, kind(typeA), state.WithReadOnlyList())
				require.NoError(t, err)
				require.Len(t, l.Items, 1)
				require.Len(t, lro.Items, 1)
				assert.NotSame(t, snapshot(), l.Items[0])
				assert.Same(t, snapshot(), lro.Items[0])

				// A controller's own write, changed afterwards by the
				// controller, is read as written.
				b := newPair(typeB, "b", 1)
				require.NoError(t, r.Create(ctx, b))
				b.TypedSpec().A = 100
				got, err := r.Get(ctx, ptr(typeB, "b"))
				require.NoError(t, err)
				assert.Equal(t, 1, specA(t, got))
				require.NoError(t, r.Modify(ctx, newPair(typeB, "b", 0), func(res resource.Resource) error {
					res.(*Pair).TypedSpec().A = 2
					return nil
				}))
				got, err = r.Get(ctx, ptr(typeB, "b"), state.WithReadOnlyGet())
				require.NoError(t, err)
				assert.Equal(t, 2, specA(t, got))
				assert.Equal(t, uint64(2), got.Metadata().Version().Value())
			})
		})
	}
}
