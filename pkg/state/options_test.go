package state_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// One WithExpectedPhase option applied to several options values gives each
// its own phase: changing one never changes another.
func TestWithExpectedPhase_EachOptionsValueOwnsItsPhase(t *testing.T) {
	opt := state.WithExpectedPhase(resource.PhaseTearingDown)
	a, b := state.DefaultUpdateOptions(), state.DefaultUpdateOptions()
	opt(&a)
	opt(&b)
	require.NotNil(t, a.ExpectedPhase)
	require.NotNil(t, b.ExpectedPhase)
	*a.ExpectedPhase = resource.PhaseRunning
	assert.Equal(t, resource.PhaseTearingDown, *b.ExpectedPhase)

	state.WithExpectedPhaseAny()(&a)
	assert.Nil(t, a.ExpectedPhase)
	assert.Equal(t, resource.PhaseTearingDown, *b.ExpectedPhase)
}
