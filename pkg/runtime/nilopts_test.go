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

// TestNilOptionsAreSkippedByTheControllerRuntime: a controller's runtime
// treats a nil option (state read options, controller write options) as
// no option, with and without a cached kind, like every option-taking
// function of resgraph (issue 14).
func TestNilOptionsAreSkippedByTheControllerRuntime(t *testing.T) {
	t.Parallel()
	for _, cached := range []bool{false, true} {
		var opts []runtime.Option
		if cached {
			opts = append(opts, runtime.WithCachedResource(testNS, typeB), nil)
		}
		synctest.Test(t, func(t *testing.T) {
			st := inmem.NewState()
			c, rts := captureRuntime("c", []controller.Input{in(typeA, controller.InputWeak)}, []controller.Output{out(typeB, controller.OutputExclusive)})
			mustCreate(t, st, newPair(typeA, "a", 1))
			start(t, runtimetest.WithState(st), runtimetest.WithRuntimeOptions(append(opts, nil)...), runtimetest.WithControllers(c))
			r := <-rts
			ctx := t.Context()

			got, err := r.Get(ctx, ptr(typeA, "a"), nil)
			require.NoError(t, err)
			assert.Equal(t, 1, specA(t, got))
			l, err := r.List(ctx, kind(typeA), nil, state.WithLabelQuery(nil), nil)
			require.NoError(t, err)
			assert.Len(t, l.Items, 1)

			require.NoError(t, r.Create(ctx, newPair(typeB, "b", 1), nil))
			require.NoError(t, r.Modify(ctx, newPair(typeB, "b", 0), func(res resource.Resource) error {
				res.(*Pair).TypedSpec().A = 2
				return nil
			}, nil))
			res, err := r.ModifyWithResult(ctx, newPair(typeB, "b", 0), func(resource.Resource) error { return nil }, nil, controller.WithExpectedPhaseAny(), nil)
			require.NoError(t, err)
			assert.Equal(t, 2, specA(t, res))
			got, err = r.Get(ctx, ptr(typeB, "b"), nil, state.WithReadOnlyGet(), nil)
			require.NoError(t, err)
			assert.Equal(t, "c", got.Metadata().Owner(), "a nil option does not drop the owner")
			_, err = r.Teardown(ctx, ptr(typeB, "b"), nil)
			require.NoError(t, err)
			require.NoError(t, r.Destroy(ctx, ptr(typeB, "b"), nil))
			_, err = st.Get(ctx, ptr(typeB, "b"))
			assert.True(t, state.IsNotFoundError(err), "%v", err)
		})
	}
}
