package family

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// Relabel moves the child id to parent (its "parent" label) through st.
func Relabel(tb testing.TB, st state.State, id resource.ID, parent string) {
	tb.Helper()
	_, err := st.ModifyWithResult(context.Background(), NewChild(id, ""), func(r resource.Resource) error {
		r.Metadata().Labels().Set("parent", parent)
		return nil
	})
	require.NoError(tb, err)
}

// SetN sets the child id's spec N through st (a change of the spec alone).
func SetN(tb testing.TB, st state.State, id resource.ID, n int) {
	tb.Helper()
	_, err := st.ModifyWithResult(context.Background(), NewChild(id, ""), func(r resource.Resource) error {
		r.(*Child).TypedSpec().N = n
		return nil
	})
	require.NoError(tb, err)
}

// CheckRelabelRequeuesBoth is the scenario of rule Q4 (extended) on one
// backend: the Runtime rt runs [Controller](m) over st, other writes the
// children (st itself, or another process's state). A child of p2 moved
// to p1 requeues both: p1 counts it, p2 no longer does; the mapper sees
// its previous label, then its new one.
func CheckRelabelRequeuesBoth(t *testing.T, st, other state.State, rt *runtime.Runtime, m *Mapper[*Child]) {
	t.Helper()
	runtimetest.Create(t, st, NewParent("p1"), NewParent("p2"))
	runtimetest.Create(t, other, NewChild("c1", "p2"))
	runtimetest.AssertResource(t, st, "p2", runtimetest.Holds(HasChildren(1)))
	runtimetest.AssertResource(t, st, "p1", runtimetest.Holds(HasChildren(0)))
	runtimetest.Settle(t, rt)

	Relabel(t, other, "c1", "p1")
	runtimetest.AssertResource(t, st, "p1", runtimetest.Holds(HasChildren(1)))
	runtimetest.AssertResource(t, st, "p2", runtimetest.Holds(HasChildren(0)))
	runtimetest.Settle(t, rt)
	assert.Equal(t, []string{"c1=p2", "c1=previous:p2", "c1=p1"}, m.Calls(),
		"the relabel maps the previous label, then the new one")
}

// CheckCoalescedUpdateThenRelabel: a child of p2 whose spec is updated and
// which is then moved to p1, the two changes coalesced into one MapInput
// (the mapper holds the only worker on another child meanwhile), requeues
// both parents; so does a relabel followed by an update. rt is e's
// Runtime, whose quiet (but for the held controller) tells that every
// change was routed; the mapper's calls wait on m.Gate, which this
// function feeds.
func CheckCoalescedUpdateThenRelabel(t *testing.T, st, other state.State, rt *runtime.Runtime, m *Mapper[*Child]) {
	t.Helper()
	idle := func() {
		t.Helper()
		runtimetest.Settle(t, rt, runtimetest.Except("Families"))
	}
	m.Gate = make(chan struct{})
	release := func(n int) {
		t.Helper()
		for range n {
			select {
			case m.Gate <- struct{}{}:
			case <-time.After(runtimetest.DefaultTimeout):
				require.FailNow(t, "no mapper call waits", "calls: %v", m.Calls())
			}
		}
	}
	runtimetest.Create(t, st, NewParent("p1"), NewParent("p2"), NewParent("p3"))
	runtimetest.Create(t, other, NewChild("c1", "p2"), NewChild("c2", "p3"))
	release(2)
	runtimetest.AssertResource(t, st, "p2", runtimetest.Holds(HasChildren(1)))
	runtimetest.AssertResource(t, st, "p3", runtimetest.Holds(HasChildren(1)))

	runtimetest.Create(t, other, NewChild("blocker", "p3")) // its call holds the only worker
	idle()
	SetN(t, other, "c1", 7)
	Relabel(t, other, "c1", "p1") // update, then relabel
	Relabel(t, other, "c2", "p1")
	SetN(t, other, "c2", 7) // relabel, then update
	idle()
	release(1) // the blocker
	release(4) // c1 and c2: previous and current versions each
	close(m.Gate)
	runtimetest.AssertResource(t, st, "p1", runtimetest.Holds(HasChildren(2)))
	runtimetest.AssertResource(t, st, "p2", runtimetest.Holds(HasChildren(0)))
	runtimetest.AssertResource(t, st, "p3", runtimetest.Holds(HasChildren(1)))
	runtimetest.Settle(t, rt)
	calls := m.Calls()
	assert.Equal(t, []string{"c1=previous:p2", "c1=p1"}, pick(calls, "c1"), "c1: one coalesced item, both labels")
	assert.Equal(t, []string{"c2=previous:p3", "c2=p1"}, pick(calls, "c2"), "c2: one coalesced item, both labels")
}

// pick returns the calls of the child id after its first one.
func pick(calls []string, id string) []string {
	var out []string
	first := true
	for _, c := range calls {
		if len(c) > len(id) && c[:len(id)+1] == id+"=" {
			if first {
				first = false
				continue
			}
			out = append(out, c)
		}
	}
	return out
}
