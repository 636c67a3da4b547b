package lagwatch

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// The namespaces of the scenario's IntResources (conformance's type, which
// every backend's tests register): the parents, a QController's primary
// input, and the children, its InputQMapped input labelled with their
// parent.
const (
	ParentNamespace = "lag-parents"
	ChildNamespace  = "lag-children"
)

// ChildKind is the kind of the children.
var ChildKind = resource.NewKind(ChildNamespace, conformance.IntResourceType)

// waitDeadline bounds each wait of the scenario (a liveness bound).
const waitDeadline = 30 * time.Second

// RelabelBehindRouting checks rule Q4 (extended) over st in real time: a
// Reconcile lists a mapped input the Runtime has not routed yet (its kind
// watch is held), the input is relabelled, and the held watch delivers
// both changes coalesced into one Created with the new label; the parent
// the input left must be requeued all the same (its count drops back to
// 0), and the one it joined counts it. st must register conformance's
// IntResource.
func RelabelBehindRouting(t *testing.T, st state.State) {
	lag := New(st, ChildKind)
	var c Counter
	// Goroutines are checked by the calling package's TestMain: a remote
	// state's connection starts its own after Start.
	e := runtimetest.Start(t, runtimetest.WithState(lag), runtimetest.WithQControllers(c.Controller()),
		runtimetest.WithLogger(zap.NewNop()), runtimetest.WithoutLeakCheck())
	ctx := t.Context()
	for _, id := range []string{"a1", "a2"} {
		require.NoError(t, e.State.Create(ctx, Parent(id)))
	}
	c.WaitFor(t, map[resource.ID]int{"a1": 0, "a2": 0})

	lag.Hold()
	require.NoError(t, e.State.Create(ctx, Child("b1", "a1")))
	lists := lag.Lists()
	_, err := e.State.ModifyWithResult(ctx, Parent("a1"), func(r resource.Resource) error {
		r.(*conformance.IntResource).TypedSpec().Value++
		return nil
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return lag.Lists() > lists }, waitDeadline, time.Millisecond,
		"a1 is reconciled (it lists the children) while routing has not seen b1")
	_, err = e.State.ModifyWithResult(ctx, Child("b1", ""), func(r resource.Resource) error {
		r.Metadata().Labels().Set("parent", "a2")
		return nil
	})
	require.NoError(t, err)
	relabelled, _, err := lag.KindRevision(ctx, ChildKind)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return lag.HeldRevision() >= relabelled }, waitDeadline, time.Millisecond,
		"the held watch holds b1's relabel")
	lag.Release()
	c.WaitFor(t, map[resource.ID]int{"a1": 0, "a2": 1})
}

// Counter is a QController over the parents with the children mapped to
// the parent their label "parent" names: its Reconcile counts a parent's
// children, read from the state (not cached), and records the count.
type Counter struct {
	mu     sync.Mutex
	counts map[resource.ID]int
}

// Controller returns the QController.
func (c *Counter) Controller() controller.QController {
	return &qcontroller{
		reconcile: func(ctx context.Context, r controller.QRuntime, p resource.Pointer) error {
			l, err := r.List(ctx, ChildKind, state.WithLabelQuery(resource.LabelEqual("parent", p.ID())))
			if err != nil {
				return err
			}
			c.mu.Lock()
			if c.counts == nil {
				c.counts = map[resource.ID]int{}
			}
			c.counts[p.ID()] = len(l.Items)
			c.mu.Unlock()
			return nil
		},
	}
}

// Counts returns the last count of each parent of ids that has one.
func (c *Counter) Counts(ids ...resource.ID) map[resource.ID]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[resource.ID]int{}
	for _, id := range ids {
		if n, ok := c.counts[id]; ok {
			out[id] = n
		}
	}
	return out
}

// WaitFor waits until the counts are want.
func (c *Counter) WaitFor(t *testing.T, want map[resource.ID]int) {
	t.Helper()
	ids := slices.Collect(maps.Keys(want))
	require.Eventually(t, func() bool { return maps.Equal(c.Counts(ids...), want) }, waitDeadline, time.Millisecond,
		"Q4 (extended): want counts %v (a parent a relabelled child left is requeued)", want)
}

// Parent returns parent id.
func Parent(id resource.ID) *conformance.IntResource {
	return conformance.NewIntResource(ParentNamespace, id, 0)
}

// Child returns child id labelled with its parent (none when empty).
func Child(id, parent resource.ID) *conformance.IntResource {
	r := conformance.NewIntResource(ChildNamespace, id, 0)
	if parent != "" {
		r.Metadata().Labels().Set("parent", parent)
	}
	return r
}
