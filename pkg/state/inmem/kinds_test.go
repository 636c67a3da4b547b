package inmem

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestKindLookup_ByTypeChecksTheNamespace: a kind's store is found by its
// type when one namespace has that type, and by the whole kind once
// several do; a kind of a known type in another namespace has no store.
func TestKindLookup_ByTypeChecksTheNamespace(t *testing.T) {
	c := newCore(withoutMutationDetector())
	st, ctx := state.WrapCore(c), t.Context()
	require.NoError(t, st.Create(ctx, newPairIn("one", "x", 1)))
	assert.NotNil(t, c.kinds.Load().byType[testType], "one namespace: found by the type")
	_, err := st.Get(ctx, resource.NewPointer("two", testType, "x"))
	assert.True(t, state.IsNotFoundError(err), "another namespace of the type has no store: %v", err)
	assert.True(t, c.lookup(resource.KindOf(resource.NewKind("two", testType))) == nil, "no store of the kind in namespace two")

	require.NoError(t, st.Create(ctx, newPairIn("two", "x", 2)))
	assert.Nil(t, c.kinds.Load().byType[testType], "two namespaces: found by the kind")
	for ns, want := range map[string]int{"one": 1, "two": 2} {
		r, err := st.Get(ctx, resource.NewPointer(ns, testType, "x"))
		require.NoError(t, err)
		assert.Equal(t, want, specA(t, r), ns)
	}
	_, err = st.Get(ctx, resource.NewPointer("three", testType, "x"))
	assert.True(t, state.IsNotFoundError(err), "%v", err)
}

// newPairIn returns a test resource id in namespace ns.
func newPairIn(ns, id string, a int) *pair {
	p := newPair(id, a)
	*p.Metadata() = resource.NewMetadata(ns, testType, id, resource.VersionUndefined)
	return p
}
