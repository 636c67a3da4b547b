package protobuf_test

import (
	"fmt"
	"math"
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
)

type def[T any] struct{}

func typeName[T any]() resource.Type { return fmt.Sprintf("%T.test.resgraph.dev", *new(T)) }

func (def[T]) Definition() typed.Definition {
	return typed.Definition{Type: typeName[T](), DefaultNamespace: "ns"}
}

type res[S any] = typed.Resource[S, def[S]]

func newRes[S any](id string, spec S) *res[S] {
	return typed.New[S, def[S]](resource.NewMetadata("ns", typeName[S](), id, resource.VersionUndefined), spec)
}

// Spec types as OS daemons declare them: yaml and protobuf tags,
// omitempty, enums, nested messages, addresses, durations and times.

type Family int

type RouteSpec struct {
	Family      Family         `yaml:"family" protobuf:"1"`
	Destination netip.Prefix   `yaml:"dst" protobuf:"2"`
	Gateway     netip.Addr     `yaml:"gateway" protobuf:"3"`
	Priority    uint32         `yaml:"priority,omitempty" protobuf:"4"`
	Tags        []string       `yaml:"tags,omitempty" protobuf:"5"`
	Options     map[string]int `yaml:"options,omitempty" protobuf:"6"`
}

type NetworkSpec struct {
	Hostname string               `yaml:"hostname,omitempty" protobuf:"1"`
	MTU      uint32               `yaml:"mtu,omitempty" protobuf:"2"`
	Up       bool                 `yaml:"up" protobuf:"3"`
	Servers  []netip.Addr         `yaml:"servers,omitempty" protobuf:"4"`
	Routes   []RouteSpec          `yaml:"routes,omitempty" protobuf:"5"`
	Labels   map[string]string    `yaml:"labels,omitempty" protobuf:"6"`
	Primary  *RouteSpec           `yaml:"primary,omitempty" protobuf:"7"`
	Timeout  time.Duration        `yaml:"timeout,omitempty" protobuf:"8"`
	Since    time.Time            `yaml:"since" protobuf:"9"`
	Weight   float64              `yaml:"weight" protobuf:"10"`
	Raw      []byte               `yaml:"raw,omitempty" protobuf:"11"`
	Small    int8                 `yaml:"small" protobuf:"12"`
	Counters map[int32]uint64     `yaml:"counters,omitempty" protobuf:"13"`
	Nested   RouteSpec            `yaml:"nested" protobuf:"14"`
	ByName   map[string]RouteSpec `yaml:"byName,omitempty" protobuf:"15"`
}

func registry(t testing.TB) *codec.Registry {
	t.Helper()
	reg := codec.NewRegistry()
	require.NoError(t, protobuf.Register[NetworkSpec, def[NetworkSpec]](reg))
	require.NoError(t, protobuf.Register[withPtrs, def[withPtrs]](reg))
	return reg
}

func fullSpec() NetworkSpec {
	return NetworkSpec{
		Hostname: "node-1", MTU: 9000, Up: true,
		Servers: []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("fd00::1")},
		Routes: []RouteSpec{
			{Family: 2, Destination: netip.MustParsePrefix("0.0.0.0/0"), Gateway: netip.MustParseAddr("10.0.0.254"), Tags: []string{"", "default"}},
			{},
		},
		Labels:  map[string]string{"": "", "role": "worker"},
		Primary: &RouteSpec{Priority: 7, Options: map[string]int{"a": 0}},
		Timeout: -3 * time.Second, Since: time.Now(), Weight: math.Copysign(0, -1),
		Raw: []byte{0, 1, 0xff}, Small: -128, Counters: map[int32]uint64{-1: math.MaxUint64, 0: 0},
		Nested: RouteSpec{Tags: []string{"n"}}, ByName: map[string]RouteSpec{"x": {Priority: 1}, "": {}},
	}
}

// roundTrip encodes and decodes r and checks R1 equality.
func roundTrip[S any](t *testing.T, reg *codec.Registry, r *res[S]) *res[S] {
	t.Helper()
	b, err := reg.Encode(r)
	require.NoError(t, err)
	got, err := reg.Decode(b)
	require.NoError(t, err)
	require.IsType(t, r, got)
	assert.True(t, resource.Equal(r, got), "decoded %s differs:\n%#v\n%#v", resource.String(r), r.Spec(), got.Spec())
	return got.(*res[S])
}

