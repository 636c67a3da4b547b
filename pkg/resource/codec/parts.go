package codec

import (
	"reflect"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
)

// AppendSpec appends the encoding of r's spec alone to dst and returns
// the extended slice and the format it is written in, for a transport
// that carries the metadata in a form of its own (the remote State). It
// fails as [Registry.AppendEncode] does, returning dst unchanged.
func (reg *Registry) AppendSpec(dst []byte, r resource.Resource) ([]byte, Format, error) {
	if usercode.IsNil(r) || r.Metadata() == nil {
		return dst, 0, &EncodeError{Resource: "<nil>", Err: errFormat("nil resource or metadata")}
	}
	md := r.Metadata()
	e := reg.lookup(md.Type())
	if e == nil {
		return dst, 0, &UnknownTypeError{Type: md.Type()}
	}
	if got := reflect.TypeOf(r); got != e.goType {
		return dst, 0, &EncodeError{Resource: resource.PointerString(md), Err: errFormat("a %s, but the type is registered as %s", got, e.goType)}
	}
	out, f, err := e.encodeSpec(dst, r)
	if err != nil {
		return dst, 0, &EncodeError{Resource: resource.PointerString(md), Err: err}
	}
	return out, f, nil
}

// DecodeSpec returns a new resource of the Go type registered for md's
// type, with metadata md and the spec decoded from data, written in
// format f (by [Registry.AppendSpec]). It fails with an
// [*UnknownTypeError] for an unregistered type and a [*DecodeError] for a
// spec that does not decode; it never panics, and the resource does not
// reference data.
func (reg *Registry) DecodeSpec(md resource.Metadata, f Format, data []byte) (resource.Resource, error) {
	e := reg.lookup(md.Type())
	if e == nil {
		return nil, &UnknownTypeError{Type: md.Type()}
	}
	r, err := e.decode(md, f, data)
	if err != nil {
		return nil, &DecodeError{Resource: resource.PointerString(&md), Err: err}
	}
	return r, nil
}

// SpecFormat returns the format the specs of typ are written in, and
// whether typ is registered.
func (reg *Registry) SpecFormat(typ resource.Type) (Format, bool) {
	e := reg.lookup(typ)
	if e == nil {
		return 0, false
	}
	return e.format, true
}
