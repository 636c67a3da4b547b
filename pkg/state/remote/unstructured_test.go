package remote_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// TestUnstructured_ATypeTheClientWasNotCompiledWith: a client with an
// empty registry reads, watches and writes a type only the server knows,
// as Unstructured resources whose JSON the type's columns read.
func TestUnstructured_ATypeTheClientWasNotCompiledWith(t *testing.T) {
	ctx := testCtx(t)
	reg := registry()
	codec.MustRegister[linkSpec, linkDef](reg)
	st := inmem.NewState()
	conn := dial(t, serveRegistry(t, listen(t, "unix"), st, reg).Addr)
	cl, err := remote.NewClient(conn, codec.NewRegistry(), remote.WithUnstructured())
	require.NoError(t, err)
	defs, err := remote.Definitions(ctx, conn)
	require.NoError(t, err)
	def, err := defs.Resolve("links")
	require.NoError(t, err)

	link := typed.New[linkSpec, linkDef](resource.NewMetadata("network", def.Type, "eth0", resource.VersionUndefined), linkSpec{MTU: 1500, Name: "eth0"})
	require.NoError(t, st.Create(ctx, link))
	kind := resource.NewKind(def.DefaultNamespace, def.Type)
	ch := make(chan state.Event, 4)
	require.NoError(t, cl.WatchKind(ctx, kind, ch, state.WithBootstrapContents(true)))

	got, err := cl.Get(ctx, link.Metadata())
	require.NoError(t, err)
	u, ok := got.(*remote.Unstructured)
	require.True(t, ok, "%T", got)
	assert.Equal(t, uint64(1), u.Metadata().Version().Value())
	var spec any
	require.NoError(t, json.Unmarshal(u.SpecJSON(), &spec))
	assert.Equal(t, "1500", def.Columns[0].Value(spec))

	list, err := cl.List(ctx, kind)
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	assert.True(t, resource.Equal(got, list.Items[0]))
	ev := <-ch
	assert.Equal(t, state.Created, ev.Type)
	assert.IsType(t, &remote.Unstructured{}, ev.Resource)
	assert.Equal(t, state.Bootstrapped, (<-ch).Type)

	// A write of JSON: the server decodes it into its own type.
	wlan := remote.NewUnstructured(resource.NewMetadata("network", def.Type, "wlan0", resource.VersionUndefined), json.RawMessage(`{"mtu":1400,"name":"wlan0"}`))
	require.NoError(t, cl.Create(ctx, wlan))
	stored, err := st.Get(ctx, wlan.Metadata())
	require.NoError(t, err)
	assert.Equal(t, linkSpec{MTU: 1400, Name: "wlan0"}, *stored.(*typed.Resource[linkSpec, linkDef]).TypedSpec())
	ev = <-ch
	assert.Equal(t, "wlan0", ev.Resource.Metadata().ID())

	// Without the option, the unknown type is refused before anything is sent.
	strict, err := remote.NewClient(conn, codec.NewRegistry())
	require.NoError(t, err)
	_, err = strict.Get(ctx, link.Metadata())
	assert.True(t, state.IsInvalidError(err), "%v", err)
}

// TestUnstructured_AWriteOfAKeyTheTypeHasNotIsRefused: the server decodes
// a written JSON spec strictly (codec.Registry.DecodeSpecInput): a key its
// type has no field for, or one matching a field only by case, at the top
// or nested, is an InvalidArgument naming the key's path and the type, for
// create and update, and nothing is written; what a state stored is read
// as it was.
func TestUnstructured_AWriteOfAKeyTheTypeHasNotIsRefused(t *testing.T) {
	ctx := testCtx(t)
	reg := registry()
	codec.MustRegister[linkSpec, linkDef](reg)
	st := inmem.NewState()
	conn := dial(t, serveRegistry(t, listen(t, "unix"), st, reg).Addr)
	cl, err := remote.NewClient(conn, codec.NewRegistry(), remote.WithUnstructured())
	require.NoError(t, err)
	typ := (*typed.Resource[linkSpec, linkDef])(nil).Definition().Type
	md := resource.NewMetadata("network", typ, "eth0", resource.VersionUndefined)
	for spec, want := range map[string]string{
		`{"mtu":1400,"bogus":3}`: `spec.bogus: remote_test.linkSpec has no field "bogus"`,
		`{"MTU":1400}`:           `spec.MTU: remote_test.linkSpec has no field "MTU": its field is "mtu"`,
	} {
		err := cl.Create(ctx, remote.NewUnstructured(md, json.RawMessage(spec)))
		assert.True(t, state.IsInvalidError(err), "%s: %v", spec, err)
		assert.ErrorContains(t, err, want)
	}
	_, err = st.Get(ctx, md)
	assert.True(t, state.IsNotFoundError(err), "nothing written: %v", err)

	require.NoError(t, cl.Create(ctx, remote.NewUnstructured(md, json.RawMessage(`{"mtu":1400}`))))
	got, err := cl.Get(ctx, md)
	require.NoError(t, err)
	err = cl.Update(ctx, remote.NewUnstructured(*got.Metadata(), json.RawMessage(`{"mtu":1500,"nmae":"x"}`)))
	assert.ErrorContains(t, err, `spec.nmae: remote_test.linkSpec has no field "nmae"`)
	stored, err := st.Get(ctx, md)
	require.NoError(t, err)
	assert.Equal(t, linkSpec{MTU: 1400}, *stored.(*typed.Resource[linkSpec, linkDef]).TypedSpec())
}
