package route

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
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
