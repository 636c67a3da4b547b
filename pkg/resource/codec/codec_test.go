package codec_test

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
)

// registry returns a registry with every test type.
func registry(t testing.TB) *codec.Registry {
	t.Helper()
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[int, def[int]](reg))
	require.NoError(t, codec.Register[string, def[string]](reg))
	require.NoError(t, codec.Register[nested, def[nested]](reg))
	require.NoError(t, codec.Register[*Inner, def[*Inner]](reg))
	require.NoError(t, codec.Register[[]byte, def[[]byte]](reg))
	require.NoError(t, codec.Register[struct{}, def[struct{}]](reg))
	require.NoError(t, codec.Register[map[string][]int, def[map[string][]int]](reg))
	require.NoError(t, codec.Register[own, def[own]](reg))
	require.NoError(t, codec.Register[failing, def[failing]](reg))
	require.NoError(t, codec.Register[pairSpec, def[pairSpec]](reg))
	require.NoError(t, reg.RegisterType(plainType, newPlain))
	require.NoError(t, reg.RegisterType(selfishType, func(md resource.Metadata) resource.Resource { return &selfish{md: md} }))
	return reg
}

// roundTrip encodes and decodes r and checks that the result is equal to
// r (rule R1), with the same Go type and timestamps, and that the
// encoding is stable from then on.
func roundTrip(t *testing.T, reg *codec.Registry, r resource.Resource) resource.Resource {
	t.Helper()
	b, err := reg.Encode(r)
	require.NoError(t, err)
	got, err := reg.Decode(b)
	require.NoError(t, err)
	require.IsType(t, r, got)
	assert.True(t, resource.Equal(r, got), "decoded %s differs:\n%#v\n%#v", resource.String(r), r.Spec(), got.Spec())
	assert.True(t, r.Metadata().Created().Equal(got.Metadata().Created()), "created")
	assert.True(t, r.Metadata().Updated().Equal(got.Metadata().Updated()), "updated")
	// One resource value, one encoding; R1-equal values may encode
	// differently (a nil and an empty slice), but a decoded value
	// encodes to the same bytes every time.
	again, err := reg.Encode(got)
	require.NoError(t, err)
	got2, err := reg.Decode(again)
	require.NoError(t, err)
	third, err := reg.Encode(got2)
	require.NoError(t, err)
	assert.Equal(t, again, third, "a decoded resource encodes to one encoding")
	return got
}

// TestRoundTrip_EveryMetadataField: every metadata field survives, each
// checked on its own.
func TestRoundTrip_EveryMetadataField(t *testing.T) {
	reg := registry(t)
	r := newRes("id-1", 7)
	md := r.Metadata()
	md.SetVersion(resource.NewVersion(math.MaxUint64))
	md.SetPhase(resource.PhaseTearingDown)
	require.NoError(t, md.SetOwner("controller-x"))
	created := time.Unix(1_700_000_000, 123_456_789)
	updated := time.Unix(-5, 999_999_999) // before 1970, full nanoseconds
	md.SetCreated(created)
	md.SetUpdated(updated)
	md.Finalizers().Add("f2")
	md.Finalizers().Add("f1")
	md.Labels().Set("b", "2")
	md.Labels().Set("a", "")
	md.Annotations().Set("note", "ünïcode ✓")
	md.Annotations().Set("empty", "")

	got := roundTrip(t, reg, r).Metadata()
	assert.Equal(t, testNS, got.Namespace())
	assert.Equal(t, typeName[int](), got.Type())
	assert.Equal(t, "id-1", got.ID())
	assert.Equal(t, uint64(math.MaxUint64), got.Version().Value())
	assert.Equal(t, resource.PhaseTearingDown, got.Phase())
	assert.Equal(t, "controller-x", got.Owner())
	assert.True(t, created.Equal(got.Created()), "%s != %s", created, got.Created())
	assert.True(t, updated.Equal(got.Updated()), "%s != %s", updated, got.Updated())
	assert.Equal(t, resource.Finalizers{"f2", "f1"}, *got.Finalizers(), "order kept")
	assert.Equal(t, map[string]string{"a": "", "b": "2"}, got.Labels().Raw())
	assert.Equal(t, map[string]string{"note": "ünïcode ✓", "empty": ""}, got.Annotations().Raw())

	// Zero values: no owner, labels, finalizers; zero times; undefined
	// version.
	zero := roundTrip(t, reg, newRes("z", 0)).Metadata()
	assert.True(t, zero.Created().IsZero())
	assert.True(t, zero.Updated().IsZero())
	assert.Equal(t, resource.VersionUndefined, zero.Version())
	assert.Equal(t, resource.PhaseRunning, zero.Phase())
	assert.Empty(t, zero.Owner())
	assert.True(t, zero.Finalizers().Empty())
	assert.Zero(t, zero.Labels().Len())
	assert.Zero(t, zero.Annotations().Len())

	// Duplicate finalizers (possible through the slice type) are kept.
	dup := newRes("dup", 0)
	*dup.Metadata().Finalizers() = resource.Finalizers{"x", "x"}
	assert.Equal(t, resource.Finalizers{"x", "x"}, *roundTrip(t, reg, dup).Metadata().Finalizers())
}

