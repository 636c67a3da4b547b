package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
)

// SpecMarshaler is implemented by a spec (its value or its pointer) that
// encodes itself: its encoding replaces JSON. A spec type that implements
// it must also implement [SpecUnmarshaler] on its pointer.
type SpecMarshaler interface {
	// MarshalSpec returns the spec's encoding. It must not keep or modify
	// the returned slice afterwards.
	MarshalSpec() ([]byte, error)
}

// SpecUnmarshaler is implemented by a pointer to a spec that decodes what
// its MarshalSpec wrote. It is called on a zero spec and must copy data if
// it keeps any of it.
type SpecUnmarshaler interface {
	UnmarshalSpec(data []byte) error
}

// Format identifies how a spec is encoded: the encoding stores it in the
// byte before the spec's bytes, so its values are never reused.
// [FormatJSON] and [FormatOwn] are this package's; other formats come
// with a [SpecEncoding] (see [RegisterWith]).
type Format byte

const (
	// FormatJSON is encoding/json.
	FormatJSON Format = 0
	// FormatOwn is the spec's own [SpecMarshaler].
	FormatOwn Format = 1
	// FormatProtobuf is protobuf, as the module
	// github.com/resgraph/resgraph/pkg/resource/codec/protobuf encodes
	// specs with protobuf field tags.
	FormatProtobuf Format = 2
)

func (f Format) String() string {
	switch f {
	case FormatJSON:
		return "JSON"
	case FormatOwn:
		return "the spec's own format"
	case FormatProtobuf:
		return "protobuf"
	default:
		return fmt.Sprintf("unknown format %d", byte(f))
	}
}

// encodingName is the name of f in a resource definition's Encoding.
func (f Format) encodingName() string {
	switch f {
	case FormatJSON:
		return "json"
	case FormatOwn:
		return "own"
	case FormatProtobuf:
		return "protobuf"
	default:
		return fmt.Sprintf("format-%d", byte(f))
	}
}

var (
	marshalerType   = reflect.TypeFor[SpecMarshaler]()
	unmarshalerType = reflect.TypeFor[SpecUnmarshaler]()
)

// ownEncoding reports whether values of type t (addressed through a *t)
// encode themselves, and an error when t encodes itself but cannot decode
// itself.
func ownEncoding(t reflect.Type) (bool, error) {
	pt := reflect.PointerTo(t)
	if !pt.Implements(marshalerType) {
		return false, nil
	}
	if !pt.Implements(unmarshalerType) {
		return false, fmt.Errorf("spec type %s implements MarshalSpec but *%s does not implement UnmarshalSpec", t, t)
	}
	return true, nil
}

// specCodec encodes and decodes specs of type S.
type specCodec[S any] struct {
	own bool
}

func newSpecCodec[S any]() (specCodec[S], error) {
	t := reflect.TypeFor[S]()
	own, err := ownEncoding(t)
	if err != nil {
		return specCodec[S]{}, err
	}
	if !own {
		if err := checkJSON(t); err != nil {
			return specCodec[S]{}, withProtobufHint(t, err)
		}
	}
	return specCodec[S]{own: own}, nil
}

// format is the format of the specs c writes.
func (c specCodec[S]) format() Format {
	if c.own {
		return FormatOwn
	}
	return FormatJSON
}

func (c specCodec[S]) encode(dst []byte, s *S) ([]byte, Format, error) {
	if c.own {
		return appendOwn(dst, any(s).(SpecMarshaler))
	}
	return appendJSON(dst, s)
}

func (c specCodec[S]) decode(f Format, data []byte, s *S) error {
	if c.own {
		if f != FormatOwn {
			return fmt.Errorf("spec written as %s, but %T decodes its own format", f, *new(S))
		}
		return callUnmarshal(any(s).(SpecUnmarshaler), data)
	}
	if f != FormatJSON {
		return fmt.Errorf("spec written as %s, but %T is JSON", f, *new(S))
	}
	return unmarshalJSON(data, s)
}

// withProtobufHint adds to err, JSON's refusal of t, that a spec with
// protobuf field tags can be encoded as protobuf.
func withProtobufHint(t reflect.Type, err error) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return err
	}
	for i := range t.NumField() {
		if _, ok := t.Field(i).Tag.Lookup("protobuf"); ok {
			return fmt.Errorf("%w (the spec has protobuf field tags: register it with protobuf.Register of github.com/resgraph/resgraph/pkg/resource/codec/protobuf to encode it as protobuf)", err)
		}
	}
	return err
}

// ptrSpecCodec encodes and decodes the spec of a constructor-registered
// resource: a non-nil pointer of type ptrType.
type ptrSpecCodec struct {
	ptrType reflect.Type
	own     bool
}

