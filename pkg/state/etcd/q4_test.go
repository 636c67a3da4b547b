package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/internal/fixture/family"
	"github.com/resgraph/resgraph/pkg/internal/lagwatch"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// familyStates returns two states on the same fresh prefix: the Runtime's,
// and another process's, whose destroys reach the Runtime as etcd deletes.
func familyStates(t *testing.T) (engine, other state.State) {
	t.Helper()
	prefix := newPrefix()
	open := func() state.State {
		st, err := etcd.New(context.Background(), client, registry(), etcd.WithPrefix(prefix), etcd.WithLogger(zaptest.NewLogger(t)))
		require.NoError(t, err)
		return st
	}
	return open(), open()
}

// TestQ4_DestroyedChildKeepsItsLabels is the reproduction of issue 18 on
// etcd: a qtransform over parents with children as an extra mapped input
// whose mapper reads the child's "parent" label. A child labelled p1 is
// created, then destroyed by another process (an etcd delete, which
// carries no value: the state hands the Runtime the value it held): the
// mapper sees "p1" both times, and the parent's status drops the child.
func TestQ4_DestroyedChildKeepsItsLabels(t *testing.T) {
	st, other := familyStates(t)
	m := &family.Mapper[*family.Child]{}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(family.Controller(m)))
	runtimetest.Create(t, st, family.NewParent("p1"))
	runtimetest.AssertResource(t, st, "p1", runtimetest.Holds(family.HasChildren(0)))

	runtimetest.Create(t, other, family.NewChild("c1", "p1"))
	runtimetest.AssertResource(t, st, "p1", runtimetest.Holds(family.HasChildren(1)))
	runtimetest.Settle(t, e.Runtime)
	require.NoError(t, other.Destroy(context.Background(), typed.Pointer[*family.Child]("c1")))
	runtimetest.AssertResource(t, st, "p1", runtimetest.Holds(family.HasChildren(0)))
	runtimetest.Settle(t, e.Runtime)
	assert.Equal(t, []string{"c1=p1", "c1=destroyed:p1"}, m.Calls(), "the mapper sees the parent label of a destroyed child")
}

// TestQ4_CoalescedChildBurst: on etcd, a child created unlabelled,
// labelled p1 and destroyed while the mapper is busy with another child is
// mapped once, as destroyed, with the label of its last stored version.
func TestQ4_CoalescedChildBurst(t *testing.T) {
	st, other := familyStates(t)
	m := &family.Mapper[*family.Child]{Gate: make(chan struct{})}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(family.Controller(m)))
	ctx := context.Background()
	for _, id := range []string{"p1", "p2"} {
		runtimetest.Create(t, st, family.NewParent(id))
	}
	runtimetest.AssertResource(t, st, "p2", runtimetest.Holds(family.HasChildren(0)))

	runtimetest.Create(t, other, family.NewChild("blocker", "p2")) // its call holds the only worker
	runtimetest.Create(t, other, family.NewChild("c1", ""))
	require.NoError(t, other.Modify(ctx, family.NewChild("c1", ""), func(r resource.Resource) error {
		r.Metadata().Labels().Set("parent", "p1")
		return nil
	}))
	require.NoError(t, other.Destroy(ctx, typed.Pointer[*family.Child]("c1")))
	// Every change routed: c1's one item waits behind the held blocker.
	runtimetest.Settle(t, e.Runtime, runtimetest.Except("Families"))
	release := func(what string) {
		t.Helper()
		select {
		case m.Gate <- struct{}{}:
		case <-time.After(runtimetest.DefaultTimeout):
			require.FailNow(t, "no mapper call waits", "for %s; calls: %v", what, m.Calls())
		}
	}
	release("blocker")
	release("c1")
	close(m.Gate)
	runtimetest.Settle(t, e.Runtime)
	assert.Equal(t, []string{"blocker=p2", "c1=previous:", "c1=destroyed:p1"}, m.Calls(),
		"one item for the coalesced changes: the version before the relabel (Q4, extended), then the last one, as destroyed")
}

// TestQ4Extended_RelabelledChildRequeuesTheParentItLeft: on etcd, a child
// moved from p2 to p1 by another process requeues both parents (rule Q4,
// extended).
func TestQ4Extended_RelabelledChildRequeuesTheParentItLeft(t *testing.T) {
	st, other := familyStates(t)
	m := &family.Mapper[*family.Child]{}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(family.Controller(m)))
	family.CheckRelabelRequeuesBoth(t, st, other, e.Runtime, m)
}

// TestQ4Extended_CoalescedUpdateThenRelabel: on etcd, an update and a
// relabel by another process, coalesced into one MapInput (in both
// orders), requeue both parents.
func TestQ4Extended_CoalescedUpdateThenRelabel(t *testing.T) {
	st, other := familyStates(t)
	m := &family.Mapper[*family.Child]{}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(family.Controller(m)))
	family.CheckCoalescedUpdateThenRelabel(t, st, other, e.Runtime, m)
}

// TestQ4Extended_RelabelBehindRouting: over etcd, a Reconcile that read a
// mapped input before the Runtime routed it is requeued when the input is
// relabelled, though the lagging watch delivers the creation and the
// relabel coalesced (lagwatch.RelabelBehindRouting).
func TestQ4Extended_RelabelBehindRouting(t *testing.T) {
	lagwatch.RelabelBehindRouting(t, newState(t))
}
