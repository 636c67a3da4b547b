package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// accessFixture: controller "c" with a weak input A, a strong input C, an
// ID-scoped weak input D/only, an exclusive output B and a shared output E;
// controller "other" shares E. X is nobody's.
func accessFixture(t *testing.T) (controller.Runtime, state.State) {
	t.Helper()
	rt, st := newEngine(t)
	c, rts := captureRuntime("c",
		[]controller.Input{in(typeA, controller.InputWeak), in(typeC, controller.InputStrong), inID(typeD, "only", controller.InputWeak)},
		[]controller.Output{out(typeB, controller.OutputExclusive), out(typeE, controller.OutputShared)})
	require.NoError(t, rt.RegisterController(c))
	require.NoError(t, rt.RegisterController(&funcController{name: "other", outputs: []controller.Output{out(typeE, controller.OutputShared)}}))
	for _, r := range []resource.Resource{
		newPair(typeA, "a", 1), newPair(typeC, "c", 1), newPair(typeD, "only", 1), newPair(typeD, "d", 1),
		newPair(typeX, "x", 1), newPair(typeB, "users", 1),
	} {
		mustCreate(t, st, r)
	}
	mustCreate(t, st, newPair(typeE, "theirs", 1), state.WithCreateOwner("other"))
	startEngine(t, rt)
	return recvWithin(t, rts), st
}

func TestC3_C4_C5_RefusedAccess(t *testing.T) {
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
			assert.True(t, IsAccessDeniedError(err), "not an access-denied error: %v", err)
			assert.True(t, controller.IsAccessDeniedError(err), "the contract's predicate tells it too: %v", err)
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

func TestC3_C4_C5_AllowedAccess(t *testing.T) {
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
	assert.False(t, IsAccessDeniedError(err))
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

func TestQ5_C5_QControllerFinalizersOnPrimaryInputsOnly(t *testing.T) {
	t.Parallel()
	rt, st := newEngine(t)
	mustCreate(t, st, newPair(typeA, "p", 1))
	mustCreate(t, st, newPair(typeC, "m", 1))
	results := make(chan [4]error, 1)
	require.NoError(t, rt.RegisterQController(&funcQController{
		name: "q",
		settings: controller.QSettings{
			Inputs:  []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)},
			Outputs: []controller.Output{out(typeB, controller.OutputExclusive)},
		},
		reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
			if p.ID() != "p" {
				return nil
			}
			results <- [4]error{
				r.AddFinalizer(ctx, ptr(typeA, "p"), "q"),
				r.AddFinalizer(ctx, ptr(typeC, "m"), "q"),
				r.Create(ctx, newPair(typeC, "new", 1)),
				r.Create(ctx, newPair(typeB, "out", 1)),
			}
			return nil
		},
	}))
	startEngine(t, rt)
	res := recvWithin(t, results)
	assert.NoError(t, res[0], "finalizer on a primary input")
	assert.True(t, IsAccessDeniedError(res[1]), "finalizer on a mapped input: %v", res[1])
	assert.True(t, IsAccessDeniedError(res[2]), "write to a mapped input: %v", res[2])
	assert.NoError(t, res[3])
	assertOwner(t, st, ptr(typeB, "out"), "q")
}
