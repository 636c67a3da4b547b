package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestExampleResources(t *testing.T) {
	i := NewIntResource("ns", "a", 3)
	assert.Equal(t, resource.NewPointer("ns", IntResourceType, "a"), resource.PointerOf(i.Metadata()))
	assert.Equal(t, 3, i.TypedSpec().Value)
	assert.Equal(t, IntResourceType, (*IntResource)(nil).Definition().Type)
	assert.Equal(t, DefaultNamespace, (*IntResource)(nil).Definition().DefaultNamespace)

	s := NewStrResource("ns", "b", "x")
	assert.Equal(t, resource.NewPointer("ns", StrResourceType, "b"), resource.PointerOf(s.Metadata()))
	assert.Equal(t, "x", s.TypedSpec().Value)
	assert.Equal(t, StrResourceType, (*StrResource)(nil).Definition().Type)
	assert.Equal(t, DefaultNamespace, (*StrResource)(nil).Definition().DefaultNamespace)

	c := i.DeepCopy().(*IntResource)
	c.TypedSpec().Value = 4
	assert.Equal(t, 3, i.TypedSpec().Value)
}

func withVersion(r *IntResource, v uint64) *IntResource {
	r.Metadata().SetVersion(resource.NewVersion(v))
	return r
}

// TestWatchViewDetectsViolations checks that the view the S9–S14 tests rely
// on flags every derivation-rule violation (so those tests can fail).
func TestWatchViewDetectsViolations(t *testing.T) {
	a1 := withVersion(NewIntResource("ns", "a", 0), 1)
	a2 := withVersion(NewIntResource("ns", "a", 0), 2)
	a3 := withVersion(NewIntResource("ns", "a", 0), 3)
	for name, evs := range map[string][]state.Event{
		"Created twice":          {{Type: state.Created, Resource: a1}, {Type: state.Created, Resource: a2}},
		"Updated unseen":         {{Type: state.Updated, Resource: a2, Old: a1}},
		"Updated without Old":    {{Type: state.Created, Resource: a1}, {Type: state.Updated, Resource: a2}},
		"Updated with wrong Old": {{Type: state.Created, Resource: a1}, {Type: state.Updated, Resource: a3, Old: a2}},
		"Updated backwards":      {{Type: state.Created, Resource: a2}, {Type: state.Updated, Resource: a1, Old: a2}},
		"Updated duplicate":      {{Type: state.Created, Resource: a1}, {Type: state.Updated, Resource: a2, Old: a1}, {Type: state.Updated, Resource: a2, Old: a1}},
		"Destroyed unseen":       {{Type: state.Destroyed, Resource: a1}},
		"Destroyed older":        {{Type: state.Created, Resource: a2}, {Type: state.Destroyed, Resource: a1}},
		"Errored":                {{Type: state.Errored, Error: assert.AnError}},
		"Bootstrapped twice":     {{Type: state.Bootstrapped}, {Type: state.Bootstrapped}},
		"no resource":            {{Type: state.Created}},
	} {
		v := newWatchView()
		for _, ev := range evs {
			v.apply(ev)
		}
		assert.NotEmpty(t, v.problems, name)
	}

	v := newWatchView()
	for _, ev := range []state.Event{
		{Type: state.Created, Resource: a1},
		{Type: state.Updated, Resource: a3, Old: a1},
		{Type: state.Destroyed, Resource: a3},
		{Type: state.Created, Resource: a1},
		{Type: state.Bootstrapped},
	} {
		v.apply(ev)
	}
	require.Empty(t, v.problems)
	assert.True(t, v.matches(map[resource.ID]uint64{"a": 1}))
	assert.False(t, v.matches(map[resource.ID]uint64{"a": 2}))
	assert.Equal(t, 5, v.events)
	assert.True(t, v.bootstrapped)
}