// TestRoundTrip_DaemonSpecs: specs with protobuf tags round-trip equal
// under R1 (times by instant, nil and empty containers alike), zero,
// empty and full.
func TestRoundTrip_DaemonSpecs(t *testing.T) {
	reg := registry(t)
	full := fullSpec()
	got := roundTrip(t, reg, newRes("full", full))
	assert.Equal(t, full.Servers, got.TypedSpec().Servers)
	assert.Zero(t, got.TypedSpec().Weight, "negative zero decodes as zero")
	assert.False(t, math.Signbit(got.TypedSpec().Weight), "a zero field is left out of the encoding, its sign with it")
	roundTrip(t, reg, newRes("zero", NetworkSpec{}))
	roundTrip(t, reg, newRes("empty", NetworkSpec{
		Servers: []netip.Addr{}, Routes: []RouteSpec{}, Labels: map[string]string{}, Raw: []byte{},
		Primary: &RouteSpec{}, Counters: map[int32]uint64{}, ByName: map[string]RouteSpec{},
	}))
}

// TestEncoding_IsProtobuf: the spec bytes are protobuf (the field numbers
// are the tags), not JSON, and decoded specs do not alias the input.
func TestEncoding_IsProtobuf(t *testing.T) {
	reg := registry(t)
	b, err := reg.Encode(newRes("h", NetworkSpec{Hostname: "hi"}))
	require.NoError(t, err)
	// Field 1, wire type 2 (bytes): 0x0a, length 2, "hi".
	assert.Contains(t, string(b), "\x0a\x02hi")
	assert.NotContains(t, string(b), `"Hostname"`)

	b, err = reg.Encode(newRes("r", NetworkSpec{Raw: []byte("abc")}))
	require.NoError(t, err)
	got, err := reg.Decode(b)
	require.NoError(t, err)
	for i := range b {
		b[i] = 0
	}
	assert.Equal(t, []byte("abc"), got.(*res[NetworkSpec]).TypedSpec().Raw, "the decoded spec does not alias the input")
}

// TestRegister_SwitchFromJSON: records written in JSON before the type
// was registered as protobuf still decode; registering a type in both
// encodings is refused.
func TestRegister_SwitchFromJSON(t *testing.T) {
	type jsonable struct {
		Name  string   `protobuf:"1"`
		Items []string `json:",omitempty" protobuf:"2"`
	}
	old := codec.NewRegistry()
	require.NoError(t, codec.Register[jsonable, def[jsonable]](old))
	b, err := old.Encode(newRes("j", jsonable{Name: "n", Items: []string{"a"}}))
	require.NoError(t, err)

	reg := codec.NewRegistry()
	require.NoError(t, protobuf.Register[jsonable, def[jsonable]](reg))
	require.NoError(t, protobuf.Register[jsonable, def[jsonable]](reg), "again: a no-op")
	got, err := reg.Decode(b)
	require.NoError(t, err)
	assert.Equal(t, jsonable{Name: "n", Items: []string{"a"}}, *got.(*res[jsonable]).TypedSpec())
	assert.Error(t, codec.Register[jsonable, def[jsonable]](reg), "the type is protobuf in this registry")
}

type (
	inner struct {
		A int `protobuf:"1"`
	}
	notStruct []int
	untagged  struct {
		A int `protobuf:"1"`
		B int
	}
	dashTagged struct {
		A int `protobuf:"-"`
	}
	zeroTagged struct {
		A int `protobuf:"0"`
	}
	badTag struct {
		A int `protobuf:"one"`
	}
	hugeTag struct {
		A int `protobuf:"536870912"`
	}
	dupTag struct {
		A int `protobuf:"1"`
		B int `protobuf:"1"`
	}
	unexported struct {
		A int `protobuf:"1"`
		//lint:ignore U1000 the unexported field is what registration refuses
		b int
	}
	embeddedUnexported struct {
		inner
		B int `protobuf:"2"`
	}
	withAny struct {
		A any `protobuf:"1"`
	}
	withMapAny struct {
		A map[string]any `protobuf:"1"`
	}
	withComplex struct {
		A complex128 `protobuf:"1"`
	}
	withPtrSlice struct {
		A *[]int `protobuf:"1"`
	}
	withSliceList struct {
		A [][]int `protobuf:"1"`
	}
	withArray struct {
		A [3]int `protobuf:"1"`
	}
	withMapSlice struct {
		A map[string][]string `protobuf:"1"`
	}
	withFunc struct {
		A func() `protobuf:"1"`
	}
	deepBad struct {
		A []struct {
			B map[string]*struct {
				C uintptr `protobuf:"1"`
			} `protobuf:"1"`
		} `protobuf:"1"`
	}
)

