package protobuf

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"

	"github.com/siderolabs/protoenc"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// Register registers the typed resource type typed.Resource[S, D] in reg
// with its specs encoded as protobuf (see the package documentation for
// what it refuses). Registering the same type again is a no-op; a type
// registered with another encoding (JSON) is an error.
func Register[S any, D typed.DefinitionProvider](reg *codec.Registry) error {
	if err := register[S, D](reg); err != nil {
		def := (*typed.Resource[S, D])(nil).Definition()
		return &RegisterError{Type: def.Type, Spec: reflect.TypeFor[S](), Err: err}
	}
	return nil
}

// register is Register; its error is wrapped in a RegisterError.
func register[S any, D typed.DefinitionProvider](reg *codec.Registry) error {
	switch pointer, byValue := isMessage[S](); {
	case pointer:
		return registerMessage[S, D](reg)
	case byValue:
		t := reflect.TypeFor[S]()
		return fmt.Errorf("%s is a generated protobuf message held by value, which must not be copied: use the pointer *%s as the spec type (typed.Resource[*%s, D])", t, t, t)
	}
	t := reflect.TypeFor[S]()
	if err := check(t); err != nil {
		return err
	}
	verify := mayLose(t)
	return codec.RegisterWith[S, D](reg, codec.SpecEncoding[S]{
		Format: codec.FormatProtobuf,
		Append: func(dst []byte, s *S) ([]byte, error) {
			b, err := protoenc.Marshal(s)
			if err != nil {
				return dst, err
			}
			if verify {
				if err := roundTrips(s, b); err != nil {
					return dst, err
				}
			}
			return append(dst, b...), nil
		},
		Decode: decode[S],
	})
}

// RegisterError is the refusal of [Register]: the resource type, its
// spec type, and why (which names the fix). It is of the invalid class
// of package state (state.IsInvalidError); nothing is registered.
type RegisterError struct {
	Type resource.Type
	Spec reflect.Type
	Err  error
}

// Error names the call, the types and the cause.
func (e *RegisterError) Error() string {
	return fmt.Sprintf("protobuf.Register %q: spec type %s: %v", e.Type, e.Spec, e.Err)
}

// Unwrap returns the cause.
func (e *RegisterError) Unwrap() error { return e.Err }

// InvalidError is the marker method of pkg/state's invalid class.
func (e *RegisterError) InvalidError() {}

// MustRegister is [Register] that panics on error, for package
// initialization.
func MustRegister[S any, D typed.DefinitionProvider](reg *codec.Registry) {
	if err := Register[S, D](reg); err != nil {
		panic(err)
	}
}

// decode decodes data into s. protoenc's decoded byte slices share the
// input's memory, so it decodes a copy: the spec never references data.
func decode[S any](data []byte, s *S) error {
	return protoenc.Unmarshal(bytes.Clone(data), s)
}

// errLost is the cause of the refusal of a value protobuf cannot hold.
var errLost = errors.New("the value does not survive protobuf: a nil element of a slice of pointers, " +
	"or an empty element of a repeated field whose elements encode as bytes (such as [][]byte), has no protobuf encoding")

// roundTrips returns nil when b, the encoding of *s, decodes equal to *s
// (rule R1: resource.SpecEqual).
func roundTrips[S any](s *S, b []byte) error {
	var back S
	if err := decode(b, &back); err != nil {
		return fmt.Errorf("%w (decoding it again failed: %v)", errLost, err)
	}
	if !resource.SpecEqual(*s, back) {
		return errLost
	}
	return nil
}

// check returns why values of the spec type t would not survive protobuf,
// nil when they do: its shape (see checker) and a probe value.
func check(t reflect.Type) error {
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("protobuf encodes structs, not a %s", t.Kind())
	}
	if _, err := protoenc.StructFields(t); err != nil {
		return err
	}
	c := checker{seen: map[reflect.Type]bool{}}
	if err := c.check(t, t.String()); err != nil {
		return err
	}
	return probe(t)
}

// probe encodes a value of t in which every container holds one zero
// element (see sample) and checks that it decodes equal. A type that may
// lose some values (mayLose) is checked on each encoding instead; for it,
// the probe only has to encode.
func probe(t reflect.Type) error {
	v := reflect.New(t)
	sample(v.Elem(), map[reflect.Type]int{})
	b, err := protoenc.Marshal(v.Interface())
	if err != nil {
		return err
	}
	if mayLose(t) {
		return nil
	}
	back := reflect.New(t)
	if err := protoenc.Unmarshal(b, back.Interface()); err != nil {
		return fmt.Errorf("a probe value does not decode: %w", err)
	}
	if !resource.SpecEqual(v.Elem().Interface(), back.Elem().Interface()) {
		return fmt.Errorf("a probe value does not round-trip: %#v came back as %#v", v.Elem().Interface(), back.Elem().Interface())
	}
	return nil
}

// sample fills v (settable, zero) so that every slice and map holds one
// zero element and every pointer points to a zero value, down to types
// already being filled (recursive types stop there).
func sample(v reflect.Value, filling map[reflect.Type]int) {
	t := v.Type()
	if filling[t] > 0 || encodesItself(t) || t == timeType {
		return
	}
	filling[t]++
	defer func() { filling[t]-- }()
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				sample(v.Field(i), filling)
			}
		}
	case reflect.Pointer:
		e := reflect.New(t.Elem())
		sample(e.Elem(), filling)
		v.Set(e)
	case reflect.Slice:
		s := reflect.MakeSlice(t, 1, 1)
		sample(s.Index(0), filling)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMapWithSize(t, 1)
		val := reflect.New(t.Elem()).Elem()
		sample(val, filling)
		m.SetMapIndex(reflect.New(t.Key()).Elem(), val)
		v.Set(m)
	}
}
