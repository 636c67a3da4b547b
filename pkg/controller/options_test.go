package controller_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

func TestCreateOptions(t *testing.T) {
	var o controller.CreateOptions
	assert.False(t, o.NoOwner, "zero value: owned by the controller")

	controller.WithCreateNoOwner()(&o)
	assert.True(t, o.NoOwner)
}

func TestDefaultModifyOptions(t *testing.T) {
	o := controller.DefaultModifyOptions()
	require.NotNil(t, o.ExpectedPhase)
	assert.Equal(t, resource.PhaseRunning, *o.ExpectedPhase)
	assert.False(t, o.NoOwner)

	*o.ExpectedPhase = resource.PhaseTearingDown
	fresh := controller.DefaultModifyOptions()
	assert.Equal(t, resource.PhaseRunning, *fresh.ExpectedPhase, "each call returns its own defaults")
}

func TestModifyOptions(t *testing.T) {
	t.Run("WithExpectedPhase", func(t *testing.T) {
		o := controller.DefaultModifyOptions()
		controller.WithExpectedPhase(resource.PhaseTearingDown)(&o)
		require.NotNil(t, o.ExpectedPhase)
		assert.Equal(t, resource.PhaseTearingDown, *o.ExpectedPhase)
		assert.False(t, o.NoOwner)
	})

	t.Run("WithExpectedPhaseAny", func(t *testing.T) {
		o := controller.DefaultModifyOptions()
		controller.WithExpectedPhaseAny()(&o)
		assert.Nil(t, o.ExpectedPhase)
		assert.False(t, o.NoOwner)
	})

	t.Run("later option wins", func(t *testing.T) {
		o := controller.DefaultModifyOptions()
		controller.WithExpectedPhaseAny()(&o)
		controller.WithExpectedPhase(resource.PhaseRunning)(&o)
		require.NotNil(t, o.ExpectedPhase)
		assert.Equal(t, resource.PhaseRunning, *o.ExpectedPhase)
	})

	t.Run("WithModifyNoOwner", func(t *testing.T) {
		o := controller.DefaultModifyOptions()
		controller.WithModifyNoOwner()(&o)
		assert.True(t, o.NoOwner)
		require.NotNil(t, o.ExpectedPhase, "phase untouched")
		assert.Equal(t, resource.PhaseRunning, *o.ExpectedPhase)
	})
}

func TestDeleteOptions(t *testing.T) {
	var zero controller.RemoveOptions
	assert.Nil(t, zero.Owner, "zero value: owned by the controller")

	for name, owner := range map[string]string{
		"other controller": "other",
		"no owner":         "",
	} {
		t.Run(name, func(t *testing.T) {
			var o controller.RemoveOptions
			controller.WithOwner(owner)(&o)
			require.NotNil(t, o.Owner)
			assert.Equal(t, resource.Owner(owner), *o.Owner)
		})
	}
}

// One WithExpectedPhase option applied to several options values gives each
// its own phase: changing one never changes another.
func TestWithExpectedPhase_EachOptionsValueOwnsItsPhase(t *testing.T) {
	opt := controller.WithExpectedPhase(resource.PhaseTearingDown)
	var a, b controller.ModifyOptions
	opt(&a)
	opt(&b)
	require.NotNil(t, a.ExpectedPhase)
	require.NotNil(t, b.ExpectedPhase)
	*a.ExpectedPhase = resource.PhaseRunning
	assert.Equal(t, resource.PhaseTearingDown, *b.ExpectedPhase)
}