// TestRegister_RefusesLossyTypes: every shape protobuf would drop or
// cannot encode is refused at registration, naming the spec type and the
// field; nothing is registered.
func TestRegister_RefusesLossyTypes(t *testing.T) {
	reg := codec.NewRegistry()
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"not a struct":        {protobuf.Register[notStruct, def[notStruct]](reg), "encodes structs"},
		"untagged":            {protobuf.Register[untagged, def[untagged]](reg), "B"},
		"dash":                {protobuf.Register[dashTagged, def[dashTagged]](reg), "dashTagged.A"},
		"zero":                {protobuf.Register[zeroTagged, def[zeroTagged]](reg), "zeroTagged.A"},
		"not a number":        {protobuf.Register[badTag, def[badTag]](reg), "A"},
		"too large":           {protobuf.Register[hugeTag, def[hugeTag]](reg), "hugeTag.A"},
		"duplicate":           {protobuf.Register[dupTag, def[dupTag]](reg), "duplicated"},
		"unexported":          {protobuf.Register[unexported, def[unexported]](reg), "unexported.b"},
		"embedded unexported": {protobuf.Register[embeddedUnexported, def[embeddedUnexported]](reg), "embeddedUnexported.inner"},
		"interface":           {protobuf.Register[withAny, def[withAny]](reg), "withAny.A"},
		"map of any":          {protobuf.Register[withMapAny, def[withMapAny]](reg), "withMapAny.A"},
		"complex":             {protobuf.Register[withComplex, def[withComplex]](reg), "withComplex.A"},
		"pointer to slice":    {protobuf.Register[withPtrSlice, def[withPtrSlice]](reg), "withPtrSlice.A"},
		"slice of slices":     {protobuf.Register[withSliceList, def[withSliceList]](reg), "[][]int"},
		"array":               {protobuf.Register[withArray, def[withArray]](reg), "[3]int"},
		"map of slices":       {protobuf.Register[withMapSlice, def[withMapSlice]](reg), "[]string"},
		"func":                {protobuf.Register[withFunc, def[withFunc]](reg), "A"},
		"deep":                {protobuf.Register[deepBad, def[deepBad]](reg), "uintptr"},
	} {
		if assert.Error(t, c.err, name) {
			assert.Contains(t, c.err.Error(), c.want, name)
			assert.Contains(t, c.err.Error(), "test.resgraph.dev", "%s: the error names the resource type", name)
		}
	}
	assert.Empty(t, reg.Types(), "nothing was registered")
}

// withPtrs can hold values protobuf cannot: a nil element of a slice of
// pointers, an empty element of a [][]byte, a nil value of a map of
// pointers.
type withPtrs struct {
	ByName map[string]*inner `protobuf:"4"`
	Items  []*inner          `protobuf:"1"`
	Blobs  [][]byte          `protobuf:"2"`
	Addrs  []netip.Addr      `protobuf:"3"`
}

// TestEncode_RefusesValuesProtobufCannotHold: such a value is refused
// when encoded, with an error of the invalid class (a state writes
// nothing); the other values of the type round-trip.
func TestEncode_RefusesValuesProtobufCannotHold(t *testing.T) {
	reg := registry(t)
	for name, spec := range map[string]withPtrs{
		"nil element":   {Items: []*inner{{A: 1}, nil}},
		"empty blob":    {Blobs: [][]byte{{1}, {}}},
		"nil map value": {ByName: map[string]*inner{"a": nil}},
	} {
		_, err := reg.Encode(newRes("x", spec))
		assert.True(t, codec.IsEncodeError(err), "%s: %v", name, err)
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
		assert.ErrorContains(t, err, "protobuf", name)
	}
	roundTrip(t, reg, newRes("ok", withPtrs{Items: []*inner{{}, {A: 2}}, Blobs: [][]byte{{0}}, Addrs: []netip.Addr{{}, netip.MustParseAddr("::1")}}))
	roundTrip(t, reg, newRes("zero", withPtrs{}))
}
