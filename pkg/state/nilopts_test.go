package state_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestNilOptionsAreSkipped: every option-taking function of the state
// layer — the State methods of inmem and of WrapCore, and the option
// constructors that take options themselves — treats a nil option as no
// option (issue 14: st.List(ctx, k, nil), st.Create(ctx, r, nil) and
// state.WithLabelQuery(nil) panicked).
func TestNilOptionsAreSkipped(t *testing.T) {
	ctx := t.Context()
	for name, st := range map[string]state.State{
		"inmem":               inmem.NewState(nil, inmem.WithHistoryCapacity(16), nil),
		"WrapCore over inmem": state.WrapCore(inmem.NewState()),
	} {
		t.Run(name, func(t *testing.T) {
			a := newNum("a", 1)
			require.NoError(t, st.Create(ctx, a, nil, state.WithCreateOwner("o"), nil))
			r, err := st.Get(ctx, ptrOf("a"), nil)
			require.NoError(t, err)
			assert.Equal(t, "o", r.Metadata().Owner())
			require.NoError(t, st.Update(ctx, a, nil, state.WithUpdateOwner("o"), nil))
			_, err = st.UpdateWithConflicts(ctx, ptrOf("a"), setN(3), nil, state.WithUpdateOwner("o"))
			require.NoError(t, err)
			require.NoError(t, st.Modify(ctx, newNum("a", 0), func(resource.Resource) error { return nil }, nil, state.WithUpdateOwner("o")))
			_, err = st.ModifyWithResult(ctx, newNum("a", 0), func(resource.Resource) error { return nil }, state.WithUpdateOwner("o"), nil)
			require.NoError(t, err)
			got, err := st.WatchFor(ctx, ptrOf("a"), state.WithCondition(func(resource.Resource) (bool, error) { return true, nil }))
			require.NoError(t, err)
			assert.Equal(t, 3, got.(*num).TypedSpec().N)
			// A WatchFor condition is a required argument, not an option.
			_, err = st.WatchFor(ctx, ptrOf("a"), nil)
			require.True(t, state.IsInvalidError(err), "WatchFor(nil condition): %v", err)
			assert.ErrorContains(t, err, "condition 1 of 1 is nil")
			require.NoError(t, st.AddFinalizer(ctx, ptrOf("a"), "f"))
			_, err = st.Teardown(ctx, ptrOf("a"), nil, state.WithTeardownOwner("o"))
			require.NoError(t, err)
			require.NoError(t, st.RemoveFinalizer(ctx, ptrOf("a"), "f"))
			require.NoError(t, st.TeardownAndDestroy(ctx, ptrOf("a"), nil, state.WithTeardownAndDestroyOwner("o"), nil))

			require.NoError(t, st.Create(ctx, newNum("b", 1)))
			require.NoError(t, st.Destroy(ctx, ptrOf("b"), nil))

			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			require.NoError(t, st.Watch(wctx, ptrOf("a"), make(chan state.Event, 1), nil))
			require.NoError(t, st.Create(ctx, newNum("c", 1)))
			kind := resource.NewKind("default", "Nums.test.resgraph.dev")
			l, err := st.List(ctx, kind, nil, state.WithLabelQuery(nil, nil), state.WithIDQuery(nil), nil)
			require.NoError(t, err)
			assert.Len(t, l.Items, 1)
			require.NoError(t, st.WatchKind(wctx, kind, make(chan state.Event, 1), nil, state.WatchWithLabelQuery(nil), state.WatchWithIDQuery(nil), nil))
			require.NoError(t, st.WatchKindAggregated(wctx, kind, make(chan []state.Event, 1), nil, state.WithBootstrapContents(true), nil))
		})
	}
}

// TestNilOptionsOfQueries: the label and ID query builders skip nil options
// too.
func TestNilOptionsOfQueries(t *testing.T) {
	q := resource.NewLabelQuery(nil, resource.LabelExists("k", nil, resource.NotMatches, nil), nil)
	require.Len(t, q.Terms, 1)
	assert.True(t, q.Terms[0].Invert)
	assert.True(t, resource.NewIDQuery(nil).Matches("anything"))
}

// TestWrapCoreOfNil: a State built on no core reports it on every call
// with an invalid-class error, never a panic.
func TestWrapCoreOfNil(t *testing.T) {
	ctx := t.Context()
	var nilCore *fakeCore
	for _, st := range []state.State{state.WrapCore(nil), state.WrapCore(nilCore)} {
		_, err := st.Get(ctx, ptrOf("a"))
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.EqualError(t, err, "state.WrapCore: nil core")
		assert.True(t, state.IsInvalidError(st.Create(ctx, newNum("a", 1))))
		_, err = st.UpdateWithConflicts(ctx, ptrOf("a"), setN(1))
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.True(t, state.IsInvalidError(st.Modify(ctx, newNum("a", 1), func(resource.Resource) error { return nil })))
		_, err = st.WatchFor(ctx, ptrOf("a"))
		assert.True(t, state.IsInvalidError(err), "%v", err)
		_, err = st.ContextWithTeardown(ctx, ptrOf("a"))
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.True(t, state.IsInvalidError(st.TeardownAndDestroy(ctx, ptrOf("a"))))
		assert.True(t, state.IsInvalidError(st.WatchKind(ctx, resource.NewKind("ns", "t"), make(chan state.Event))))
	}
}
