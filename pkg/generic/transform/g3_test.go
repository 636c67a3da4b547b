package transform_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// reads counts what a controller reads of its input kind through its
// Runtime: the Lists and the Gets (by ID), and the change-log batches it
// took.
type reads struct {
	controller.Controller
	mu    sync.Mutex
	lists int
	gets  map[resource.ID]int
	full  int
}

func countReads(c controller.Controller) *reads {
	return &reads{Controller: c, gets: map[resource.ID]int{}}
}

func (r *reads) Run(ctx context.Context, rt controller.Runtime, logger *zap.Logger) error {
	return r.Controller.Run(ctx, &counting{Runtime: rt, r: r}, logger)
}

// snapshot returns the Lists and the Gets of each ID so far.
func (r *reads) snapshot() (int, map[resource.ID]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	gets := make(map[resource.ID]int, len(r.gets))
	for id, n := range r.gets {
		gets[id] = n
	}
	return r.lists, gets
}

// counting is the Runtime of a reads: it counts and passes on.
type counting struct {
	controller.Runtime
	r *reads
}

func (c *counting) List(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error) {
	if resource.KindOf(kind) == resource.KindOf(kindA) {
		c.r.mu.Lock()
		c.r.lists++
		c.r.mu.Unlock()
	}
	return c.Runtime.List(ctx, kind, opts...)
}

func (c *counting) Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	if resource.KindOf(ptr) == resource.KindOf(kindA) {
		c.r.mu.Lock()
		c.r.gets[ptr.ID()]++
		c.r.mu.Unlock()
	}
	return c.Runtime.Get(ctx, ptr, opts...)
}

func (c *counting) TakeChanges(reuse *changelog.Batch) *changelog.Batch {
	b := c.Runtime.(changelog.Source).TakeChanges(reuse)
	if b.Full {
		c.r.mu.Lock()
		c.r.full++
		c.r.mu.Unlock()
	}
	return b
}

// TestG3_APassReadsOnlyTheInputsThatChanged: once the controller has
// processed its inputs, a change of one input is processed by reading that
// input alone — no List of the inputs, no Get of another one.
func TestG3_APassReadsOnlyTheInputsThatChanged(t *testing.T) {
	st := newState()
	ids := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"}
	for i, id := range ids {
		runtimetest.Create(t, st, newA(id, i))
	}
	ctrl := countReads(aToB("AtoB"))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	for i, id := range ids {
		runtimetest.AssertResource(t, st, id, runtimetest.Holds(fixture.RunningN[*B](2*i)))
	}
	lists, before := ctrl.snapshot()
	require.Positive(t, lists, "the first pass lists the inputs")

	fixture.SetN[*A](t, st, ptrA("a3"), 100)
	runtimetest.AssertResource(t, st, "a3", runtimetest.Holds(fixture.RunningN[*B](200)))
	require.NoError(t, st.Destroy(context.Background(), ptrA("a5")))
	runtimetest.AssertNoResource[*B](t, st, "a5")
	runtimetest.Create(t, st, newA("a9", 9))
	runtimetest.AssertResource(t, st, "a9", runtimetest.Holds(fixture.RunningN[*B](18)))

	after, gets := ctrl.snapshot()
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

// TestG3_ARelistMakesTheNextPassAFullOne: after a re-list of the input
// kind, the next pass lists every input.
func TestG3_ARelistMakesTheNextPassAFullOne(t *testing.T) {
	st := newState()
	runtimetest.Create(t, st, newA("a1", 1), newA("a2", 2))
	ctrl := countReads(aToB("AtoB"))
	env := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*B](4)))
	lists, _ := ctrl.snapshot()

	require.NoError(t, env.Runtime.Relist(context.Background(), kindA))
	fixture.SetN[*A](t, st, ptrA("a1"), 5) // a wake-up after the re-list
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](10)))
	after, _ := ctrl.snapshot()
	assert.Greater(t, after, lists, "the pass after a re-list lists the inputs")
}
