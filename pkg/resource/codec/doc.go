// Package codec turns resources into bytes and back, for states that keep
// resources outside the process's memory (a file, a server).
//
// A [Registry] knows the resource types it may encode and decode: typed
// resources register by their definition ([Register]), any other resource
// type by a constructor ([Registry.RegisterType]). [Registry.Encode] writes
// a resource's metadata — namespace, type, ID, version, phase, owner,
// labels, annotations, finalizers, creation and update times — and its
// spec; [Registry.Decode] returns a new resource of the registered Go type
// that is equal to the encoded one by [resource.Equal], with the same
// timestamps (by [time.Time.Equal]).
//
// # Specs
//
// A spec is encoded as JSON (encoding/json) unless its type provides its
// own encoding: a spec whose value or pointer implements [SpecMarshaler]
// is written by MarshalSpec and read back by the UnmarshalSpec method of
// its pointer ([SpecUnmarshaler]), which it must then have. JSON is used
// only where it is lossless: registration refuses a spec type that JSON
// would not round-trip (unexported or "-"-tagged struct fields, fields of
// interface, func, chan, complex or unsafe pointer type, two fields with one
// JSON name, omitzero on a type with its own IsZero method other than
// time.Time), unless the type (or the offending part of it) implements
// json.Marshaler and json.Unmarshaler or the spec implements
// [SpecMarshaler]. Encoding refuses a string that is not valid UTF-8
// (JSON would replace its bytes) and values JSON cannot hold (NaN,
// infinities).
//
// Tags as daemons write them need no edit: omitempty on a slice or a map
// drops an empty one, which decodes as nil, and a nil and an empty slice
// or map are equal specs (rule R1, see package typed), as are two times of
// one instant. A spec with protobuf field tags can be encoded as protobuf
// instead, by the module github.com/resgraph/resgraph/pkg/resource/codec/protobuf
// (a module of its own, so that only its users depend on protoenc).
//
// Registration also refuses a spec type that cannot be deep-copied (a func,
// a channel, a sync primitive: see package typed), which no state can
// store. [Registry.ValidateType] tells whether a type is registered, with
// an error that names the fix: states that encode with a registry
// implement state.TypeValidator with it, so that a Runtime refuses a
// controller whose inputs or outputs the state could not persist when the
// controller registers, not at its first write.
//
// A type that encodes itself round-trips as far as its own encoding does:
// a time.Time keeps its instant and its zone offset, not its location's
// name.
//
// # Definitions
//
// Registering a type also records its resource definition (package
// definition: aliases, default namespace, encoding, printed columns,
// sensitivity), derived from typed.Definition and an optional
// ResourceDefinition method of the definition provider (or of the
// resource, for [Registry.RegisterType]); [Registry.Definitions] returns
// them. A definition that registry refuses (an alias another type already
// answers to) refuses the registration: nothing is registered.
//
// # Specs apart from metadata
//
// [Registry.AppendSpec] and [Registry.DecodeSpec] encode and decode a
// spec alone, for a transport that carries the metadata in a form of its
// own (the remote State's messages): the spec's bytes and its [Format].
// [Registry.DecodeSpecInput] decodes a spec given as input (a user's
// file, a client's write) strictly: a JSON key the spec's type has no
// field for, or that names one only by a different case, is an
// [*UnknownFieldError], where DecodeSpec (and Decode, for stored bytes)
// drops it, so that data stored by a version of a spec with more fields
// stays readable.
//
// # Errors
//
// Encode fails, writing nothing, with an [*UnknownTypeError] for a type
// that is not registered and an [*EncodeError] for a resource of another Go
// type than the registered one or a spec that fails to encode. Both belong
// to the invalid-input class of the state package (they have the
// InvalidError marker method, so state.IsInvalidError reports them), so a
// state that encodes before writing reports bad input the usual way.
// Decode fails with an [*UnknownTypeError] for an unregistered type and a
// [*DecodeError] for bytes that are not an encoding of this package, or
// whose spec does not decode; it never panics, whatever the input.
//
// # Format
//
// The encoding is binary: a four-byte header (format and version), then
// the metadata as length-prefixed strings and varints — labels and
// annotations sorted by key, so one resource always encodes to the same
// bytes — then the spec's format (JSON or the spec's own) and its bytes.
// A decoder refuses trailing bytes, unknown phases, duplicate or unsorted
// keys and non-canonical timestamps. The format is versioned by its header;
// a later format will be read by later versions of this package.
//
// A Registry is safe for concurrent use; registration normally happens
// once, before the first Encode or Decode.
package codec
