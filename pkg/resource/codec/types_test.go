package codec_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// The resource types of the tests: one per spec shape.

const testNS = "ns"

type def[T any] struct{}

// typeName gives each spec shape its own resource type.
func typeName[T any]() resource.Type { return fmt.Sprintf("%T.test.resgraph.dev", *new(T)) }

func (def[T]) Definition() typed.Definition {
	return typed.Definition{Type: typeName[T](), DefaultNamespace: testNS}
}

// res is the typed resource of spec shape S.
type res[S any] = typed.Resource[S, def[S]]

func newRes[S any](id string, spec S) *res[S] {
	return typed.New[S, def[S]](resource.NewMetadata(testNS, typeName[S](), id, resource.VersionUndefined), spec)
}

type Inner struct {
	Name  string
	Tags  []string
	Attrs map[string]int
}

// nested is a spec with every container shape, nil and empty.
type nested struct {
	Int     int
	Uint    uint64
	Float   float64
	Bool    bool
	Str     string
	Bytes   []byte
	Ptr     *Inner
	NilPtr  *Inner
	Slice   []Inner
	Nil     []int
	Empty   []int
	Map     map[string]*Inner
	IntKeys map[int]string
	NilMap  map[string]int
	EmptyM  map[string]int
	Array   [3]int16
	When    time.Time
	Inner
	Tagged int `json:"renamed,omitempty"`
}

// own encodes itself in a binary form.
type own struct{ A, B uint32 }

func (o own) MarshalSpec() ([]byte, error) {
	return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, o.A), o.B), nil
}

func (o *own) UnmarshalSpec(b []byte) error {
	if len(b) != 8 {
		return errors.New("own: want 8 bytes")
	}
	o.A, o.B = binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	return nil
}

// failing fails to encode itself, or panics when Panic is set.
type failing struct{ Panic bool }

func (f failing) MarshalSpec() ([]byte, error) {
	if f.Panic {
		panic("failing spec")
	}
	return nil, errors.New("failing spec")
}

func (f *failing) UnmarshalSpec([]byte) error { return nil }

// plain is a resource that is not a typed one: its Spec returns a pointer.
type plain struct {
	md   resource.Metadata
	spec *plainSpec
}

type plainSpec struct {
	Values []string
	N      int
}

const plainType = "Plains.test.resgraph.dev"

func newPlain(md resource.Metadata) resource.Resource { return &plain{md: md, spec: &plainSpec{}} }

func (p *plain) Metadata() *resource.Metadata { return &p.md }
func (p *plain) Spec() any                    { return p.spec }
func (p *plain) DeepCopy() resource.Resource {
	s := *p.spec
	s.Values = append([]string(nil), p.spec.Values...)
	return &plain{md: p.md.Copy(), spec: &s}
}

// selfish is a resource that encodes its spec itself.
type selfish struct {
	md   resource.Metadata
	text string
}

const selfishType = "Selfish.test.resgraph.dev"

func (s *selfish) Metadata() *resource.Metadata { return &s.md }
func (s *selfish) Spec() any                    { return s.text }
func (s *selfish) DeepCopy() resource.Resource  { return &selfish{md: s.md.Copy(), text: s.text} }
func (s *selfish) MarshalSpec() ([]byte, error) { return []byte(s.text), nil }
func (s *selfish) UnmarshalSpec(b []byte) error { s.text = string(b); return nil }

// ownWithFunc encodes itself, but holds a func: no state can store it
// (it cannot be deep-copied).
type ownWithFunc struct {
	own
	F func()
}

// daemonSpec is tagged as the specs of OS daemons are: omitempty
// everywhere, yaml and protobuf tags beside.
type daemonSpec struct {
	Hostname  string            `yaml:"hostname,omitempty" json:"hostname,omitempty" protobuf:"1"`
	MTU       uint32            `yaml:"mtu,omitempty" json:"mtu,omitempty" protobuf:"2"`
	Enabled   bool              `yaml:"enabled" json:"enabled,omitempty" protobuf:"3"`
	Addresses []string          `yaml:"addresses,omitempty" json:"addresses,omitempty" protobuf:"4"`
	Routes    []daemonRoute     `yaml:"routes,omitempty" json:"routes,omitempty" protobuf:"5"`
	Options   map[string]string `yaml:"options,omitempty" json:"options,omitempty" protobuf:"6"`
	ByLink    map[string][]int  `yaml:"byLink,omitempty" json:"byLink,omitempty" protobuf:"7"`
	Raw       []byte            `yaml:"raw,omitempty" json:"raw,omitempty" protobuf:"8"`
	Gateway   *daemonRoute      `yaml:"gateway,omitempty" json:"gateway,omitempty" protobuf:"9"`
	Since     time.Time         `yaml:"since,omitzero" json:"since,omitzero" protobuf:"10"`
	Nested    daemonRoute       `yaml:"nested,omitzero" json:"nested,omitzero" protobuf:"11"`
}

type daemonRoute struct {
	Dest string   `json:"dest,omitempty" protobuf:"1"`
	Via  []string `json:"via,omitempty" protobuf:"2"`
}
