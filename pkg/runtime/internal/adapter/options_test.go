package adapter_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestWritesMakeNoOptions: a controller's writes through the adapter
// allocate what the state's own writes with the same options allocate —
// the adapter makes no option value (nor variadic slice) per call, with
// or without options of the controller, and applying them allocates no
// phase. Each write changes the resource. (A controller's Modify is the
// state's ModifyGiven: its fn keeps nothing it is handed.)
func TestWritesMakeNoOptions(t *testing.T) {
	ctx := context.Background()
	st := inmem.NewState()
	given := st.(interface {
		ModifyGiven(context.Context, resource.Resource, func(resource.Resource) error, ...state.UpdateOption) error
	})
	a := adapter.New(st, cache.NewSet(nil), "c", adapter.NewAccess(nil, nil,
		[]controller.Output{out(typeB, controller.OutputShared)}), nil, false)
	require.NoError(t, a.Create(ctx, newPair(typeB, "b", 0)))
	require.NoError(t, st.Create(ctx, newPair(typeB, "free", 0)))
	n := 0
	bump := func(r resource.Resource) error { n++; r.(*Pair).TypedSpec().A = n; return nil }

	// An expected phase that allocates nothing when applied (as
	// state.WithExpectedPhase does: a phase of its own each time).
	running := resource.PhaseRunning
	expectRunning := func(o *state.UpdateOptions) { o.ExpectedPhase = &running }
	owned := []state.UpdateOption{state.WithUpdateOwner("c"), expectRunning}
	byState := testing.AllocsPerRun(200, func() {
		require.NoError(t, given.ModifyGiven(ctx, newPair(typeB, "b", 0), bump, owned...))
	})
	byAdapter := testing.AllocsPerRun(200, func() {
		require.NoError(t, a.Modify(ctx, newPair(typeB, "b", 0), bump))
	})
	assert.Equal(t, byState, byAdapter, "Modify: the state's allocations with options made once, the adapter's")

	free := []state.UpdateOption{state.WithUpdateOwner(""), state.WithExpectedPhaseAny()}
	byState = testing.AllocsPerRun(200, func() {
		require.NoError(t, given.ModifyGiven(ctx, newPair(typeB, "free", 0), bump, free...))
	})
	byAdapter = testing.AllocsPerRun(200, func() {
		require.NoError(t, a.Modify(ctx, newPair(typeB, "free", 0), bump, controller.WithModifyNoOwner(), controller.WithExpectedPhaseAny()))
	})
	// The controller's own options are applied to options of their own:
	// the options and the phase they point to.
	assert.Equal(t, byState+2, byAdapter, "Modify with options: the state's allocations with options made once, the adapter's")

	var cur *Pair
	updateOpts := []state.UpdateOption{state.WithUpdateOwner("c")}
	update := func(update func(r resource.Resource) error) float64 {
		return testing.AllocsPerRun(200, func() {
			r, err := st.Get(ctx, ptr(typeB, "b"))
			require.NoError(t, err)
			cur = r.(*Pair)
			cur.TypedSpec().A++
			require.NoError(t, update(cur))
		})
	}
	byState = update(func(r resource.Resource) error { return st.Update(ctx, r, updateOpts...) })
	byAdapter = update(func(r resource.Resource) error { return a.Update(ctx, r) })
	assert.Equal(t, byState, byAdapter, "Update: the state's allocations with options made once, the adapter's")
}

// TestCreateGivenStoresTheResourceItself: a generic controller's Create of
// an output it made for the write (CreateGiven: the caller gives the
// resource up) stores that very resource over a state that can keep it
// (inmem), owned by the controller and stamped; the controller's own
// Create stores a copy (rule S7: the caller keeps what it passed).
func TestCreateGivenStoresTheResourceItself(t *testing.T) {
	ctx := context.Background()
	st := inmem.NewState()
	a := adapter.New(st, cache.NewSet(nil), "c", adapter.NewAccess(nil, nil,
		[]controller.Output{out(typeB, controller.OutputShared)}), nil, false)

	given := newPair(typeB, "given", 1)
	require.NoError(t, a.CreateGiven(ctx, given))
	cur, err := st.Get(ctx, ptr(typeB, "given"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.Same(t, given, cur, "CreateGiven stores the resource it is given")
	assert.Equal(t, "c", cur.Metadata().Owner())
	assert.EqualValues(t, 1, cur.Metadata().Version().Value())

	kept := newPair(typeB, "kept", 1)
	require.NoError(t, a.Create(ctx, kept))
	cur, err = st.Get(ctx, ptr(typeB, "kept"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.NotSame(t, kept, cur, "Create stores a copy")

	// A conflict is the Create's: nothing is stored, the existing
	// resource is kept.
	again := newPair(typeB, "given", 2)
	require.True(t, state.IsConflictError(a.CreateGiven(ctx, again)))
	cur, err = st.Get(ctx, ptr(typeB, "given"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.Same(t, given, cur)
}

// TestModifyGivenWritesIntoTheGivenResource: a generic controller's Modify
// of an output it made for the write (ModifyGiven: the caller gives
// emptyResource up) makes the copy fn changes in that resource over a
// state that can (inmem): the stored output is emptyResource itself. The
// controller's own Modify never stores its emptyResource.
func TestModifyGivenWritesIntoTheGivenResource(t *testing.T) {
	ctx := context.Background()
	st := inmem.NewState()
	a := adapter.New(st, cache.NewSet(nil), "c", adapter.NewAccess(nil, nil,
		[]controller.Output{out(typeB, controller.OutputShared)}), nil, false)
	require.NoError(t, a.Create(ctx, newPair(typeB, "b", 0)))
	bump := func(r resource.Resource) error { r.(*Pair).TypedSpec().A++; return nil }

	empty := newPair(typeB, "b", 0)
	require.NoError(t, a.ModifyGiven(ctx, empty, bump))
	cur, err := st.Get(ctx, ptr(typeB, "b"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.Same(t, empty, cur, "ModifyGiven writes into the resource it is given")
	assert.Equal(t, 1, cur.(*Pair).TypedSpec().A)
	assert.Equal(t, "c", cur.Metadata().Owner())

	kept := newPair(typeB, "b", 0)
	require.NoError(t, a.Modify(ctx, kept, bump))
	cur, err = st.Get(ctx, ptr(typeB, "b"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.NotSame(t, kept, cur, "Modify keeps the controller's emptyResource its own")
	assert.Equal(t, 2, cur.(*Pair).TypedSpec().A)
	assert.Equal(t, 0, kept.TypedSpec().A)
}

// TestItemStartedAllocatesNothingWithoutALog: a QController item's run
// starts (ItemStarted) without an allocation while no CommitLog and no
// simulator's scheduler is set — the context is handed back as it is,
// and the item's pointer is not boxed on the way in.
func TestItemStartedAllocatesNothingWithoutALog(t *testing.T) {
	ctx := context.Background()
	a := adapter.New(inmem.NewState(), cache.NewSet(nil), "c", adapter.NewAccess(nil, nil, nil), nil, false)
	item := resource.PointerOf(ptr(typeB, "b"))
	var got context.Context
	allocs := testing.AllocsPerRun(200, func() { got = a.ItemStarted(ctx, item) })
	assert.Zero(t, allocs, "allocations per ItemStarted")
	assert.Equal(t, ctx, got, "the context as it was")
}