// TestRoundTrip_SpecShapes: scalar, nested, pointer, byte, empty, map and
// self-encoding specs, typed or registered by constructor.
func TestRoundTrip_SpecShapes(t *testing.T) {
	reg := registry(t)
	full := nested{
		Int: -1, Uint: math.MaxUint64, Float: math.Copysign(0, -1), Bool: true, Str: "ü\u2028\"\\ufffd\x00",
		Bytes: []byte{0, 0xff, 0xfe}, Ptr: &Inner{Name: "p", Tags: []string{}, Attrs: map[string]int{}},
		Slice: []Inner{{Name: "s", Tags: []string{"a", ""}}, {}},
		Empty: []int{}, Map: map[string]*Inner{"nil": nil, "set": {Name: "m"}},
		IntKeys: map[int]string{-3: "x", 0: ""}, EmptyM: map[string]int{},
		Array: [3]int16{1, -2, 3}, When: time.Date(2026, 11, 23, 1, 2, 3, 4, time.UTC),
		Inner: Inner{Name: "embedded", Attrs: map[string]int{"k": 1}}, Tagged: 9,
	}
	got := roundTrip(t, reg, newRes("nested", full)).(*res[nested]).TypedSpec()
	assert.Nil(t, got.Nil, "nil slice stays nil")
	assert.NotNil(t, got.Empty, "empty slice stays empty")
	assert.Nil(t, got.NilMap)
	assert.NotNil(t, got.EmptyM)
	assert.Nil(t, got.NilPtr)
	assert.True(t, math.Signbit(got.Float), "negative zero")

	roundTrip(t, reg, newRes("zero", nested{}))
	roundTrip(t, reg, newRes("str", "plain \x7f text"))
	roundTrip(t, reg, newRes("ptr", &Inner{Name: "x"}))
	roundTrip(t, reg, newRes[*Inner]("nilptr", nil))
	roundTrip(t, reg, newRes("bytes", []byte("\xff\x00 binary")))
	roundTrip(t, reg, newRes[[]byte]("nilbytes", nil))
	roundTrip(t, reg, newRes("empty", struct{}{}))
	roundTrip(t, reg, newRes("map", map[string][]int{"a": nil, "b": {}, "c": {1}}))
	roundTrip(t, reg, newRes("own", own{A: 1, B: math.MaxUint32}))

	p := newPlain(resource.NewMetadata(testNS, plainType, "p", resource.NewVersion(3))).(*plain)
	p.spec.Values = []string{"x", ""}
	p.spec.N = 42
	roundTrip(t, reg, p)
	roundTrip(t, reg, &selfish{md: resource.NewMetadata(testNS, selfishType, "s", resource.NewVersion(1)), text: "\xffraw"})
}

