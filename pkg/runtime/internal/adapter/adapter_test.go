package adapter_test

import (
	"context"
	"testing"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// The adapter is what rules C3, C4, C5 and C8 ask of a controller's
// runtime; conformance.RuntimeSuite checks those rules through any Runtime.
// These tests check the adapter itself, call by call: the exact refusals
// (operation, target, class), the owner of every write, the cleanup of
// untracked outputs.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testNS = "test"

const (
	typeA = "As.test.resgraph.dev"
	typeB = "Bs.test.resgraph.dev"
	typeC = "Cs.test.resgraph.dev"
	typeD = "Ds.test.resgraph.dev"
	typeE = "Es.test.resgraph.dev"
	typeX = "Xs.test.resgraph.dev"
)

type PairSpec struct{ A, B int }

type pairDef struct{}

func (pairDef) Definition() typed.Definition {
	return typed.Definition{Type: typeA, DefaultNamespace: testNS}
}

type Pair = typed.Resource[PairSpec, pairDef]

func newPair(typ resource.Type, id resource.ID, a int) *Pair {
	return typed.New[PairSpec, pairDef](resource.NewMetadata(testNS, typ, id, resource.VersionUndefined), PairSpec{A: a})
}

func ptr(typ resource.Type, id resource.ID) resource.Pointer {
	return resource.NewPointer(testNS, typ, id)
}

func kind(typ resource.Type) resource.Kind { return resource.NewKind(testNS, typ) }

func in(typ resource.Type, k controller.InputKind) controller.Input {
	return controller.Input{Namespace: testNS, Type: typ, Kind: k}
}

func out(typ resource.Type, k controller.OutputKind) controller.Output {
	return controller.Output{Type: typ, Kind: k}
}

func mustCreate(t testing.TB, st state.State, r resource.Resource, opts ...state.CreateOption) {
	t.Helper()
	require.NoError(t, st.Create(context.Background(), r, opts...))
}

// newAdapter returns the adapter of a Controller named name over st, with
// output tracking.
func newAdapter(st state.State, name string, inputs []controller.Input, outputs []controller.Output) *adapter.Adapter {
	return adapter.New(st, nil, name, adapter.NewAccess(inputs, nil, outputs), nil, true)
}

// accessFixture: controller "c" with a weak input A, a strong input C, an
// ID-scoped weak input D/only, an exclusive output B and a shared output E;
// controller "other" shares E (it wrote E/theirs). X is nobody's.
func accessFixture(t *testing.T) (*adapter.Adapter, state.State) {
	t.Helper()
	st := inmem.NewState()
	only := in(typeD, controller.InputWeak)
	only.ID = optional.Some[resource.ID]("only")
	a := newAdapter(st, "c",
		[]controller.Input{in(typeA, controller.InputWeak), in(typeC, controller.InputStrong), only},
		[]controller.Output{out(typeB, controller.OutputExclusive), out(typeE, controller.OutputShared)})
	for _, r := range []resource.Resource{
		newPair(typeA, "a", 1), newPair(typeC, "c", 1), newPair(typeD, "only", 1), newPair(typeD, "d", 1),
		newPair(typeX, "x", 1), newPair(typeB, "users", 1),
	} {
		mustCreate(t, st, r)
	}
	mustCreate(t, st, newPair(typeE, "theirs", 1), state.WithCreateOwner("other"))
	return a, st
}

// TestAccess_RefusedCallsWriteNothing: every call outside the scope (rules
// C3, C5, C8) is refused with an access-denied error naming the controller,
// the operation and the resource, and writes nothing.
func TestAccess_RefusedCallsWriteNothing(t *testing.T) {
	t.Parallel()
	r, st := accessFixture(t)
	ctx := context.Background()
	noop := func(resource.Resource) error { return nil }

	for _, tc := range []struct {
		call   func() error
		name   string
		op     string
		target string
	}{
		{name: "C3 Get of an undeclared kind", op: "Get", target: "Xs.test.resgraph.dev(test/x)",
			call: func() error { _, err := r.Get(ctx, ptr(typeX, "x")); return err }},
		{name: "C3 Get of an undeclared namespace", op: "Get", target: "As.test.resgraph.dev(elsewhere/a)",
			call: func() error { _, err := r.Get(ctx, resource.NewPointer("elsewhere", typeA, "a")); return err }},
		{name: "C3 Get of another ID of an ID-scoped input", op: "Get", target: "Ds.test.resgraph.dev(test/d)",
			call: func() error { _, err := r.Get(ctx, ptr(typeD, "d")); return err }},
		{name: "C3 List of an ID-scoped input", op: "List", target: "Ds.test.resgraph.dev(test)",
			call: func() error { _, err := r.List(ctx, kind(typeD)); return err }},
		{name: "C3 List of an undeclared kind", op: "List", target: "Xs.test.resgraph.dev(test)",
			call: func() error { _, err := r.List(ctx, kind(typeX)); return err }},
		{name: "C3 ContextWithTeardown of an undeclared kind", op: "ContextWithTeardown", target: "Xs.test.resgraph.dev(test/x)",
			call: func() error { _, err := r.ContextWithTeardown(ctx, ptr(typeX, "x")); return err }},
		{name: "C3 Create of an input", op: "Create", target: "As.test.resgraph.dev(test/new)",
			call: func() error { return r.Create(ctx, newPair(typeA, "new", 1)) }},
		{name: "C3 Create of an undeclared kind", op: "Create", target: "Xs.test.resgraph.dev(test/new)",
			call: func() error { return r.Create(ctx, newPair(typeX, "new", 1)) }},
		{name: "C3 Update of an input", op: "Update", target: "As.test.resgraph.dev(test/a)",
			call: func() error {
				cur, err := st.Get(ctx, ptr(typeA, "a"))
				require.NoError(t, err)
				cur.(*Pair).TypedSpec().A = 9
				return r.Update(ctx, cur)
			}},
		{name: "C3 Modify of an input", op: "Modify", target: "As.test.resgraph.dev(test/a)",
			call: func() error {
				return r.Modify(ctx, newPair(typeA, "a", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 9; return nil })
			}},
		{name: "C3 ModifyWithResult of an undeclared kind", op: "ModifyWithResult", target: "Xs.test.resgraph.dev(test/x)",
			call: func() error { _, err := r.ModifyWithResult(ctx, newPair(typeX, "x", 0), noop); return err }},
		{name: "C3 Teardown of an input", op: "Teardown", target: "As.test.resgraph.dev(test/a)",
			call: func() error { _, err := r.Teardown(ctx, ptr(typeA, "a")); return err }},
		{name: "C3 Destroy of an input", op: "Destroy", target: "Cs.test.resgraph.dev(test/c)",
			call: func() error { return r.Destroy(ctx, ptr(typeC, "c")) }},
		{name: "C3 Destroy of an input as its owner", op: "Destroy", target: "As.test.resgraph.dev(test/a)",
			call: func() error { return r.Destroy(ctx, ptr(typeA, "a"), controller.WithOwner("")) }},
		{name: "C5 AddFinalizer on a weak input", op: "AddFinalizer", target: "As.test.resgraph.dev(test/a)",
			call: func() error { return r.AddFinalizer(ctx, ptr(typeA, "a"), "f") }},
		{name: "C5 RemoveFinalizer on a weak input", op: "RemoveFinalizer", target: "As.test.resgraph.dev(test/a)",
			call: func() error { return r.RemoveFinalizer(ctx, ptr(typeA, "a"), "f") }},
		{name: "C5 AddFinalizer on an undeclared kind", op: "AddFinalizer", target: "Xs.test.resgraph.dev(test/x)",
			call: func() error { return r.AddFinalizer(ctx, ptr(typeX, "x"), "f") }},
		{name: "C5 AddFinalizer on an output owned by nobody", op: "AddFinalizer", target: "Bs.test.resgraph.dev(test/users)",
			call: func() error { return r.AddFinalizer(ctx, ptr(typeB, "users"), "f") }},
		{name: "C5 AddFinalizer on a shared output owned by another", op: "AddFinalizer", target: "Es.test.resgraph.dev(test/theirs)",
			call: func() error { return r.AddFinalizer(ctx, ptr(typeE, "theirs"), "f") }},
		{name: "C8 CleanupOutputs of an input", op: "CleanupOutputs", target: "As.test.resgraph.dev(test)",
			call: func() error { return r.CleanupOutputs(ctx, kind(typeA)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshotState(t, st)
			err := tc.call()
			require.Error(t, err)
			assert.True(t, controller.IsAccessDeniedError(err), "not an access-denied error: %v", err)
			assert.Contains(t, err.Error(), `controller "c"`)
			assert.Contains(t, err.Error(), tc.op)
			assert.Contains(t, err.Error(), tc.target)
			assert.Equal(t, before, snapshotState(t, st), "a refused access wrote something")
		})
	}
}

// snapshotState returns "kind/id@version phase finalizers" of every test
// resource.
func snapshotState(t *testing.T, st state.State) []string {
	t.Helper()
	var out []string
	for _, typ := range []resource.Type{typeA, typeB, typeC, typeD, typeE, typeX} {
		l, err := st.List(context.Background(), kind(typ))
		require.NoError(t, err)
		for _, r := range l.Items {
			out = append(out, r.Metadata().String())
		}
	}
	return out
}

// TestAccess_AllowedCalls: reads of inputs and outputs, writes of outputs
// as the controller (or as nobody, or as WithOwner's owner), finalizers on
// strong inputs and own outputs (rules C3, C4, C5); bad arguments are
// invalid, not refused.
func TestAccess_AllowedCalls(t *testing.T) {
	t.Parallel()
	r, st := accessFixture(t)
	ctx := context.Background()

	// C3: reads of inputs and own output types.
	_, err := r.Get(ctx, ptr(typeA, "a"))
	assert.NoError(t, err)
	_, err = r.Get(ctx, ptr(typeD, "only"))
	assert.NoError(t, err, "the ID of an ID-scoped input")
	l, err := r.List(ctx, kind(typeA))
	require.NoError(t, err)
	assert.Len(t, l.Items, 1)
	_, err = r.Get(ctx, resource.NewPointer("elsewhere", typeB, "none"))
	assert.True(t, state.IsNotFoundError(err), "outputs are readable in any namespace: %v", err)
	_, err = r.List(ctx, kind(typeE))
	assert.NoError(t, err)
	wctx, cancel := context.WithCancel(ctx)
	tctx, err := r.ContextWithTeardown(wctx, ptr(typeA, "a"))
	require.NoError(t, err)
	assert.NoError(t, tctx.Err())
	cancel()

	// C4: writes carry the controller's name.
	require.NoError(t, r.Create(ctx, newPair(typeB, "mine", 1)))
	assertOwner(t, st, ptr(typeB, "mine"), "c")
	require.NoError(t, r.Create(ctx, newPair(typeB, "unowned", 1), controller.WithCreateNoOwner()))
	assertOwner(t, st, ptr(typeB, "unowned"), "")
	require.NoError(t, r.Modify(ctx, newPair(typeE, "modified", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 3; return nil }))
	assertOwner(t, st, ptr(typeE, "modified"), "c")
	res, err := r.ModifyWithResult(ctx, newPair(typeB, "nobody", 0), func(r resource.Resource) error { return nil }, controller.WithModifyNoOwner())
	require.NoError(t, err)
	assert.Equal(t, "", res.Metadata().Owner())
	cur, err := st.Get(ctx, ptr(typeB, "mine"))
	require.NoError(t, err)
	cur.(*Pair).TypedSpec().A = 5
	require.NoError(t, r.Update(ctx, cur))
	assertOwner(t, st, ptr(typeB, "mine"), "c")

	// C4: a shared output another controller wrote is an owner conflict.
	err = r.Modify(ctx, newPair(typeE, "theirs", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 7; return nil })
	assert.True(t, state.IsOwnerConflictError(err), "%v", err)
	assert.False(t, controller.IsAccessDeniedError(err))
	err = r.Destroy(ctx, ptr(typeE, "theirs"))
	assert.True(t, state.IsOwnerConflictError(err), "%v", err)
	// Creating it is an owner conflict too (and still a conflict: it
	// exists); creating an existing resource of one's own is a plain
	// conflict.
	before := snapshotState(t, st)
	err = r.Create(ctx, newPair(typeE, "theirs", 9))
	assert.True(t, state.IsOwnerConflictError(err), "%v", err)
	assert.True(t, state.IsConflictError(err), "%v", err)
	assert.Contains(t, err.Error(), `"other"`, "the error names the owner")
	err = r.Create(ctx, newPair(typeE, "theirs", 9), controller.WithCreateNoOwner())
	assert.True(t, state.IsOwnerConflictError(err), "%v", err)
	err = r.Create(ctx, newPair(typeB, "mine", 9))
	assert.True(t, state.IsConflictError(err), "%v", err)
	assert.False(t, state.IsOwnerConflictError(err), "%v", err)
	assert.Equal(t, before, snapshotState(t, st), "a refused Create wrote something")

	// WithOwner acts for another owner.
	ready, err := r.Teardown(ctx, ptr(typeB, "users"), controller.WithOwner(""))
	require.NoError(t, err)
	assert.True(t, ready)
	require.NoError(t, r.Destroy(ctx, ptr(typeB, "users"), controller.WithOwner("")))

	// C5: finalizers on strong inputs and own outputs.
	require.NoError(t, r.AddFinalizer(ctx, ptr(typeC, "c"), "f"))
	require.NoError(t, r.RemoveFinalizer(ctx, ptr(typeC, "c"), "f"))
	require.NoError(t, r.AddFinalizer(ctx, ptr(typeB, "mine"), "f"))
	got, err := st.Get(ctx, ptr(typeB, "mine"))
	require.NoError(t, err)
	assert.True(t, got.Metadata().Finalizers().Has("f"))
	require.NoError(t, r.RemoveFinalizer(ctx, ptr(typeB, "mine"), "f"))

	// Bad arguments are invalid, not access errors.
	_, err = r.Get(ctx, nil)
	assert.True(t, state.IsInvalidError(err))
	err = r.Create(ctx, nil)
	assert.True(t, state.IsInvalidError(err))
	err = r.Create(ctx, (*Pair)(nil))
	assert.True(t, state.IsInvalidError(err))
}

func assertOwner(t *testing.T, st state.State, p resource.Pointer, owner string) {
	t.Helper()
	r, err := st.Get(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, owner, r.Metadata().Owner())
}

// TestAccess_QControllerFinalizersOnPrimaryInputsOnly: a QController may
// put finalizers on its primary inputs, not on its mapped ones, and writes
// only its outputs, as itself (rules C3, C4, C5 for QControllers).
func TestAccess_QControllerFinalizersOnPrimaryInputsOnly(t *testing.T) {
	t.Parallel()
	st := inmem.NewState()
	mustCreate(t, st, newPair(typeA, "p", 1))
	mustCreate(t, st, newPair(typeC, "m", 1))
	r := adapter.New(st, nil, "q", adapter.NewAccess(
		[]controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)}, nil,
		[]controller.Output{out(typeB, controller.OutputExclusive)}), nil, false)
	ctx := context.Background()
	assert.NoError(t, r.AddFinalizer(ctx, ptr(typeA, "p"), "q"), "finalizer on a primary input")
	err := r.AddFinalizer(ctx, ptr(typeC, "m"), "q")
	assert.True(t, controller.IsAccessDeniedError(err), "finalizer on a mapped input: %v", err)
	err = r.Create(ctx, newPair(typeC, "new", 1))
	assert.True(t, controller.IsAccessDeniedError(err), "write to a mapped input: %v", err)
	assert.NoError(t, r.Create(ctx, newPair(typeB, "out", 1)))
	assertOwner(t, st, ptr(typeB, "out"), "q")
}

