package protobuf_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/codec/protobuf"
	"github.com/resgraph/resgraph/pkg/resource/codec/protobuf/examplepb"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// link is a resource whose spec is a generated message: no DeepCopy, no
// Equal, no registration code of its own.
type link = res[*examplepb.LinkSpec]

func fullLink() *examplepb.LinkSpec {
	return &examplepb.LinkSpec{
		Name: "eth0", Mtu: 9000, Aliases: []string{"lan", "uplink"},
		Opts: map[string]string{"a": "1", "b": "2"}, Peer: &examplepb.Peer{Name: "sw1"},
		Seen: timestamppb.New(time.Date(2026, 11, 29, 10, 0, 0, 1, time.UTC)),
		Hw:   []byte{0, 1, 2}, Peers: []*examplepb.Peer{{Name: "a"}, {Name: "b"}},
		Mode: &examplepb.LinkSpec_StaticAddr{StaticAddr: "10.0.0.1"},
	}
}

// TestMessageSpec_PersistsAndReloadsEqual: a resource whose spec is a
// generated message registers with protobuf.Register, encodes with
// protobuf (proto.Marshal, deterministic) and decodes equal (R1), nil and
// empty specs included.
func TestMessageSpec_PersistsAndReloadsEqual(t *testing.T) {
	reg := codec.NewRegistry()
	require.NoError(t, protobuf.Register[*examplepb.LinkSpec, def[*examplepb.LinkSpec]](reg))
	for name, spec := range map[string]*examplepb.LinkSpec{"full": fullLink(), "empty": {}, "nil": nil} {
		r := newRes("a", spec)
		r.Metadata().Labels().Set("k", "v")
		b, err := reg.Encode(r)
		require.NoError(t, err, name)
		back, err := reg.Decode(b)
		require.NoError(t, err, name)
		require.IsType(t, r, back, name)
		assert.True(t, resource.Equal(r, back), "%s: %v came back as %v", name, spec, *back.(*link).TypedSpec())
		again, err := reg.Encode(back)
		require.NoError(t, err)
		assert.Equal(t, b, again, "%s: one spec, one encoding", name)
	}
	assert.True(t, resource.Equal(newRes[*examplepb.LinkSpec]("a", nil), newRes("a", &examplepb.LinkSpec{})), "nil and empty are equal specs (R1)")
}

// TestR1_MessageSpecEquality: two message specs are equal when
// proto.Equal says so (nested messages, maps, oneofs), whatever their
// caches.
func TestR1_MessageSpecEquality(t *testing.T) {
	a, b := newRes("a", fullLink()), newRes("a", fullLink())
	_ = proto.Size(*a.TypedSpec()) // fills a's size cache
	assert.True(t, resource.Equal(a, b))
	for name, change := range map[string]func(*examplepb.LinkSpec){
		"scalar":       func(s *examplepb.LinkSpec) { s.Mtu++ },
		"nested":       func(s *examplepb.LinkSpec) { s.Peer.Name = "sw2" },
		"map":          func(s *examplepb.LinkSpec) { s.Opts["a"] = "x" },
		"repeated msg": func(s *examplepb.LinkSpec) { s.Peers[1].Name = "c" },
		"oneof":        func(s *examplepb.LinkSpec) { s.Mode = &examplepb.LinkSpec_Dhcp{Dhcp: true} },
		"bytes":        func(s *examplepb.LinkSpec) { s.Hw[0] = 9 },
	} {
		c := newRes("a", fullLink())
		change(*c.TypedSpec())
		assert.False(t, resource.Equal(a, c), name)
	}
}

// TestR2_MessageSpecDeepCopy: DeepCopy of a message spec shares no
// mutable memory with the original (proto.Clone): changing the copy's
// nested messages, maps, repeated fields and bytes leaves the original as
// it was.
func TestR2_MessageSpecDeepCopy(t *testing.T) {
	r := newRes("a", fullLink())
	c := r.DeepCopy().(*link)
	assert.True(t, resource.Equal(r, c))
	s := *c.TypedSpec()
	assert.NotSame(t, *r.TypedSpec(), s)
	s.Aliases[0] = "x"
	s.Opts["a"] = "x"
	s.Peer.Name = "x"
	s.Peers[0].Name = "x"
	s.Hw[0] = 9
	s.Seen.Seconds++
	assert.True(t, proto.Equal(fullLink(), *r.TypedSpec()), "the original is unchanged: %v", *r.TypedSpec())
	assert.Nil(t, r.CopyError())
	assert.Nil(t, *newRes[*examplepb.LinkSpec]("n", nil).DeepCopy().(*link).TypedSpec(), "nil stays nil")
}

