package boltdb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/internal/fixture/family"
	"github.com/resgraph/resgraph/pkg/internal/lagwatch"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// familyRegistry knows the family's types (the reproduction of issue
// 18: package family).
func familyRegistry() *codec.Registry {
	reg := codec.NewRegistry()
	family.Register(reg)
	return reg
}

// TestQ4_DestroyedChildKeepsItsLabelsAcrossARestart is the reproduction of
// issue 18 on a persistent state, with a restart in the middle: a child
// labelled parent=p1 is created under one Runtime; the state is closed and
// reopened (the child comes back from the file) under a new Runtime, and
// the child is destroyed: the mapper sees "p1" every time, the last as
// destroyed, and the parent's status drops the child.
func TestQ4_DestroyedChildKeepsItsLabelsAcrossARestart(t *testing.T) {
	path := dbPath(t)
	st, err := boltdb.Open(path, familyRegistry())
	require.NoError(t, err)
	m := &family.Mapper[*family.Child]{}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(family.Controller(m)))
	runtimetest.Create(t, st, family.NewParent("p1"))
	runtimetest.Create(t, st, family.NewChild("c1", "p1"))
	runtimetest.AssertResource(t, st, "p1", runtimetest.Holds(family.HasChildren(1)))
	runtimetest.Settle(t, e.Runtime)
	require.NoError(t, e.Stop())
	require.NoError(t, st.Close())

	st, err = boltdb.Open(path, familyRegistry())
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	e = runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(family.Controller(m)))
	runtimetest.Settle(t, e.Runtime)
	require.NoError(t, st.Destroy(context.Background(), typed.Pointer[*family.Child]("c1")))
	runtimetest.AssertResource(t, st, "p1", runtimetest.Holds(family.HasChildren(0)))
	runtimetest.Settle(t, e.Runtime)
	assert.Equal(t, []string{"c1=p1", "c1=p1", "c1=destroyed:p1"}, m.Calls(),
		"the mapper sees the parent label of the child restored from the file, and of its destruction")
}

// familyOnFile starts a Runtime running the family's controller over a
// fresh bbolt file.
func familyOnFile(t *testing.T) (state.State, *runtimetest.Env, *family.Mapper[*family.Child]) {
	t.Helper()
	st, err := boltdb.Open(dbPath(t), familyRegistry())
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	m := &family.Mapper[*family.Child]{}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(family.Controller(m)))
	return st, e, m
}

// TestQ4Extended_RelabelledChildRequeuesTheParentItLeft: on a bbolt file,
// a child moved from p2 to p1 requeues both parents (rule Q4, extended).
func TestQ4Extended_RelabelledChildRequeuesTheParentItLeft(t *testing.T) {
	st, e, m := familyOnFile(t)
	family.CheckRelabelRequeuesBoth(t, st, st, e.Runtime, m)
}

// TestQ4Extended_CoalescedUpdateThenRelabel: on a bbolt file, an update
// and a relabel coalesced into one MapInput (in both orders) requeue both
// parents.
func TestQ4Extended_CoalescedUpdateThenRelabel(t *testing.T) {
	st, e, m := familyOnFile(t)
	family.CheckCoalescedUpdateThenRelabel(t, st, st, e.Runtime, m)
}

// TestQ4Extended_RelabelBehindRouting: over bbolt, a Reconcile that read a
// mapped input before the Runtime routed it is requeued when the input is
// relabelled, though the lagging watch delivers the creation and the
// relabel coalesced (lagwatch.RelabelBehindRouting).
func TestQ4Extended_RelabelBehindRouting(t *testing.T) {
	lagwatch.RelabelBehindRouting(t, openFast(t, t.TempDir()))
}
