package yamlcodec_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/codec/yamlcodec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type linkSpec struct {
	MTU     int               `yaml:"mtu"`
	Address netip.Addr        `yaml:"address"`
	Aliases []string          `yaml:"aliases,omitempty"`
	Opts    map[string]string `yaml:"opts,omitempty"`
	Seen    time.Time         `yaml:"seen"`
	Peer    *peer             `yaml:"peer,omitempty"`
}

type peer struct {
	Name string `yaml:"name"`
}

type linkDef struct{}

func (linkDef) Definition() typed.Definition {
	return typed.Definition{Type: "Links.net.resgraph.dev", DefaultNamespace: "network"}
}

type link = typed.Resource[linkSpec, linkDef]

func registry(t *testing.T) *codec.Registry {
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[linkSpec, linkDef](reg))
	return reg
}

func fullLink() *link {
	md := resource.NewMetadata("network", "Links.net.resgraph.dev", "eth0", resource.NewVersion(3))
	md.SetPhase(resource.PhaseTearingDown)
	md.ReplaceOwner("LinkController")
	md.SetCreated(time.Date(2026, 11, 29, 10, 0, 0, 1, time.UTC))
	md.SetUpdated(time.Date(2026, 11, 29, 10, 0, 1, 0, time.UTC))
	md.Labels().Set("up", "yes")
	md.Annotations().Set("note", "a: b")
	md.Finalizers().Add("cleanup")
	return typed.New[linkSpec, linkDef](md, linkSpec{
		MTU: 9000, Address: netip.MustParseAddr("10.0.0.1"), Aliases: []string{"lan"},
		Opts: map[string]string{"k": "v"}, Seen: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Peer: &peer{Name: "sw1"},
	})
}

// TestRoundTrip: a resource written by Marshal and read by Unmarshal is
// equal to it (R1), with the same timestamps, as the Go type the registry
// registered for its type.
func TestRoundTrip(t *testing.T) {
	reg := registry(t)
	for name, r := range map[string]*link{
		"full":  fullLink(),
		"empty": typed.NewDefault[linkSpec, linkDef]("eth1", linkSpec{}),
	} {
		t.Run(name, func(t *testing.T) {
			b, err := yamlcodec.Marshal(r)
			require.NoError(t, err)
			back, err := yamlcodec.Unmarshal(reg, b)
			require.NoError(t, err, "%s", b)
			require.IsType(t, r, back)
			assert.True(t, resource.Equal(r, back), "%s\nback: %v", b, back.(*link).TypedSpec())
			assert.True(t, r.Metadata().Created().Equal(back.Metadata().Created()))
			assert.True(t, r.Metadata().Updated().Equal(back.Metadata().Updated()))
		})
	}
	b, err := yamlcodec.Marshal(fullLink())
	require.NoError(t, err)
	for _, want := range []string{"metadata:\n", "    id: eth0\n", "    phase: tearingDown\n", "spec:\n", "    mtu: 9000\n", "    address: 10.0.0.1\n"} {
		assert.Contains(t, string(b), want)
	}
}

// TestDecodeAll: a stream of documents, hand-written ones with only the
// identity and a spec, each as its registered type; an error names the
// document and returns nothing.
func TestDecodeAll(t *testing.T) {
	reg := registry(t)
	in := `metadata:
  namespace: network
  type: Links.net.resgraph.dev
  id: a
  labels: {tier: web}
spec:
  mtu: 1500
---
metadata: {namespace: network, type: Links.net.resgraph.dev, id: b}
`
	rs, err := yamlcodec.DecodeAll(reg, strings.NewReader(in))
	require.NoError(t, err)
	require.Len(t, rs, 2)
	a := rs[0].(*link)
	assert.Equal(t, 1500, a.TypedSpec().MTU)
	assert.Equal(t, resource.VersionUndefined, a.Metadata().Version())
	assert.Equal(t, resource.PhaseRunning, a.Metadata().Phase())
	v, _ := a.Metadata().Labels().Get("tier")
	assert.Equal(t, "web", v)
	assert.Equal(t, "b", rs[1].Metadata().ID())

	for name, c := range map[string]struct{ in, want string }{
		"unknown type":  {"metadata: {namespace: n, type: Nope, id: a}\n", `resource type "Nope" is not registered`},
		"empty id":      {"metadata: {namespace: network, type: Links.net.resgraph.dev}\n", "empty ID"},
		"bad phase":     {"metadata: {namespace: network, type: Links.net.resgraph.dev, id: a, phase: gone}\n", `metadata.phase "gone"`},
		"unknown field": {"metadata: {namespace: network, type: Links.net.resgraph.dev, id: a}\nextra: 1\n", "field extra not found"},
		"bad spec":      {"metadata: {namespace: network, type: Links.net.resgraph.dev, id: a}\nspec: {mtu: lots}\n", "spec of Links.net.resgraph.dev(network/a)"},
		"not yaml":      {"metadata: [\n", "did not find expected node content"},
	} {
		rs, err := yamlcodec.DecodeAll(reg, strings.NewReader(in+"---\n"+c.in))
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
		assert.ErrorContains(t, err, c.want, name)
		assert.Nil(t, rs, name)
		assert.ErrorContains(t, err, "document 3", name)
	}
	_, err = yamlcodec.Unmarshal(reg, []byte(in))
	assert.ErrorContains(t, err, "2 documents, expected one")
	_, err = yamlcodec.DecodeAll(nil, strings.NewReader(in))
	assert.True(t, state.IsInvalidError(err))
}

// TestValue: Value is the document as a value, for a larger document; a
// nil resource is an invalid-class error.
func TestValue(t *testing.T) {
	v, err := yamlcodec.Value(fullLink())
	require.NoError(t, err)
	assert.NotNil(t, v)
	_, err = yamlcodec.Value(nil)
	assert.True(t, state.IsInvalidError(err))
	_, err = yamlcodec.Marshal(nil)
	assert.True(t, state.IsInvalidError(err))
}
