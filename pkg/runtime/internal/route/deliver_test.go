package route

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestMatches is the table of which changes concern a subscription: an
// input with an ID fires for that ID only (rule C2), whatever the change;
// a destroy-ready input fires only for the subscriber's own outputs that
// are tearing down with no finalizers left, and not for their destruction
// (rules C9, Q4).
func TestMatches(t *testing.T) {
	md := func(id, owner string, phase resource.Phase, fins ...string) *resource.Metadata {
		m := resource.NewMetadata("test", "As.test.resgraph.dev", id, resource.NewVersion(1))
		m.ReplaceOwner(owner)
		m.SetPhase(phase)
		for _, f := range fins {
			m.Finalizers().Add(f)
		}
		return &m
	}
	plain := Subscription{Name: "c", Kind: controller.InputWeak}
	withID := Subscription{Name: "c", Kind: controller.InputWeak, HasID: true, ID: "x"}
	ready := Subscription{Name: "c", Kind: controller.InputDestroyReady}
	qready := Subscription{Name: "c", Kind: controller.InputQMappedDestroyReady}
	running, tearing := resource.PhaseRunning, resource.PhaseTearingDown
	for _, tc := range []struct {
		name string
		sub  Subscription
		t    state.EventType
		md   *resource.Metadata
		want bool
	}{
		{"plain input: any change", plain, state.Updated, md("y", "", running), true},
		{"plain input: a destruction", plain, state.Destroyed, md("y", "", running), true},
		{"input with an ID: its ID", withID, state.Created, md("x", "", running), true},
		{"input with an ID: its ID destroyed", withID, state.Destroyed, md("x", "", running), true},
		{"input with an ID: another ID", withID, state.Updated, md("y", "", running), false},
		{"destroy-ready: own, tearing down, no finalizers", ready, state.Updated, md("x", "c", tearing), true},
		{"destroy-ready: own, tearing down, with finalizers", ready, state.Updated, md("x", "c", tearing, "f"), false},
		{"destroy-ready: own, running", ready, state.Updated, md("x", "c", running), false},
		{"destroy-ready: another's, tearing down", ready, state.Updated, md("x", "other", tearing), false},
		{"destroy-ready: a user's, tearing down", ready, state.Updated, md("x", "", tearing), false},
		{"destroy-ready: own, destroyed", ready, state.Destroyed, md("x", "c", tearing), false},
		{"mapped destroy-ready: own, tearing down, no finalizers", qready, state.Created, md("x", "c", tearing), true},
		{"mapped destroy-ready: own, destroyed", qready, state.Destroyed, md("x", "c", tearing), false},
		{"mapped destroy-ready: with finalizers", qready, state.Updated, md("x", "c", tearing, "f"), false},
	} {
		assert.Equal(t, tc.want, Matches(&tc.sub, tc.t, tc.md), tc.name)
	}
}

// TestDeliver_QueuesWithoutAllocating: routing a change to a QController
// (its primary input, and a mapped input whose last versions are kept)
// allocates nothing once the item is known to the queue — the item's key
// is made from the change's metadata, not from a boxed pointer — with the
// telemetry and the trace on, as the Runtime runs by default.
func TestDeliver_QueuesWithoutAllocating(t *testing.T) {
	eng := &telemetry.Engine{Clock: telemetry.NewClock(), Ring: trace.NewRing(trace.DefaultSize), Metrics: true}
	sub := &Subscriber{
		Queue:     queue.New[work.Item, telemetry.Pending](retry.Policy{}),
		Last:      &work.LastSeen{},
		Telemetry: telemetry.NewController(eng, "c", 1),
		Floor:     &cache.Floor{},
	}
	subs := []Subscription{
		{Handle: sub, Name: "c", Kind: controller.InputQPrimary},
		{Handle: sub, Name: "c", Kind: controller.InputQMapped},
	}
	md := resource.NewMetadata("test", "As.test.resgraph.dev", "x", resource.NewVersion(1))
	r := typed.New[benchSpec, benchDef](md, benchSpec{A: 1})
	events := []state.Event{{Type: state.Updated, Resource: r, Old: r}}
	metas := []*resource.Metadata{r.Metadata()}
	var sc scratch
	deliver(subs, events, metas, &sc, false, 1, &telemetry.Batch{}) // the items become known
	allocs := testing.AllocsPerRun(100, func() {
		deliver(subs, events, metas, &sc, false, 1, &telemetry.Batch{})
	})
	assert.Zero(t, allocs)
	assert.Equal(t, 2, sub.Queue.Len(), "one reconcile item and one map item")
}
