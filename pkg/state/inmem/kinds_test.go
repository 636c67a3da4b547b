package inmem

import (
	"fmt"
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

// TestKindLookup_SmallAndLargeTablesFindEveryKind: every kind is found,
// and only its own store, with up to smallKinds kinds (compared with each
// entry, which remembers the strings it was found by) and beyond (the
// maps), by strings of their own memory each time and by the same
// strings again, including types of one length that differ in one middle
// byte and a type in several namespaces.
func TestKindLookup_SmallAndLargeTablesFindEveryKind(t *testing.T) {
	c := newCore(withoutMutationDetector())
	var kinds []resource.KindKey
	for i := range smallKinds + 4 {
		typ := fmt.Sprintf("LinkStat%cses.net.resgraph.dev", 'a'+i)
		kinds = append(kinds, resource.KindOf(resource.NewKind("network", typ)), resource.KindOf(resource.NewKind("netw0rk", typ)))
	}
	stores := map[*kindStore]resource.KindKey{}
	for _, k := range kinds {
		stores[c.store(k)] = k
		if len(stores) == smallKinds {
			assert.NotEmpty(t, c.kinds.Load().small)
		}
		for _, k := range kinds[:len(stores)] {
			fresh := resource.KindOf(resource.NewKind(string([]byte(k.Namespace())), string([]byte(k.Type()))))
			for _, by := range []resource.KindKey{fresh, fresh, k} {
				ks := c.lookup(by)
				require.NotNil(t, ks, "%s among %d kinds", k, len(stores))
				assert.Equal(t, k, stores[ks], "%d kinds", len(stores))
			}
		}
		assert.Nil(t, c.lookup(resource.KindOf(resource.NewKind("network", "LinkStatuses.net.resgraph.dev"))), "%d kinds", len(stores))
	}
	assert.Empty(t, c.kinds.Load().small, "more than smallKinds kinds: the maps")
}
