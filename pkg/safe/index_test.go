package safe_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestReaderListByIndex_ReaderWithoutIndexes: a Reader that is not a
// controller.IndexReader (here a State) is an invalid-class error, and so
// is a nil reader; the Runtime's readers are tested in package runtime.
func TestReaderListByIndex_ReaderWithoutIndexes(t *testing.T) {
	ctx, st := setup(t)
	_, err := safe.ReaderListAllByIndex[*num](ctx, st, "idx", "k")
	require.Error(t, err)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.Contains(t, err.Error(), "serves no index")
	_, err = safe.ReaderListAllByIndex[*num](ctx, nil, "idx", "k")
	assert.True(t, state.IsInvalidError(err), "%v", err)
}

// TestIndexFunc_TypedAndWrongType: safe.IndexFunc hands a T to the typed
// function and lists a resource of another type under no key.
func TestIndexFunc_TypedAndWrongType(t *testing.T) {
	fn := safe.IndexFunc(func(n *num) []string { return []string{"n"} })
	assert.Equal(t, []string{"n"}, fn(typed.NewDefault[numSpec, numDef]("a", numSpec{N: 1})))
	assert.Nil(t, fn(typed.NewDefault[strSpec, strDef]("s", strSpec{S: "x"})))
}
