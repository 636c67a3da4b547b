package formatstest_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/codec/protobuf"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
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
	return typed.Definition{Type: "OmitSpecs.test.resgraph.dev", DefaultNamespace: "formats"}
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
	return typed.Definition{Type: "ProtoSpecs.test.resgraph.dev", DefaultNamespace: "formats"}
}

// formatsRegistry registers the two spec formats, one call per type.
func formatsRegistry(t *testing.T) *codec.Registry {
	reg := registry()
	require.NoError(t, codec.Register[omitSpec, omitDef](reg))
	require.NoError(t, protobuf.Register[protoSpec, protoDef](reg))
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
	}
}

// TestFormats_PersistAndReloadEqual: specs with omitempty slices and maps
// and specs with protobuf tags are written to a real etcd; a second state
// on the same prefix (another process, a restart) reads every one back
// equal under R1 (nil and empty containers alike, times by instant), by
// Get and by a watch's bootstrap contents; setting the written specs again
// writes nothing (S6).
func TestFormats_PersistAndReloadEqual(t *testing.T) {
	prefix := newPrefix()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := etcd.New(ctx, client, formatsRegistry(t), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	written := formatResources()
	for _, r := range written {
		require.NoError(t, st.Create(ctx, r))
	}

	st2, err := etcd.New(ctx, client, formatsRegistry(t), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	for _, r := range written {
		got, err := st2.Get(ctx, r.Metadata())
		require.NoError(t, err)
		assert.True(t, resource.Equal(r, got), "%s reloaded differs:\n%#v\n%#v", resource.String(r), r.Spec(), got.Spec())
	}
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	ch := make(chan state.Event, 8)
	require.NoError(t, st2.WatchKind(wctx, resource.NewKind("formats", "ProtoSpecs.test.resgraph.dev"), ch, state.WithBootstrapContents(true)))
	seen := map[resource.ID]resource.Resource{}
	for ev := range ch {
		if ev.Type == state.Bootstrapped {
			break
		}
		seen[ev.Resource.Metadata().ID()] = ev.Resource
	}
	for _, r := range written[3:] {
		assert.True(t, resource.Equal(r, seen[r.Metadata().ID()]), "%s watched differs", resource.String(r))
	}

	for _, r := range written {
		got, err := st2.ModifyWithResult(ctx, r.DeepCopy(), func(cur resource.Resource) error {
			setSpec(cur, r)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, r.Metadata().Version(), got.Metadata().Version(), "%s: an equal spec writes nothing", resource.String(r))
	}
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
