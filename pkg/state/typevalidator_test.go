package state_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// pickyCore is a core that stores only one type (as a state with a codec
// does).
type pickyCore struct {
	*fakeCore
	allowed resource.Type
}

func (p pickyCore) ValidateType(kind resource.Kind) error {
	if kind.Type() != p.allowed {
		return state.NewInvalidError(nil, "picky: type %q: register it", kind.Type())
	}
	return nil
}

// TestValidateType_WrapCoreForwards: a wrapped core's TypeValidator
// decides; a core without one accepts every kind; an invalid kind is
// refused either way; WrapCore(nil) refuses everything.
func TestValidateType_WrapCoreForwards(t *testing.T) {
	good := resource.NewKind("default", "Nums.test.resgraph.dev")
	other := resource.NewKind("default", "Others.test.resgraph.dev")

	picky := state.WrapCore(pickyCore{fakeCore: newFakeCore(), allowed: good.Type()})
	v, ok := picky.(state.TypeValidator)
	require.True(t, ok, "a wrapped core implements TypeValidator")
	assert.NoError(t, v.ValidateType(good))
	err := v.ValidateType(other)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.Contains(t, err.Error(), `"Others.test.resgraph.dev"`)
	assert.Equal(t, err, state.ValidateType(picky, other), "the helper asks the same")

	plain := state.WrapCore(newFakeCore())
	assert.NoError(t, plain.(state.TypeValidator).ValidateType(other), "a core without a validator stores every type")
	assert.NoError(t, state.ValidateType(plain, other))
	assert.NoError(t, state.ValidateType(newFakeCore(), other), "a bare core without a validator")

	for _, bad := range []resource.Kind{nil, resource.NewKind("", "T"), resource.NewKind("ns", "")} {
		for name, st := range map[string]state.State{"picky": picky, "plain": plain} {
			err := st.(state.TypeValidator).ValidateType(bad)
			assert.True(t, state.IsInvalidError(err), "%s %v: %v", name, bad, err)
			assert.True(t, errors.Is(err, resource.ErrEmptyIdentity), "%s: %v", name, err)
			assert.True(t, state.IsInvalidError(state.ValidateType(st, bad)), name)
		}
	}

	err = state.WrapCore(nil).(state.TypeValidator).ValidateType(good)
	assert.True(t, state.IsInvalidError(err), "%v", err)
}
