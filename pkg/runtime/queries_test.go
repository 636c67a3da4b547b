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

// TestS15_ControllerListSelectsTheUnion: a controller's List with several
// label queries selects their union whether the kind is cached (the
// Runtime's cache evaluates the queries) or not, and a query with an
// unusable term is refused with an invalid-class error before anything
// is read.
func TestS15_ControllerListSelectsTheUnion(t *testing.T) {
	for name, opts := range map[string][]runtime.Option{
		"uncached": nil,
		"cached":   {runtime.WithCachedResource(testNS, typeA)},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := inmem.NewState()
				ctx := t.Context()
				for i, app := range []string{"web", "db", "cache", ""} {
					r := newPair(typeA, string(rune('a'+i)), i)
					if app != "" {
						r.Metadata().Labels().Set("app", app)
					}
					r.Metadata().Labels().Set("n", string(rune('0'+i)))
					require.NoError(t, st.Create(ctx, r))
				}
				c, rts := captureRuntime("c", []controller.Input{in(typeA, controller.InputWeak)}, nil)
				start(t, runtimetest.WithState(st), runtimetest.WithRuntimeOptions(opts...), runtimetest.WithControllers(c))
				r := <-rts

				list := func(opts ...state.ListOption) []string {
					l, err := r.List(ctx, kind(typeA), opts...)
					require.NoError(t, err)
					var ids []string
					for _, res := range l.Items {
						ids = append(ids, res.Metadata().ID())
					}
					return ids
				}
				assert.Equal(t, []string{"a", "b"}, list(
					state.WithLabelQuery(resource.LabelEqual("app", "web")),
					state.WithLabelQuery(resource.LabelEqual("app", "db"))))
				assert.Equal(t, []string{"a", "c", "d"}, list(state.WithReadOnlyList(),
					state.WithLabelQuery(resource.LabelLTNumeric("n", "1")),
					state.WithLabelQuery(resource.LabelLTENumeric("n", "1", resource.NotMatches))),
					"numeric ranges: n < 1 or n > 1")

				l, err := r.List(ctx, kind(typeA), state.WithLabelQuery(resource.LabelLTNumeric("n", "one")))
				assert.True(t, state.IsInvalidError(err), "%v", err)
				assert.ErrorIs(t, err, resource.ErrBadLabelQuery)
				assert.Empty(t, l.Items)
			})
		})
	}
}
