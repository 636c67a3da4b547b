package state_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestMessages_SayEachThingOnce: the exact text of representative errors
// of the state layer (inmem and WrapCore): the resource is named once, and
// what is wrong once. Issue 9: an empty namespace printed "resource X(/a):
// resource X(/a): kind X(): empty namespace: empty namespace, type or ID".
func TestMessages_SayEachThingOnce(t *testing.T) {
	ctx := t.Context()
	st := inmem.NewState()
	withID := func(ns, typ, id string) *num {
		return typed.New[numSpec, numDef](resource.NewMetadata(ns, typ, id, resource.VersionUndefined), numSpec{})
	}
	_, listErr := st.List(ctx, resource.NewKind("", "Nums.test.resgraph.dev"))
	_, teardownErr := st.Teardown(ctx, resource.NewPointer("default", "Nums.test.resgraph.dev", ""))
	_, getErr := st.Get(ctx, ptrOf("nope"))
	for _, tc := range []struct {
		err  error
		want string
	}{
		{st.Create(ctx, withID("", "Nums.test.resgraph.dev", "a")), "resource Nums.test.resgraph.dev(/a): empty namespace"},
		{st.Create(ctx, withID("default", "", "a")), "resource (default/a): empty type"},
		{st.Update(ctx, withID("", "", "")), "resource (/): empty namespace, type and ID"},
		{listErr, "kind Nums.test.resgraph.dev(): empty namespace"},
		{teardownErr, "resource Nums.test.resgraph.dev(default/): empty ID"},
		{getErr, "resource Nums.test.resgraph.dev(default/nope): not found"},
		{st.TeardownAndDestroy(ctx, ptrOf("nope")), "resource Nums.test.resgraph.dev(default/nope): not found"},
		{state.WrapCore(nil).Create(ctx, newNum("a", 1)), "state.WrapCore: nil core"},
		{resource.ValidatePointer(nil), "nil pointer"},
		{resource.ValidateKind(resource.NewKind("ns", "")), "kind (ns): empty type"},
	} {
		assert.EqualError(t, tc.err, tc.want)
	}
	assert.ErrorIs(t, resource.ValidateKind(resource.NewKind("ns", "")), resource.ErrEmptyIdentity)
	assert.ErrorIs(t, st.Create(ctx, withID("", "T", "a")), resource.ErrEmptyIdentity)
}
