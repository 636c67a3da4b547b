package etcd_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// readsOf runs writes on a new state at prefix (with opts) through a
// logging client and returns how many reads (Range RPCs) they sent.
func readsOf(t *testing.T, prefix string, writes func(st state.State), opts ...etcd.Option) int64 {
	t.Helper()
	cli, log := loggingClient(t)
	st, err := etcd.New(context.Background(), cli, registry(), append([]etcd.Option{etcd.WithPrefix(prefix)}, opts...)...)
	require.NoError(t, err)
	log.take()
	writes(st)
	by, _ := log.take()
	return int64(by["/etcdserverpb.KV/Range"])
}

// TestWriteMemory_WritesOfKnownKeysReadNothing: without a watch, an
// Update or Destroy of a key the state wrote, or read with Get, is one
// transaction with no read before it; with the memory off
// (WithWriteMemory(0)) each reads first, so the count measures it.
func TestWriteMemory_WritesOfKnownKeysReadNothing(t *testing.T) {
	ctx := testCtx(t)
	ns := resource.Namespace("mem")
	churn := func(st state.State) {
		r := conformance.NewIntResource(ns, "a", 1)
		require.NoError(t, st.Create(ctx, r))
		for v := 2; v < 5; v++ {
			r.TypedSpec().Value = v
			require.NoError(t, st.Update(ctx, r))
		}
		require.NoError(t, st.AddFinalizer(ctx, r.Metadata(), "f"))
		require.NoError(t, st.RemoveFinalizer(ctx, r.Metadata(), "f"))
		require.NoError(t, st.Destroy(ctx, r.Metadata()))
	}
	// AddFinalizer and RemoveFinalizer Get the resource (one read each)
	// and Update it with no read of its own.
	require.Equal(t, int64(2), readsOf(t, newPrefix(), churn))
	require.Equal(t, int64(2+3+2+1), readsOf(t, newPrefix(), churn, etcd.WithWriteMemory(0)))

	// A key written by another state: its Get is the only read.
	prefix := newPrefix()
	other := newStateAt(t, prefix)
	require.NoError(t, other.Create(ctx, conformance.NewIntResource(ns, "b", 1)))
	require.Equal(t, int64(1), readsOf(t, prefix, func(st state.State) {
		got, err := st.Get(ctx, conformance.NewIntResource(ns, "b", 0).Metadata())
		require.NoError(t, err)
		got.(*conformance.IntResource).TypedSpec().Value = 2
		require.NoError(t, st.Update(ctx, got))
	}))
}

// TestWriteMemory_IsBounded: a memory of one key forgets the first of two
// created keys, so that updating both reads twice (each update reads the
// key the other evicted); a larger memory reads neither.
func TestWriteMemory_IsBounded(t *testing.T) {
	ctx := testCtx(t)
	ns := resource.Namespace("mem")
	two := func(st state.State) {
		a, b := conformance.NewIntResource(ns, "a", 1), conformance.NewIntResource(ns, "b", 1)
		require.NoError(t, st.Create(ctx, a))
		require.NoError(t, st.Create(ctx, b))
		require.NoError(t, st.Update(ctx, a))
		require.NoError(t, st.Update(ctx, b))
	}
	require.Equal(t, int64(2), readsOf(t, newPrefix(), two, etcd.WithWriteMemory(1)))
	require.Equal(t, int64(0), readsOf(t, newPrefix(), two, etcd.WithWriteMemory(2)))
}

// TestWriteMemory_OutOfDateReportsAsARead: when another state wrote a key
// since this state remembered it, an Update or Destroy from the memory's
// copy fails with the same error, of the same class, as the same call on a
// state that reads first (version, owner, phase, finalizers), and a write
// that is valid on the current value succeeds.
func TestWriteMemory_OutOfDateReportsAsARead(t *testing.T) {
	ctx := testCtx(t)
	prefix := newPrefix()
	ns := resource.Namespace("mem")
	st := newStateAt(t, prefix)
	other := newStateAt(t, prefix)
	reads := newStateAt(t, prefix, etcd.WithWriteMemory(0))
	r := conformance.NewIntResource(ns, "a", 1)
	require.NoError(t, st.Create(ctx, r))
	stale := r.DeepCopy().(*conformance.IntResource)

	same := func(call func(s state.State) error) error {
		t.Helper()
		want := call(reads)
		require.Error(t, want)
		got := call(st)
		require.EqualError(t, got, want.Error())
		require.Equal(t, state.IsConflictError(want), state.IsConflictError(got))
		require.Equal(t, state.IsOwnerConflictError(want), state.IsOwnerConflictError(got))
		require.Equal(t, state.IsPhaseConflictError(want), state.IsPhaseConflictError(got))
		require.Equal(t, state.IsPendingFinalizersError(want), state.IsPendingFinalizersError(got))
		return got
	}
	// Version: the other state updated the key.
	r.TypedSpec().Value = 2
	require.NoError(t, other.Update(ctx, r))
	require.True(t, state.IsConflictError(same(func(s state.State) error { return s.Update(ctx, stale.DeepCopy()) })))
	// Finalizers: the other state added one.
	require.NoError(t, other.AddFinalizer(ctx, r.Metadata(), "f"))
	require.True(t, state.IsPendingFinalizersError(same(func(s state.State) error { return s.Destroy(ctx, r.Metadata()) })))
	// Phase: the other state tore it down.
	_, err := other.Teardown(ctx, r.Metadata())
	require.NoError(t, err)
	cur, err := other.Get(ctx, r.Metadata())
	require.NoError(t, err)
	require.True(t, state.IsPhaseConflictError(same(func(s state.State) error { return s.Update(ctx, cur.DeepCopy()) })))
	// Owner: the other state recreated it with an owner.
	require.NoError(t, other.RemoveFinalizer(ctx, r.Metadata(), "f"))
	require.NoError(t, other.Destroy(ctx, r.Metadata()))
	require.NoError(t, other.Create(ctx, conformance.NewIntResource(ns, "a", 3), state.WithCreateOwner("o")))
	require.True(t, state.IsOwnerConflictError(same(func(s state.State) error { return s.Destroy(ctx, r.Metadata()) })))
	// Valid on the current value: succeeds, and remembers the new value.
	cur, err = other.Get(ctx, r.Metadata())
	require.NoError(t, err)
	require.NoError(t, st.Update(ctx, cur, state.WithUpdateOwner("o")))
	require.NoError(t, st.Destroy(ctx, cur.Metadata(), state.WithDestroyOwner("o")))
}
