package state_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// foreignPointer is a Pointer implemented outside resgraph.
type foreignPointer struct{ ns, typ, id string }

func (p *foreignPointer) Namespace() string { return p.ns }
func (p *foreignPointer) Type() string      { return p.typ }
func (p *foreignPointer) ID() string        { return p.id }

// TestR3_CheckPointerKindResource: the one check of a pointer, a kind and a
// resource that every layer refusing bad input uses (rule R3): nil, typed
// nil and empty parts are invalid-class errors, and a usable argument
// passes.
func TestR3_CheckPointerKindResource(t *testing.T) {
	var nilMD *resource.Metadata
	for name, ptr := range map[string]resource.Pointer{
		"nil": nil, "typed-nil metadata": nilMD, "typed-nil foreign": (*foreignPointer)(nil),
		"empty ID": resource.NewPointer("ns", "T", ""), "empty foreign": &foreignPointer{"", "T", "id"},
	} {
		err := state.CheckPointer(ptr)
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
		assert.ErrorIs(t, err, resource.ErrEmptyIdentity, name)
	}
	assert.NoError(t, state.CheckPointer(&foreignPointer{"ns", "T", "id"}))

	for name, k := range map[string]resource.Kind{"nil": nil, "typed nil": nilMD, "empty type": resource.NewKind("ns", "")} {
		assert.True(t, state.IsInvalidError(state.CheckKind(k)), name)
	}
	assert.NoError(t, state.CheckKind(resource.NewKind("ns", "T")))

	newNum := func(id string) *num {
		return typed.New[numSpec, numDef](resource.NewMetadata("ns", "Nums.test.resgraph.dev", id, resource.VersionUndefined), numSpec{})
	}
	badPhase := newNum("x")
	badPhase.Metadata().SetPhase(resource.Phase(7))
	for name, r := range map[string]resource.Resource{"nil": nil, "typed nil": (*num)(nil), "empty ID": newNum(""), "unknown phase": badPhase} {
		md, err := state.CheckResource(r)
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
		assert.Nil(t, md, name)
	}
	ok := newNum("x")
	md, err := state.CheckResource(ok)
	require.NoError(t, err)
	assert.Same(t, ok.Metadata(), md)
}
