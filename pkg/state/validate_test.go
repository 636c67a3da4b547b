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

// TestR3_ValidatePointerKindResource: the one validation of a pointer, a
// kind and a resource that every layer refusing bad input uses (rule R3):
// nil, typed nil and empty parts are invalid-class errors (resource's
// validation errors carry the class themselves), and a usable argument
// passes, whatever the Pointer or Kind implementation.
func TestR3_ValidatePointerKindResource(t *testing.T) {
	var nilMD *resource.Metadata
	for name, ptr := range map[string]resource.Pointer{
		"nil": nil, "typed-nil metadata": nilMD, "typed-nil foreign": (*foreignPointer)(nil),
		"empty ID": resource.NewPointer("ns", "T", ""), "empty foreign": &foreignPointer{"", "T", "id"},
		"empty metadata ID": ptrTo(resource.NewMetadata("ns", "T", "", resource.VersionUndefined)),
	} {
		err := resource.ValidatePointer(ptr)
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
		assert.ErrorIs(t, err, resource.ErrEmptyIdentity, name)
	}
	for name, ptr := range map[string]resource.Pointer{
		"foreign": &foreignPointer{"ns", "T", "id"}, "key": resource.NewPointer("ns", "T", "id"),
		"metadata": ptrTo(resource.NewMetadata("ns", "T", "id", resource.VersionUndefined)),
	} {
		assert.NoError(t, resource.ValidatePointer(ptr), name)
	}

	for name, k := range map[string]resource.Kind{
		"nil": nil, "typed nil": nilMD, "empty type": resource.NewKind("ns", ""),
		"pointer without namespace": resource.NewPointer("", "T", "id"), "foreign without type": &foreignPointer{"ns", "", "id"},
		"metadata without namespace": ptrTo(resource.NewMetadata("", "T", "id", resource.VersionUndefined)),
	} {
		err := resource.ValidateKind(k)
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
		assert.ErrorIs(t, err, resource.ErrEmptyIdentity, name)
	}
	for name, k := range map[string]resource.Kind{
		"kind": resource.NewKind("ns", "T"), "pointer": resource.NewPointer("ns", "T", ""), "foreign": &foreignPointer{"ns", "T", ""},
		"metadata": ptrTo(resource.NewMetadata("ns", "T", "", resource.VersionUndefined)),
	} {
		assert.NoError(t, resource.ValidateKind(k), name)
	}

	newNum := func(id string) *num {
		return typed.New[numSpec, numDef](resource.NewMetadata("ns", "Nums.test.resgraph.dev", id, resource.VersionUndefined), numSpec{})
	}
	badPhase := newNum("x")
	badPhase.Metadata().SetPhase(resource.Phase(7))
	for name, r := range map[string]resource.Resource{"nil": nil, "typed nil": (*num)(nil), "empty ID": newNum(""), "unknown phase": badPhase} {
		md, err := state.ValidateResource(r)
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
		assert.Nil(t, md, name)
	}
	ok := newNum("x")
	md, err := state.ValidateResource(ok)
	require.NoError(t, err)
	assert.Same(t, ok.Metadata(), md)
}

func ptrTo(md resource.Metadata) *resource.Metadata { return &md }