// pointerSpecCodec returns the codec of probe's spec, or an error when its
// Spec is not a non-nil pointer to a spec with a lossless encoding.
func pointerSpecCodec(probe interface{ Spec() any }) (ptrSpecCodec, error) {
	spec := probe.Spec()
	rv := reflect.ValueOf(spec)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return ptrSpecCodec{}, fmt.Errorf("Spec() returns %T: a type registered by constructor needs Spec() to return a non-nil pointer to its spec, or the resource to implement SpecMarshaler and SpecUnmarshaler", spec)
	}
	elem := rv.Type().Elem()
	own, err := ownEncoding(elem)
	if err != nil {
		return ptrSpecCodec{}, err
	}
	if !own {
		if err := checkJSON(elem); err != nil {
			return ptrSpecCodec{}, err
		}
	}
	return ptrSpecCodec{ptrType: rv.Type(), own: own}, nil
}

// check returns an error unless spec is a non-nil pointer of the
// registered type.
func (c ptrSpecCodec) check(spec any) error {
	if reflect.TypeOf(spec) != c.ptrType || usercode.IsNil(spec) {
		return fmt.Errorf("Spec() returns %T (nil: %v), registered as a non-nil %s", spec, spec == nil || usercode.IsNil(spec), c.ptrType)
	}
	return nil
}

// format is the format of the specs c writes.
func (c ptrSpecCodec) format() Format {
	if c.own {
		return FormatOwn
	}
	return FormatJSON
}

func (c ptrSpecCodec) encode(dst []byte, spec any) ([]byte, Format, error) {
	if err := c.check(spec); err != nil {
		return dst, 0, err
	}
	if c.own {
		return appendOwn(dst, spec.(SpecMarshaler))
	}
	return appendJSON(dst, spec)
}

func (c ptrSpecCodec) decode(f Format, data []byte, spec any) error {
	if err := c.check(spec); err != nil {
		return err
	}
	if c.own {
		if f != FormatOwn {
			return fmt.Errorf("spec written as %s, but %s decodes its own format", f, c.ptrType.Elem())
		}
		return callUnmarshal(spec.(SpecUnmarshaler), data)
	}
	if f != FormatJSON {
		return fmt.Errorf("spec written as %s, but %s is JSON", f, c.ptrType.Elem())
	}
	return unmarshalJSON(data, spec)
}

// appendOwn appends the spec's own encoding to dst. A panic in MarshalSpec
// is an error.
func appendOwn(dst []byte, m SpecMarshaler) (out []byte, f Format, err error) {
	defer recoverInto(&err, "MarshalSpec")
	b, err := m.MarshalSpec()
	if err != nil {
		return dst, 0, fmt.Errorf("MarshalSpec: %w", err)
	}
	return append(dst, b...), FormatOwn, nil
}

// callUnmarshal decodes data with the spec's own decoder. A panic in
// UnmarshalSpec is an error.
func callUnmarshal(u SpecUnmarshaler, data []byte) (err error) {
	defer recoverInto(&err, "UnmarshalSpec")
	if err := u.UnmarshalSpec(data); err != nil {
		return fmt.Errorf("UnmarshalSpec: %w", err)
	}
	return nil
}

// appendJSON appends the JSON encoding of v to dst. It refuses strings
// that are not valid UTF-8, which JSON would silently alter. A panic in a
// MarshalJSON method is an error.
func appendJSON(dst []byte, v any) (out []byte, f Format, err error) {
	defer recoverInto(&err, "JSON encoding")
	b, err := json.Marshal(v)
	if err != nil {
		return dst, 0, fmt.Errorf("JSON: %w", err)
	}
	if hasReplacedBytes(b) {
		return dst, 0, fmt.Errorf("JSON: a string of the spec is not valid UTF-8, which JSON cannot hold (use []byte, or implement SpecMarshaler)")
	}
	return append(dst, b...), FormatJSON, nil
}

// unmarshalJSON decodes data into v. A panic in an UnmarshalJSON method is
// an error.
func unmarshalJSON(data []byte, v any) (err error) {
	defer recoverInto(&err, "JSON decoding")
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("JSON: %w", err)
	}
	return nil
}

// recoverInto turns a panic into an error (with the stack) in *err.
func recoverInto(err *error, what string) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%s panicked: %v\n%s", what, p, debug.Stack())
	}
}

// replacement is how encoding/json writes a byte that is not valid UTF-8.
var replacement = []byte(`\ufffd`)

// hasReplacedBytes reports whether encoding/json replaced invalid UTF-8 in
// b: an escape \ufffd whose backslash is not itself escaped (a valid
// U+FFFD is written as is, never escaped).
func hasReplacedBytes(b []byte) bool {
	for from := 0; ; {
		i := bytes.Index(b[from:], replacement)
		if i < 0 {
			return false
		}
		i += from
		n := 0
		for j := i; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 1 {
			return true
		}
		from = i + 1
	}
}
