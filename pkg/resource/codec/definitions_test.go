package codec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

type secretSpec struct {
	Key string `json:"key"`
}

type secretDef struct{}

func (secretDef) Definition() typed.Definition {
	return typed.Definition{Type: "Secrets.test.resgraph.dev", DefaultNamespace: "secrets"}
}

func (secretDef) ResourceDefinition() definition.Definition {
	return definition.Definition{
		Aliases:   []string{"secrets", "secret"},
		Columns:   []definition.Column{{Name: "Key", Path: ".key"}},
		Sensitive: true,
	}
}

type clashDef struct{}

func (clashDef) Definition() typed.Definition {
	return typed.Definition{Type: "Clash.test.resgraph.dev", DefaultNamespace: "secrets"}
}

func (clashDef) ResourceDefinition() definition.Definition {
	return definition.Definition{Aliases: []string{"Secret"}}
}

// TestRegister_RecordsTheDefinition: registering a type for encoding
// records its definition (one list), from typed.Definition and the
// optional ResourceDefinition method, with the codec's encoding.
func TestRegister_RecordsTheDefinition(t *testing.T) {
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[secretSpec, secretDef](reg))
	codec.MustRegister[Inner, def[Inner]](reg)
	d, ok := reg.Definitions().Get("Secrets.test.resgraph.dev")
	require.True(t, ok)
	assert.True(t, d.Equal(definition.Definition{
		Type: "Secrets.test.resgraph.dev", DefaultNamespace: "secrets", Encoding: "json",
		Aliases: []string{"secrets", "secret"}, Columns: []definition.Column{{Name: "Key", Path: ".key"}}, Sensitive: true,
	}), "%+v", d)
	plain, ok := reg.Definitions().Get(typeName[Inner]())
	require.True(t, ok)
	assert.True(t, plain.Equal(definition.Definition{Type: typeName[Inner](), DefaultNamespace: testNS, Encoding: "json"}), "%+v", plain)
	assert.Equal(t, reg.Types(), typesOf(reg.Definitions().All()))
}

// TestRegister_BadDefinitionRegistersNothing: a definition the definitions
// registry refuses (an alias of another type) refuses the codec
// registration too, and nothing is registered in either.
func TestRegister_BadDefinitionRegistersNothing(t *testing.T) {
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[secretSpec, secretDef](reg))
	err := codec.Register[secretSpec, clashDef](reg)
	require.ErrorContains(t, err, `the name "Secret" is already a name of "Secrets.test.resgraph.dev"`)
	assert.False(t, reg.Registered("Clash.test.resgraph.dev"))
	_, ok := reg.Definitions().Get("Clash.test.resgraph.dev")
	assert.False(t, ok)
}

type ownProvided struct {
	md   resource.Metadata
	spec *secretSpec
}

func (r *ownProvided) Metadata() *resource.Metadata { return &r.md }
func (r *ownProvided) Spec() any                    { return r.spec }
func (r *ownProvided) DeepCopy() resource.Resource {
	s := *r.spec
	return &ownProvided{md: r.md.Copy(), spec: &s}
}
func (r *ownProvided) ResourceDefinition() definition.Definition {
	return definition.Definition{DefaultNamespace: "own", Aliases: []string{"owns"}}
}

// TestRegisterType_RecordsTheResourcesDefinition: a type registered by
// constructor is described by the resource the constructor returns.
func TestRegisterType_RecordsTheResourcesDefinition(t *testing.T) {
	reg := codec.NewRegistry()
	require.NoError(t, reg.RegisterType("Owns.test.resgraph.dev", func(md resource.Metadata) resource.Resource {
		return &ownProvided{md: md, spec: &secretSpec{}}
	}))
	d, err := reg.Definitions().Resolve("OWNS")
	require.NoError(t, err)
	assert.True(t, d.Equal(definition.Definition{Type: "Owns.test.resgraph.dev", DefaultNamespace: "own", Encoding: "json", Aliases: []string{"owns"}}), "%+v", d)
}

// TestSpecParts_RoundTrip: the spec alone, encoded and decoded with the
// metadata given apart (the remote State's wire form).
func TestSpecParts_RoundTrip(t *testing.T) {
	reg := codec.NewRegistry()
	codec.MustRegister[secretSpec, secretDef](reg)
	r := typed.New[secretSpec, secretDef](resource.NewMetadata("secrets", "Secrets.test.resgraph.dev", "a", resource.VersionUndefined.Next()), secretSpec{Key: "k"})
	b, f, err := reg.AppendSpec(nil, r)
	require.NoError(t, err)
	assert.Equal(t, codec.FormatJSON, f)
	back, err := reg.DecodeSpec(r.Metadata().Copy(), f, b)
	require.NoError(t, err)
	assert.True(t, resource.Equal(r, back))

	_, err = reg.DecodeSpec(r.Metadata().Copy(), f, []byte("{"))
	assert.True(t, codec.IsDecodeError(err), "%v", err)
	_, err = reg.DecodeSpec(resource.NewMetadata("n", "unknown", "a", resource.VersionUndefined), f, b)
	assert.True(t, codec.IsUnknownTypeError(err), "%v", err)
	_, _, err = reg.AppendSpec(nil, newRes("x", Inner{}))
	assert.True(t, codec.IsUnknownTypeError(err), "%v", err)
	got, ok := reg.SpecFormat("Secrets.test.resgraph.dev")
	assert.True(t, ok)
	assert.Equal(t, codec.FormatJSON, got)
}

func typesOf(ds []definition.Definition) []resource.Type {
	out := make([]resource.Type, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.Type)
	}
	return out
}
