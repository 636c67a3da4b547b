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

// TestModifyAllocatesNoOptionsValue: an update by Modify allocates what
// its core's read-only Get, one copy and Update allocate with options made
// once — no options value, option or variadic slice of its own per call
// (the options are applied to a pooled value).
func TestModifyAllocatesNoOptionsValue(t *testing.T) {
	ctx := context.Background()
	core := inmem.NewState()
	st := state.WrapCore(core)
	require.NoError(t, st.Create(ctx, newNum("a", 0), state.WithCreateOwner("o")))
	n := 0
	bump := func(r resource.Resource) error { n++; r.(*num).TypedSpec().N = n; return nil }
	opts := []state.UpdateOption{state.WithUpdateOwner("o"), state.WithExpectedPhase(resource.PhaseRunning)}
	readOnly := []state.GetOption{state.WithReadOnlyGet()}

	byCore := testing.AllocsPerRun(200, func() {
		cur, err := core.Get(ctx, ptrOf("a"), readOnly...)
		require.NoError(t, err)
		upd := cur.DeepCopy()
		require.NoError(t, bump(upd))
		require.NoError(t, core.Update(ctx, upd, opts...))
	})
	empty := newNum("a", 0)
	byModify := testing.AllocsPerRun(200, func() {
		require.NoError(t, st.Modify(ctx, empty, bump, opts...))
	})
	assert.Equal(t, byCore, byModify)
}

