package transform_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestG3_APassReadsOnlyTheInputsThatChanged: once the controller has
// processed its inputs, a change of one input is processed by reading that
// input alone — no List of the inputs, no Get of another one.
func TestG3_APassReadsOnlyTheInputsThatChanged(t *testing.T) {
	st := newState()
	ids := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"}
	for i, id := range ids {
		runtimetest.Create(t, st, newA(id, i))
	}
	ctrl := fixture.CountReads(aToB("AtoB"), kindA)
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	for i, id := range ids {
		runtimetest.AssertResource(t, st, id, runtimetest.Holds(fixture.RunningN[*B](2*i)))
	}
	lists, before := ctrl.Counts()
	require.Positive(t, lists, "the first pass lists the inputs")

	fixture.SetN[*A](t, st, ptrA("a3"), 100)
	runtimetest.AssertResource(t, st, "a3", runtimetest.Holds(fixture.RunningN[*B](200)))
	require.NoError(t, st.Destroy(context.Background(), ptrA("a5")))
	runtimetest.AssertNoResource[*B](t, st, "a5")
	runtimetest.Create(t, st, newA("a9", 9))
	runtimetest.AssertResource(t, st, "a9", runtimetest.Holds(fixture.RunningN[*B](18)))

	after, gets := ctrl.Counts()
	assert.Equal(t, lists, after, "no pass listed the inputs again")
	for id, n := range gets {
		if id != "a3" && id != "a5" && id != "a9" {
			assert.Equal(t, before[id], n, "input %s did not change and was read", id)
		}
	}
	for _, id := range []resource.ID{"a3", "a5", "a9"} {
		assert.Greater(t, gets[id], before[id], "the changed input %s was read", id)
	}
}

// unresumable is a state whose kind watches cannot resume from a bookmark
// (it hides state.KindWatchResumer): the Runtime's Relist lists the kind
// again.
type unresumable struct{ state.State }

// TestG3_ARelistMakesTheNextPassAFullOne: after a re-list of the input
// kind — one that lists the kind again (a state that cannot resume its
// watches) or one that waits for the resumed watch — the next pass lists
// every input.
func TestG3_ARelistMakesTheNextPassAFullOne(t *testing.T) {
	for name, st := range map[string]state.State{"lists": unresumable{newState()}, "resumes": newState()} {
		t.Run(name, func(t *testing.T) {
			runtimetest.Create(t, st, newA("a1", 1), newA("a2", 2))
			ctrl := fixture.CountReads(aToB("AtoB"), kindA)
			env := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
			runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](4)))
			lists, _ := ctrl.Counts()

			require.NoError(t, env.Runtime.Relist(context.Background(), kindA))
			fixture.SetN[*A](t, st, ptrA("a1"), 5) // a wake-up after the re-list
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](10)))
			after, _ := ctrl.Counts()
			assert.Greater(t, after, lists, "the pass after a re-list lists the inputs")
		})
	}
}

// TestG3_AControllerSizesItsChangeLogForHalfItsInputs: the controller asks
// its change log (changelog.Sizer) to hold half as many IDs as it has
// inputs — the most a pass processes without listing them — and asks again
// as the inputs grow: a backlog of changes overflows the log into a full
// pass only where that pass would have been a full one anyway.
func TestG3_AControllerSizesItsChangeLogForHalfItsInputs(t *testing.T) {
	st := newState()
	for i := range 8 {
		runtimetest.Create(t, st, newA(fmt.Sprintf("a%d", i), i))
	}
	ctrl := fixture.CountReads(aToB("AtoB"), kindA)
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	runtimetest.AssertResource(t, st, "a7", runtimetest.Holds(fixture.RunningN[*B](14)))
	fixture.SetN[*A](t, st, ptrA("a0"), 5) // a pass after the first
	runtimetest.AssertResource(t, st, "a0", runtimetest.Holds(fixture.RunningN[*B](10)))
	assert.Equal(t, 4, ctrl.Sized(), "half of 8 inputs")

	for i := 8; i < 20; i++ {
		runtimetest.Create(t, st, newA(fmt.Sprintf("a%d", i), i))
	}
	runtimetest.AssertResource(t, st, "a19", runtimetest.Holds(fixture.RunningN[*B](38)))
	fixture.SetN[*A](t, st, ptrA("a0"), 6)
	runtimetest.AssertResource(t, st, "a0", runtimetest.Holds(fixture.RunningN[*B](12)))
	assert.Equal(t, 10, ctrl.Sized(), "half of 20 inputs")
}
