package codec

import (
	"fmt"
	"reflect"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// SpecEncoding is an encoding of specs of type S other than JSON and a
// spec's own [SpecMarshaler], for [RegisterWith]. A module that brings a
// format and its dependencies (the protobuf module,
// github.com/resgraph/resgraph/pkg/resource/codec/protobuf) provides one,
// so that only its users depend on them.
type SpecEncoding[S any] struct {
	// Format is the encoding's format: not FormatJSON nor FormatOwn.
	Format Format
	// Append appends the encoding of *s to dst and returns the extended
	// slice. It must not keep s or modify it.
	Append func(dst []byte, s *S) ([]byte, error)
	// Decode decodes data into *s, a zero spec. It must not keep data.
	Decode func(data []byte, s *S) error
}

// RegisterWith registers the typed resource type typed.Resource[S, D], as
// [Register] does, with its specs encoded by enc. A panic in enc's
// functions is an error of the encoding or decoding. Specs stored in JSON
// (before the type switched encodings) still decode when JSON is lossless
// for S. It fails for an incomplete encoding or one of this package's
// formats, and as Register does; registering the same type again with the
// same Go type and format is a no-op, with another format an error.
func RegisterWith[S any, D typed.DefinitionProvider](reg *Registry, enc SpecEncoding[S]) error {
	def := (*typed.Resource[S, D])(nil).Definition()
	goType := reflect.TypeFor[*typed.Resource[S, D]]()
	fail := func(err error) error { return fmt.Errorf("codec: register %q (%s): %w", def.Type, goType, err) }
	switch {
	case enc.Format == FormatJSON || enc.Format == FormatOwn:
		return fail(fmt.Errorf("a SpecEncoding cannot use %s, which this package encodes itself", enc.Format))
	case enc.Append == nil || enc.Decode == nil:
		return fail(fmt.Errorf("SpecEncoding for %s without Append or Decode", enc.Format))
	}
	var zero S
	if err := typed.New[S, D](resource.Metadata{}, zero).CopyError(); err != nil {
		return fail(err)
	}
	jsonOK := checkJSON(reflect.TypeFor[S]()) == nil
	var described D
	return reg.add(def.Type, &entry{
		goType: goType,
		format: enc.Format,
		encodeSpec: func(dst []byte, r resource.Resource) (out []byte, f Format, err error) {
			defer recoverInto(&err, enc.Format.String()+" encoding")
			out, err = enc.Append(dst, r.(*typed.Resource[S, D]).TypedSpec())
			if err != nil {
				return dst, 0, fmt.Errorf("%s: %w", enc.Format, err)
			}
			return out, enc.Format, nil
		},
		decode: func(md resource.Metadata, f Format, data []byte) (resource.Resource, error) {
			r := typed.New[S, D](resource.Metadata{}, zero)
			*r.Metadata() = md
			switch {
			case f == enc.Format:
				if err := callDecode(enc, data, r.TypedSpec()); err != nil {
					return nil, err
				}
			case f == FormatJSON && jsonOK:
				if err := unmarshalJSON(data, r.TypedSpec()); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("spec written as %s, but %s decodes %s", f, reflect.TypeFor[S](), enc.Format)
			}
			return r, nil
		},
		newEmpty: newTyped[S, D],
	}, def.DefaultNamespace, described)
}

// callDecode decodes data with enc. A panic is an error.
func callDecode[S any](enc SpecEncoding[S], data []byte, s *S) (err error) {
	defer recoverInto(&err, enc.Format.String()+" decoding")
	if err := enc.Decode(data, s); err != nil {
		return fmt.Errorf("%s: %w", enc.Format, err)
	}
	return nil
}
