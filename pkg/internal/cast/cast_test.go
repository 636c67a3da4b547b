package cast_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type aSpec struct{ N int }

type aDef struct{}

func (aDef) Definition() typed.Definition {
	return typed.Definition{Type: "As.test.resgraph.dev", DefaultNamespace: "default"}
}

type bDef struct{}

func (bDef) Definition() typed.Definition {
	return typed.Definition{Type: "Bs.test.resgraph.dev", DefaultNamespace: "default"}
}

type (
	a = typed.Resource[aSpec, aDef]
	b = typed.Resource[aSpec, bDef]
)

// TestTo_WrongTypeIsOneMistake checks the one classification of a
// resource of the wrong Go type, shared by pkg/safe and the generic
// controllers: invalid class, wrapping ErrTypeMismatch, naming the resource.
func TestTo_WrongTypeIsOneMistake(t *testing.T) {
	in := typed.NewDefault[aSpec, aDef]("x", aSpec{N: 1})
	got, err := cast.To[*a](in)
	require.NoError(t, err)
	assert.Same(t, in, got)

	_, err = cast.To[*b](in)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.True(t, errors.Is(err, cast.ErrTypeMismatch), "%v", err)
	assert.ErrorContains(t, err, "As.test.resgraph.dev(default/x)", "the error names the resource")

	_, err = cast.To[*b](nil)
	assert.True(t, state.IsInvalidError(err), "nil: %v", err)
	assert.True(t, errors.Is(err, cast.ErrTypeMismatch), "nil: %v", err)
	_, err = cast.To[*b]((*a)(nil))
	assert.True(t, state.IsInvalidError(err), "typed nil: %v", err)
	assert.True(t, errors.Is(err, cast.ErrTypeMismatch), "typed nil: %v", err)
}