// TestRoundTrip_DaemonTags: specs tagged as daemons tag them — omitempty
// on slices, maps, pointers and scalars, omitzero on times and structs,
// yaml and protobuf tags that JSON ignores — register with no edit and
// round-trip equal (R1: nil and empty are equal), whether their
// containers are nil, empty or full.
func TestRoundTrip_DaemonTags(t *testing.T) {
	reg := registry(t)
	require.NoError(t, codec.Register[daemonSpec, def[daemonSpec]](reg))
	for name, spec := range map[string]daemonSpec{
		"zero": {},
		"empty": {
			Addresses: []string{}, Routes: []daemonRoute{}, Options: map[string]string{}, ByLink: map[string][]int{},
			Raw: []byte{}, Nested: daemonRoute{Via: []string{}},
		},
		"full": {
			Hostname: "node-1", MTU: 1500, Enabled: true, Addresses: []string{"10.0.0.1/24", ""},
			Routes:  []daemonRoute{{Dest: "0.0.0.0/0", Via: []string{"10.0.0.254"}}, {Via: []string{}}},
			Options: map[string]string{"a": "", "b": "c"}, ByLink: map[string][]int{"eth0": {}, "eth1": nil, "eth2": {1}},
			Raw: []byte{0}, Gateway: &daemonRoute{Dest: "gw"}, Since: time.Unix(1_800_000_000, 5).In(time.FixedZone("X", 7200)),
			Nested: daemonRoute{Dest: "n", Via: []string{"v"}},
		},
	} {
		got := roundTrip(t, reg, newRes(name, spec)).(*res[daemonSpec]).TypedSpec()
		assert.Len(t, got.Addresses, len(spec.Addresses), name)
	}
}

// TestEncodeErrors: an unknown type, a resource of another Go type, and a
// spec that fails to encode are typed errors of the invalid class, and
// nothing is written to the destination.
func TestEncodeErrors(t *testing.T) {
	reg := registry(t)
	dst := []byte("kept")
	check := func(name string, r resource.Resource, is func(error) bool) {
		t.Helper()
		out, err := reg.AppendEncode(dst, r)
		require.Error(t, err, name)
		assert.True(t, is(err), "%s: %v", name, err)
		assert.True(t, state.IsInvalidError(err), "%s: invalid class: %v", name, err)
		assert.Equal(t, []byte("kept"), out, "%s: nothing written", name)
	}
	type unregistered struct{ A int }
	check("unknown type", newRes("u", unregistered{}), codec.IsUnknownTypeError)
	var unknown *codec.UnknownTypeError
	_, err := reg.Encode(newRes("u", unregistered{}))
	require.ErrorAs(t, err, &unknown)
	assert.Equal(t, typeName[unregistered](), unknown.Type)

	other := newPlain(resource.NewMetadata(testNS, typeName[int](), "x", resource.VersionUndefined))
	check("another Go type", other, codec.IsEncodeError)
	check("NaN", newRes("nan", nested{Float: math.NaN()}), codec.IsEncodeError)
	check("infinity", newRes("inf", nested{Float: math.Inf(1)}), codec.IsEncodeError)
	check("invalid UTF-8 string", newRes("utf", "bad \xff byte"), codec.IsEncodeError)
	check("invalid UTF-8 map key", newRes("key", map[string][]int{"\xfe": nil}), codec.IsEncodeError)
	check("MarshalSpec error", newRes("f", failing{}), codec.IsEncodeError)
	check("MarshalSpec panic", newRes("p", failing{Panic: true}), codec.IsEncodeError)
	check("empty ID", newRes("", 1), codec.IsEncodeError)
	bad := newRes("phase", 1)
	bad.Metadata().SetPhase(7)
	check("unknown phase", bad, codec.IsEncodeError)
	check("nil resource", nil, codec.IsEncodeError)
	nilSpec := &plain{md: resource.NewMetadata(testNS, plainType, "n", resource.VersionUndefined)}
	check("nil spec pointer", nilSpec, codec.IsEncodeError)

	_, err = reg.Encode(newRes("f", failing{}))
	assert.Contains(t, err.Error(), typeName[failing]()+"("+testNS+"/f)", "the error names the resource")
}

// TestDecodeErrors: bytes that are not an encoding are a DecodeError,
// never a panic: every truncation and every flipped bit of a valid
// encoding is refused; an unregistered type is an UnknownTypeError.
func TestDecodeErrors(t *testing.T) {
	reg := registry(t)
	r := newRes("id", nested{Str: "x", Slice: []Inner{{Name: "y"}}})
	r.Metadata().Labels().Set("l", "v")
	b, err := reg.Encode(r)
	require.NoError(t, err)

	for n := range len(b) {
		_, err := reg.Decode(b[:n])
		require.Error(t, err, "truncated to %d", n)
		require.True(t, codec.IsDecodeError(err), "truncated to %d: %v", n, err)
	}
	for i := range len(b) * 8 {
		c := bytes.Clone(b)
		c[i/8] ^= 1 << (i % 8)
		_, err := reg.Decode(c)
		require.Error(t, err, "bit %d flipped", i)
	}
	_, err = reg.Decode([]byte("{\"json\": true}"))
	assert.True(t, codec.IsDecodeError(err), "%v", err)
	_, err = reg.Decode(nil)
	assert.True(t, codec.IsDecodeError(err), "%v", err)

	empty := codec.NewRegistry()
	_, err = empty.Decode(b)
	assert.True(t, codec.IsUnknownTypeError(err), "%v", err)

	// A spec written by a type's own encoder is not read as JSON (the
	// type changed its encoding between writer and reader).
	ownB, err := reg.Encode(newRes("o", own{A: 1}))
	require.NoError(t, err)
	jsonOwn := codec.NewRegistry()
	require.NoError(t, codec.Register[jsonSpec, def[own]](jsonOwn))
	_, err = jsonOwn.Decode(ownB)
	assert.True(t, codec.IsDecodeError(err), "%v", err)
	assert.Contains(t, err.Error(), "own format")
}