// TestModifyStoresACopyOfWhatFnChanged: Modify stores a copy of the
// resource fn changed (rule S7, "writes copy"): fn may keep it, and
// changing it later changes nothing stored; ModifyWithResult returns a
// resource of the caller's own likewise.
func TestModifyStoresACopyOfWhatFnChanged(t *testing.T) {
	t.Setenv("RESGRAPH_MUTATION_DETECTOR", "0") // changing what fn kept is allowed here
	ctx := context.Background()
	st := inmem.NewState()
	require.NoError(t, st.Create(ctx, newNum("a", 0)))
	var kept resource.Resource
	require.NoError(t, st.Modify(ctx, newNum("a", 0), func(r resource.Resource) error {
		kept = r
		r.(*num).TypedSpec().N = 1
		return nil
	}))
	kept.(*num).TypedSpec().N = 99
	cur, err := st.Get(ctx, ptrOf("a"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.NotSame(t, kept, cur, "Modify stores a copy")
	assert.Equal(t, 1, cur.(*num).TypedSpec().N, "what fn kept is its own")
	assert.EqualValues(t, 2, cur.Metadata().Version().Value())

	// So does a Modify that creates the resource.
	require.NoError(t, st.Modify(ctx, newNum("b", 0), func(r resource.Resource) error {
		kept = r
		r.(*num).TypedSpec().N = 1
		return nil
	}))
	kept.(*num).TypedSpec().N = 99
	cur, err = st.Get(ctx, ptrOf("b"))
	require.NoError(t, err)
	assert.Equal(t, 1, cur.(*num).TypedSpec().N, "what fn kept of a create is its own")

	res, err := st.ModifyWithResult(ctx, newNum("a", 0), func(r resource.Resource) error {
		r.(*num).TypedSpec().N = 2
		return nil
	})
	require.NoError(t, err)
	res.(*num).TypedSpec().N = 99
	cur, err = st.Get(ctx, ptrOf("a"))
	require.NoError(t, err)
	assert.Equal(t, 2, cur.(*num).TypedSpec().N, "ModifyWithResult hands back a resource of the caller's")
}

// TestModifyGivenStoresWhatFnChanged: the Runtime's Modify for its
// controllers (ModifyGiven, whose fn gives up what it is handed) stores
// the resource fn changed as is over a core that can keep it (inmem): a
// read-only Get returns that very object, written once.
func TestModifyGivenStoresWhatFnChanged(t *testing.T) {
	ctx := context.Background()
	st := inmem.NewState()
	require.NoError(t, st.Create(ctx, newNum("a", 0)))
	g := givenModifier(t, st)
	var handed resource.Resource
	require.NoError(t, g.ModifyGiven(ctx, newNum("a", 0), func(r resource.Resource) error {
		handed = r
		r.(*num).TypedSpec().N = 1
		return nil
	}))
	cur, err := st.Get(ctx, ptrOf("a"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.Same(t, handed, cur, "ModifyGiven stores the resource fn changed")
	assert.EqualValues(t, 2, cur.Metadata().Version().Value())

	// So does a ModifyGiven that creates the resource.
	require.NoError(t, g.ModifyGiven(ctx, newNum("b", 0), func(r resource.Resource) error {
		handed = r
		r.(*num).TypedSpec().N = 1
		return nil
	}, state.WithUpdateOwner("o")))
	cur, err = st.Get(ctx, ptrOf("b"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.Same(t, handed, cur, "ModifyGiven stores the resource fn filled")
	assert.EqualValues(t, 1, cur.Metadata().Version().Value())
	assert.Equal(t, "o", cur.Metadata().Owner())
}

// TestModifyGivenOverInmemAllocatesTheCopyAlone: an update by the
// Runtime's Modify (ModifyGiven) over the inmem state allocates the copy
// fn changes, nothing more — its options are applied to a pooled value,
// and the core reads and writes without applying options again, and
// stores that copy.
func TestModifyGivenOverInmemAllocatesTheCopyAlone(t *testing.T) {
	t.Setenv("RESGRAPH_MUTATION_DETECTOR", "0") // its reference copies are not the write's
	ctx := context.Background()
	st := inmem.NewState(inmem.WithHistoryCapacity(1))
	g := givenModifier(t, st)
	require.NoError(t, st.Create(ctx, newNum("a", 0), state.WithCreateOwner("o")))
	cur, err := st.Get(ctx, ptrOf("a"))
	require.NoError(t, err)
	byCopy := testing.AllocsPerRun(200, func() { _ = cur.DeepCopy() })
	n := 0
	bump := func(r resource.Resource) error { n++; r.(*num).TypedSpec().N = n; return nil }
	opts := []state.UpdateOption{state.WithUpdateOwner("o")}
	empty := newNum("a", 0)
	byModify := testing.AllocsPerRun(200, func() {
		require.NoError(t, g.ModifyGiven(ctx, empty, bump, opts...))
	})
	assert.Equal(t, byCopy, byModify)
}

// TestFinalizerEditOverInmemAllocatesNoOptions: AddFinalizer and
// RemoveFinalizer over the inmem state allocate what the same edits by
// ModifyGiven allocate (the copy the edit changes, see
// TestModifyGivenOverInmemAllocatesTheCopyAlone): the options of their
// write (the stored owner, any phase) are no option functions when the
// core takes them applied.
func TestFinalizerEditOverInmemAllocatesNoOptions(t *testing.T) {
	t.Setenv("RESGRAPH_MUTATION_DETECTOR", "0") // its reference copies are not the write's
	ctx := context.Background()
	st := inmem.NewState(inmem.WithHistoryCapacity(1))
	g := givenModifier(t, st)
	require.NoError(t, st.Create(ctx, newNum("a", 0), state.WithCreateOwner("o")))
	opts := []state.UpdateOption{state.WithUpdateOwner("o")}
	empty := newNum("a", 0)
	byModify := testing.AllocsPerRun(200, func() {
		require.NoError(t, g.ModifyGiven(ctx, empty, func(r resource.Resource) error {
			r.Metadata().Finalizers().Add("f")
			return nil
		}, opts...))
		require.NoError(t, g.ModifyGiven(ctx, empty, func(r resource.Resource) error {
			r.Metadata().Finalizers().Remove("f")
			return nil
		}, opts...))
	})
	ptr, fins := ptrOf("a"), []resource.Finalizer{"f"} // made once, as opts
	byEdit := testing.AllocsPerRun(200, func() {
		require.NoError(t, st.AddFinalizer(ctx, ptr, fins...))
		require.NoError(t, st.RemoveFinalizer(ctx, ptr, fins...))
	})
	assert.Equal(t, byModify, byEdit)
}

// modifyGiven is the Runtime's Modify of a wrapped state (see ModifyGiven).
type modifyGiven interface {
	ModifyGiven(context.Context, resource.Resource, func(resource.Resource) error, ...state.UpdateOption) error
}

// givenModifier returns st's ModifyGiven; a wrapped core offers it.
func givenModifier(t *testing.T, st state.State) modifyGiven {
	t.Helper()
	g, ok := st.(modifyGiven)
	require.True(t, ok, "a wrapped core offers ModifyGiven")
	return g
}

// TestCreateGivenStoresWhatItIsGiven: CreateGiven (the caller gives the
// resource up) stores that very resource over a core that can keep it
// (inmem), with the owner of its options; over any other core it is a
// Create, which stores a copy.
func TestCreateGivenStoresWhatItIsGiven(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		st    state.State
		given bool
	}{
		{"inmem", inmem.NewState(), true},
		{"a core that copies", state.WrapCore(copyingCore{inmem.NewState()}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, ok := c.st.(interface {
				CreateGiven(context.Context, resource.Resource, ...state.CreateOption) error
			})
			require.True(t, ok, "a wrapped core offers CreateGiven")
			r := newNum("a", 1)
			require.NoError(t, g.CreateGiven(ctx, r, state.WithCreateOwner("o")))
			cur, err := c.st.Get(ctx, ptrOf("a"), state.WithReadOnlyGet())
			require.NoError(t, err)
			if c.given {
				assert.Same(t, r, cur, "stored as given")
			} else {
				assert.NotSame(t, r, cur, "a copy of what was given")
			}
			assert.Equal(t, "o", cur.Metadata().Owner())
			assert.Equal(t, 1, cur.(*num).TypedSpec().N)
		})
	}
}

// copyingCore is a core that offers its Create alone: it cannot keep what
// it is given (it hides inmem's CreateOwned and UpdateOwned).
type copyingCore struct{ state.CoreState }

// TestModifyGivenIntoCopiesIntoTheGivenResource: ModifyGivenInto (the
// caller gives up emptyResource too) makes the copy of the stored resource
// that fn changes in emptyResource's storage, which the core then stores
// (inmem): the stored resource is emptyResource itself. A write that the
// stored resource's phase refuses leaves emptyResource as it was given,
// and so does one refused for its owner.
func TestModifyGivenIntoCopiesIntoTheGivenResource(t *testing.T) {
	ctx := context.Background()
	st := inmem.NewState()
	require.NoError(t, st.Create(ctx, newNum("a", 0), state.WithCreateOwner("o")))
	g, ok := st.(interface {
		ModifyGivenInto(context.Context, resource.Resource, func(resource.Resource) error, ...state.UpdateOption) error
	})
	require.True(t, ok, "a wrapped core offers ModifyGivenInto")
	bump := func(r resource.Resource) error { r.(*num).TypedSpec().N++; return nil }
	owned := []state.UpdateOption{state.WithUpdateOwner("o")}

	empty := newNum("a", 0)
	require.NoError(t, g.ModifyGivenInto(ctx, empty, bump, owned...))
	cur, err := st.Get(ctx, ptrOf("a"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.Same(t, empty, cur, "the copy fn changed is emptyResource's storage")
	assert.Equal(t, 1, cur.(*num).TypedSpec().N)
	assert.EqualValues(t, 2, cur.Metadata().Version().Value())

	// A snapshot (frozen) is never the storage of a copy, even when a
	// caller gives it: the write copies elsewhere.
	require.NoError(t, st.Modify(ctx, newNum("a", 0), bump, owned...))
	require.NoError(t, g.ModifyGivenInto(ctx, cur, bump, owned...))
	assert.Equal(t, 1, cur.(*num).TypedSpec().N, "the snapshot is unchanged")
	now, err := st.Get(ctx, ptrOf("a"), state.WithReadOnlyGet())
	require.NoError(t, err)
	assert.Equal(t, 3, now.(*num).TypedSpec().N)

	_, err = st.Teardown(ctx, ptrOf("a"), state.WithTeardownOwner("o"))
	require.NoError(t, err)
	for _, opts := range [][]state.UpdateOption{owned, {state.WithUpdateOwner("other")}} {
		empty = newNum("a", 42)
		err = g.ModifyGivenInto(ctx, empty, bump, opts...)
		require.True(t, state.IsConflictError(err), "refused: %v", err)
		assert.Equal(t, 42, empty.TypedSpec().N, "emptyResource is as it was given")
		assert.EqualValues(t, 0, empty.Metadata().Version().Value())
	}
}