// TestCleanupOutputs: CleanupOutputs refuses to run before
// StartTrackingOutputs, then tears down and destroys the controller's
// outputs of the kinds given that were not written since (a Modify that
// changed nothing counts as written), leaves others' resources alone,
// leaves an output with finalizers tearing down and destroys it at a later
// cleanup once they are gone, and refuses kinds that are not outputs.
func TestCleanupOutputs(t *testing.T) {
	t.Parallel()
	st := inmem.NewState()
	r := newAdapter(st, "c", nil, []controller.Output{out(typeB, controller.OutputExclusive)})
	ctx := context.Background()

	for _, id := range []string{"keep", "modified", "gone", "fin"} {
		require.NoError(t, r.Create(ctx, newPair(typeB, id, 1)))
	}
	mustCreate(t, st, newPair(typeB, "users", 1)) // not owned by c
	require.NoError(t, st.AddFinalizer(ctx, ptr(typeB, "fin"), "hold"))

	err := r.CleanupOutputs(ctx, kind(typeB))
	assert.True(t, state.IsInvalidError(err), "CleanupOutputs before StartTrackingOutputs")

	r.StartTrackingOutputs()
	keep, err := st.Get(ctx, ptr(typeB, "keep"))
	require.NoError(t, err)
	keep.(*Pair).TypedSpec().A = 2
	require.NoError(t, r.Update(ctx, keep))
	require.NoError(t, r.Modify(ctx, newPair(typeB, "modified", 0), func(r resource.Resource) error {
		return nil // unchanged: counts as written
	}))
	require.NoError(t, r.CleanupOutputs(ctx, kind(typeB)))

	for _, id := range []string{"keep", "modified", "users"} {
		_, err := st.Get(ctx, ptr(typeB, id))
		assert.NoError(t, err, id)
	}
	_, err = st.Get(ctx, ptr(typeB, "gone"))
	assert.True(t, state.IsNotFoundError(err), "an unwritten output is destroyed")
	fin, err := st.Get(ctx, ptr(typeB, "fin"))
	require.NoError(t, err, "an output with finalizers stays")
	assert.Equal(t, resource.PhaseTearingDown, fin.Metadata().Phase())

	// Once the finalizers are gone, the next cleanup destroys it.
	require.NoError(t, st.RemoveFinalizer(ctx, ptr(typeB, "fin"), "hold"))
	r.StartTrackingOutputs()
	require.NoError(t, r.Modify(ctx, newPair(typeB, "keep", 0), func(resource.Resource) error { return nil }))
	require.NoError(t, r.Modify(ctx, newPair(typeB, "modified", 0), func(resource.Resource) error { return nil }))
	require.NoError(t, r.CleanupOutputs(ctx, kind(typeB)))
	_, err = st.Get(ctx, ptr(typeB, "fin"))
	assert.True(t, state.IsNotFoundError(err))
	_, err = st.Get(ctx, ptr(typeB, "keep"))
	assert.NoError(t, err)

	err = r.CleanupOutputs(ctx, kind(typeA))
	assert.True(t, controller.IsAccessDeniedError(err), "cleanup of a kind that is not an output")
}