// jsonSpec is registered under own's type name in a second registry.
type jsonSpec struct{ A, B uint32 }

// TestEncodingIsCanonical: label and annotation order do not change the
// encoding.
func TestEncodingIsCanonical(t *testing.T) {
	reg := registry(t)
	a, b := newRes("x", 1), newRes("x", 1)
	for _, k := range []string{"c", "a", "b"} {
		a.Metadata().Labels().Set(k, k)
		a.Metadata().Annotations().Set(k, k)
	}
	for _, k := range []string{"b", "c", "a"} {
		b.Metadata().Labels().Set(k, k)
		b.Metadata().Annotations().Set(k, k)
	}
	ea, err := reg.Encode(a)
	require.NoError(t, err)
	eb, err := reg.Encode(b)
	require.NoError(t, err)
	assert.Equal(t, ea, eb)
}

// Spec types that JSON would not round-trip.
type (
	withUnexported struct {
		A int
		//lint:ignore U1000 the field JSON would drop
		b int
	}
	withDash struct {
		A int `json:"-"`
	}
	withInterface struct{ A any }
	withFunc      struct{ F func() }
	withChan      struct{ C chan int }
	withComplex   struct{ C complex128 }
	withOmitZero  struct {
		Z zeroish `json:",omitzero"`
	}
	withDupName struct {
		A int `json:"B"`
		B int
	}
	withBadKey   struct{ M map[[2]int]string }
	deepBad      struct{ In []map[string]*withInterface }
	halfMarshal  struct{ A int }
	halfSpec     struct{ A int }
	recursive    struct{ Next *recursive }
	marshalsJSON struct {
		Hidden int `json:"-"`
	}
)

// zeroish calls a non-zero value zero.
type zeroish struct{ N int }

func (z zeroish) IsZero() bool { return z.N < 10 }

func (halfMarshal) MarshalJSON() ([]byte, error)           { return []byte("1"), nil }
func (halfSpec) MarshalSpec() ([]byte, error)              { return nil, nil }
func (m marshalsJSON) MarshalJSON() ([]byte, error)        { return []byte("0"), nil }
func (m *marshalsJSON) UnmarshalJSON(b []byte) error       { return nil }
func (p *plainValue) Metadata() *resource.Metadata         { return &p.md }
func (p *plainValue) Spec() any                            { return p.spec }
func (p *plainValue) DeepCopy() resource.Resource          { c := *p; return &c }
func newPlainValue(md resource.Metadata) resource.Resource { return &plainValue{md: md} }

// plainValue returns its spec by value: it cannot be decoded in place.
type plainValue struct {
	md   resource.Metadata
	spec plainSpec
}