// TestVT_CloneVTAndEqualVTAreUsed: vtprotobuf's CloneVT and EqualVT, when
// a message has them, copy and compare the spec.
func TestVT_CloneVTAndEqualVTAreUsed(t *testing.T) {
	r := newRes("a", &examplepb.VTLinkSpec{Name: "a", Aliases: []string{"x"}})
	clones, equals := examplepb.VTCalls.Clone.Load(), examplepb.VTCalls.Equal.Load()
	c := r.DeepCopy().(*res[*examplepb.VTLinkSpec])
	assert.Equal(t, clones+1, examplepb.VTCalls.Clone.Load())
	(*c.TypedSpec()).Aliases[0] = "y"
	assert.Equal(t, "x", (*r.TypedSpec()).Aliases[0])
	assert.False(t, resource.Equal(r, c))
	assert.Greater(t, examplepb.VTCalls.Equal.Load(), equals)
	reg := codec.NewRegistry()
	require.NoError(t, protobuf.Register[*examplepb.VTLinkSpec, def[*examplepb.VTLinkSpec]](reg))
	b, err := reg.Encode(r)
	require.NoError(t, err)
	back, err := reg.Decode(b)
	require.NoError(t, err)
	assert.True(t, resource.Equal(r, back))
}

// TestRegister_RefusesMessagesThatCannotRoundTrip: a message held by
// value, and a proto2 message with a required field (an empty one does
// not encode), are refused with an invalid-class error naming the call,
// the types and the fix; nothing is registered.
func TestRegister_RefusesMessagesThatCannotRoundTrip(t *testing.T) {
	reg := codec.NewRegistry()
	err := protobuf.Register[*examplepb.StrictSpec, def[*examplepb.StrictSpec]](reg)
	require.Error(t, err)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.ErrorContains(t, err, "protobuf.Register")
	assert.ErrorContains(t, err, "required fields cannot be a spec: make them optional")
	var re *protobuf.RegisterError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, typeName[*examplepb.StrictSpec](), re.Type)

	err = protobuf.Register[examplepb.Peer, def[examplepb.Peer]](reg)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.ErrorContains(t, err, "use the pointer *examplepb.Peer as the spec type")
	assert.Empty(t, reg.Types(), "nothing registered")
}

// TestMutationDetector_MessageSpec: the mutation detector compares a
// message spec with proto.Equal: encoding a shared snapshot (which fills
// protobuf's size cache) is no mutation; changing one of its fields is
// reported.
func TestMutationDetector_MessageSpec(t *testing.T) {
	reports := make(chan error, 4)
	st := inmem.NewState(inmem.WithMutationDetector(func(err error) { reports <- err }))
	ctx := t.Context()
	require.NoError(t, st.Create(ctx, newRes("a", fullLink())))
	reg := codec.NewRegistry()
	require.NoError(t, protobuf.Register[*examplepb.LinkSpec, def[*examplepb.LinkSpec]](reg))

	snap, err := st.Get(ctx, newRes[*examplepb.LinkSpec]("a", nil).Metadata(), state.WithReadOnlyGet())
	require.NoError(t, err)
	_, err = reg.Encode(snap)
	require.NoError(t, err)
	next := snap.DeepCopy().(*link)
	(*next.TypedSpec()).Mtu = 1500
	require.NoError(t, st.Update(ctx, next))
	assert.Empty(t, reports, "encoding a snapshot is no mutation")

	snap, err = st.Get(ctx, next.Metadata(), state.WithReadOnlyGet())
	require.NoError(t, err)
	(*snap.(*link).TypedSpec()).Peer.Name = "changed"
	next = newRes[*examplepb.LinkSpec]("a", nil)
	require.NoError(t, st.Modify(ctx, next, func(r resource.Resource) error {
		*r.(*link).TypedSpec() = &examplepb.LinkSpec{Name: "replaced"}
		return nil
	}))
	select {
	case err := <-reports:
		assert.ErrorContains(t, err, "a")
	default:
		t.Fatal("the change of a snapshot's field was not reported")
	}
}
