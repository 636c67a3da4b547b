package formatstest_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/codec/protobuf"
	"github.com/resgraph/resgraph/pkg/resource/codec/protobuf/examplepb"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// Specs in the formats daemons use: JSON tags with omitempty on slices
// and maps, and protobuf field tags.

type omitSpec struct {
	Name    string            `json:"name,omitempty"`
	Addrs   []string          `json:"addrs,omitempty"`
	Options map[string]string `json:"options,omitempty"`
	Nested  []omitItem        `json:"nested,omitempty"`
	Since   time.Time         `json:"since,omitzero"`
}

type omitItem struct {
	Via []string `json:"via,omitempty"`
}

type omitDef struct{}

func (omitDef) Definition() typed.Definition {
	return typed.Definition{Type: "OmitSpecs.test.resgraph.dev", DefaultNamespace: testNS}
}

type protoSpec struct {
	Hostname string            `yaml:"hostname" protobuf:"1"`
	Servers  []netip.Addr      `yaml:"servers,omitempty" protobuf:"2"`
	Labels   map[string]string `yaml:"labels,omitempty" protobuf:"3"`
	Routes   []protoRoute      `yaml:"routes,omitempty" protobuf:"4"`
	Timeout  time.Duration     `yaml:"timeout" protobuf:"5"`
	Since    time.Time         `yaml:"since" protobuf:"6"`
}

type protoRoute struct {
	Dest    netip.Prefix `protobuf:"1"`
	Metrics []uint32     `protobuf:"2"`
}

type protoDef struct{}

func (protoDef) Definition() typed.Definition {
	return typed.Definition{Type: "ProtoSpecs.test.resgraph.dev", DefaultNamespace: testNS}
}

// msgDef defines a resource whose spec is a generated protobuf message,
// with no code of its own.
type msgDef struct{}

func (msgDef) Definition() typed.Definition {
	return typed.Definition{Type: "MessageSpecs.test.resgraph.dev", DefaultNamespace: testNS}
}

// formatsRegistry registers the spec formats, one call per type.
func formatsRegistry(t *testing.T) *codec.Registry {
	reg := registry()
	require.NoError(t, codec.Register[omitSpec, omitDef](reg))
	require.NoError(t, protobuf.Register[protoSpec, protoDef](reg))
	require.NoError(t, protobuf.Register[*examplepb.LinkSpec, msgDef](reg))
	return reg
}

// formatResources are specs with nil, empty and full containers.
func formatResources() []resource.Resource {
	now := time.Now() // with a monotonic reading and the local zone
	return []resource.Resource{
		typed.NewDefault[omitSpec, omitDef]("empty", omitSpec{Addrs: []string{}, Options: map[string]string{}, Nested: []omitItem{{Via: []string{}}}}),
		typed.NewDefault[omitSpec, omitDef]("nil", omitSpec{}),
		typed.NewDefault[omitSpec, omitDef]("full", omitSpec{Name: "n", Addrs: []string{"a", ""}, Options: map[string]string{"k": ""},
			Nested: []omitItem{{Via: []string{"v"}}, {}}, Since: now}),
		typed.NewDefault[protoSpec, protoDef]("empty", protoSpec{Servers: []netip.Addr{}, Labels: map[string]string{}, Routes: []protoRoute{{Metrics: []uint32{}}}}),
		typed.NewDefault[protoSpec, protoDef]("nil", protoSpec{}),
		typed.NewDefault[protoSpec, protoDef]("full", protoSpec{Hostname: "h", Servers: []netip.Addr{netip.MustParseAddr("10.0.0.1")},
			Labels: map[string]string{"a": "b"}, Routes: []protoRoute{{Dest: netip.MustParsePrefix("10.0.0.0/8"), Metrics: []uint32{0, 5}}},
			Timeout: time.Second, Since: now}),
		typed.NewDefault[*examplepb.LinkSpec, msgDef]("nil", nil),
		typed.NewDefault[*examplepb.LinkSpec, msgDef]("empty", &examplepb.LinkSpec{Aliases: []string{}, Opts: map[string]string{}}),
		typed.NewDefault[*examplepb.LinkSpec, msgDef]("full", &examplepb.LinkSpec{Name: "eth0", Mtu: 9000, Aliases: []string{"a"},
			Opts: map[string]string{"k": "v"}, Peer: &examplepb.Peer{Name: "p"}, Hw: []byte{1}, Mode: &examplepb.LinkSpec_Dhcp{Dhcp: true}}),
	}
}

// TestFormats_PersistAndReloadEqual: specs with omitempty slices and maps,
// specs with protobuf tags and specs that are generated protobuf messages
// (no code of their own) are written, the state is closed and
// opened again, and every resource reads back equal under R1 to the one
// written (nil and empty containers alike, times by instant).
func TestFormats_PersistAndReloadEqual(t *testing.T) {
	path := dbPath(t)
	ctx := testContext(t)
	st, err := boltdb.Open(path, formatsRegistry(t))
	require.NoError(t, err)
	written := formatResources()
	for _, r := range written {
		require.NoError(t, st.Create(ctx, r))
	}
	require.NoError(t, st.Close())

	st2, err := boltdb.Open(path, formatsRegistry(t))
	require.NoError(t, err)
	defer func() { assert.NoError(t, st2.Close()) }()
	for _, r := range written {
		got, err := st2.Get(ctx, r.Metadata())
		require.NoError(t, err)
		assert.True(t, resource.Equal(r, got), "%s reloaded differs:\n%#v\n%#v", resource.String(r), r.Spec(), got.Spec())
	}
	// Setting the written specs (empty containers) again on the reloaded
	// ones (nil containers) writes nothing (S6): they are equal.
	before := st2.Stats().Writes
	for _, r := range written {
		require.NoError(t, st2.Modify(ctx, r.DeepCopy(), func(cur resource.Resource) error {
			setSpec(cur, r)
			return nil
		}))
	}
	assert.Equal(t, before, st2.Stats().Writes)
}

// setSpec sets the spec of dst to a copy of src's (same type).
func setSpec(dst, src resource.Resource) {
	switch d := dst.(type) {
	case *typed.Resource[omitSpec, omitDef]:
		*d.TypedSpec() = *src.DeepCopy().(*typed.Resource[omitSpec, omitDef]).TypedSpec()
	case *typed.Resource[protoSpec, protoDef]:
		*d.TypedSpec() = *src.DeepCopy().(*typed.Resource[protoSpec, protoDef]).TypedSpec()
	}
}