// TestRegisterRefusesLossySpecs: registration fails, naming the field,
// for a spec type JSON would not round-trip, and for inconsistent own
// encodings; a type registered twice with one Go type is fine, with two
// is refused.
func TestRegisterRefusesLossySpecs(t *testing.T) {
	reg := codec.NewRegistry()
	for name, err := range map[string]error{
		"unexported":  codec.Register[withUnexported, def[withUnexported]](reg),
		"dash":        codec.Register[withDash, def[withDash]](reg),
		"interface":   codec.Register[withInterface, def[withInterface]](reg),
		"func":        codec.Register[withFunc, def[withFunc]](reg),
		"chan":        codec.Register[withChan, def[withChan]](reg),
		"complex":     codec.Register[withComplex, def[withComplex]](reg),
		"omitzero":    codec.Register[withOmitZero, def[withOmitZero]](reg),
		"dup name":    codec.Register[withDupName, def[withDupName]](reg),
		"bad map key": codec.Register[withBadKey, def[withBadKey]](reg),
		"deep":        codec.Register[deepBad, def[deepBad]](reg),
		"half JSON":   codec.Register[halfMarshal, def[halfMarshal]](reg),
		"half spec":   codec.Register[halfSpec, def[halfSpec]](reg),
		"any":         codec.Register[any, def[any]](reg),
		"uncopyable":  codec.Register[ownWithFunc, def[ownWithFunc]](reg),
		"value spec":  reg.RegisterType("V.test", newPlainValue),
		"nil ctor":    reg.RegisterType("N.test", nil),
		"nil result":  reg.RegisterType("R.test", func(resource.Metadata) resource.Resource { return nil }),
		"panic":       reg.RegisterType("P.test", func(resource.Metadata) resource.Resource { panic("no") }),
		"other md": reg.RegisterType("M.test", func(resource.Metadata) resource.Resource {
			return newPlain(resource.NewMetadata("a", "b", "c", resource.VersionUndefined))
		}),
	} {
		assert.Error(t, err, name)
	}
	err := codec.Register[deepBad, def[deepBad]](reg)
	assert.Contains(t, err.Error(), "deepBad.In[][][].A", "the error names the field")
	err = codec.Register[ownWithFunc, def[ownWithFunc]](reg)
	assert.Contains(t, err.Error(), "cannot be deep-copied", "an encodable spec a state cannot store")
	assert.Empty(t, reg.Types(), "nothing was registered")

	require.NoError(t, codec.Register[recursive, def[recursive]](reg))
	require.NoError(t, codec.Register[marshalsJSON, def[marshalsJSON]](reg), "a type with its own JSON is trusted")
	require.NoError(t, codec.Register[recursive, def[recursive]](reg), "registering again is a no-op")
	require.NoError(t, reg.RegisterType(plainType, newPlain))
	assert.Error(t, reg.RegisterType(typeName[recursive](), newPlain), "another Go type for a registered type")
	assert.Equal(t, []resource.Type{plainType, typeName[marshalsJSON](), typeName[recursive]()}, reg.Types())
	assert.True(t, reg.Registered(plainType))
	assert.False(t, reg.Registered("nope"))
}

// TestDecodedResourcesAreIndependent: decoding twice gives independent
// values that do not reference the input bytes.
func TestDecodedResourcesAreIndependent(t *testing.T) {
	reg := registry(t)
	r := newRes("x", nested{Bytes: []byte("abc"), Slice: []Inner{{Name: "a"}}})
	r.Metadata().Labels().Set("k", "v")
	b, err := reg.Encode(r)
	require.NoError(t, err)
	one, err := reg.Decode(b)
	require.NoError(t, err)
	for i := range b {
		b[i] = 0
	}
	assert.True(t, resource.Equal(r, one), "decoded value does not alias the input")
	assert.True(t, reflect.DeepEqual(r.TypedSpec(), one.(*res[nested]).TypedSpec()))
}

func TestErrorMessages(t *testing.T) {
	reg := registry(t)
	_, err := reg.Encode(newRes("u", uint8(1)))
	assert.True(t, strings.Contains(err.Error(), "not registered"), err.Error())
}

// TestAppendEncodeWithMetadata: the given metadata is written instead of
// the resource's own, which is left untouched; metadata of another
// resource is refused.
func TestAppendEncodeWithMetadata(t *testing.T) {
	reg := registry(t)
	r := newRes("x", 5)
	md := r.Metadata().Copy()
	md.SetVersion(resource.NewVersion(9))
	_ = md.SetOwner("o")
	b, err := reg.AppendEncodeWithMetadata(nil, r, &md)
	require.NoError(t, err)
	got, err := reg.Decode(b)
	require.NoError(t, err)
	assert.Equal(t, uint64(9), got.Metadata().Version().Value())
	assert.Equal(t, "o", got.Metadata().Owner())
	assert.Equal(t, 5, *got.(*res[int]).TypedSpec())
	assert.Equal(t, resource.VersionUndefined, r.Metadata().Version(), "the resource is untouched")

	other := resource.NewMetadata(testNS, typeName[int](), "y", resource.VersionUndefined)
	_, err = reg.AppendEncodeWithMetadata(nil, r, &other)
	assert.True(t, codec.IsEncodeError(err), "%v", err)
}
