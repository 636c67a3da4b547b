// Package protobuf encodes specs that carry protobuf field tags as
// protobuf, with github.com/siderolabs/protoenc, for the persistence codec
// of package codec (github.com/resgraph/resgraph/pkg/resource/codec). It is
// a Go module of its own, so that only the programs that use it depend on
// protoenc.
//
// A typed resource whose spec is a struct tagged as protoenc expects
//
//	type HostnameSpec struct {
//		Hostname string   `yaml:"hostname" protobuf:"1"`
//		Aliases  []string `yaml:"aliases,omitempty" protobuf:"2"`
//	}
//
// is registered with one call:
//
//	protobuf.MustRegister[HostnameSpec, HostnameDef](reg)
//
// and a state that encodes with reg (the bbolt and etcd states) stores its
// specs as protobuf. Records of the type that were written in JSON, before
// it was registered here, still decode when JSON is lossless for the spec.
//
// # Generated messages
//
// A spec may also be a generated protobuf message — a pointer to it,
// typed.Resource[*pb.LinkSpec, LinkDef] — with no hand-written code:
// importing this package makes package typed copy it with proto.Clone and
// compare it with proto.Equal (or with vtprotobuf's CloneVT and EqualVT
// when generated), a nil message being equal to an empty one (rule R1),
// and the same Register call
//
//	protobuf.MustRegister[*pb.LinkSpec, LinkDef](reg)
//
// encodes it with proto.Marshal (deterministic: one spec, one encoding).
// A message held by value (typed.Resource[pb.LinkSpec, D]) is refused:
// messages must not be copied. A message type whose empty value does not
// encode (a proto2 message with a required field) cannot round-trip, and
// is refused. The mutation detector of inmem compares a message snapshot
// with proto.Equal, so filling its size cache (encoding it) is no change.
// Package examplepb holds generated examples, used by the tests.
//
// Refusals are [*RegisterError]s, of the invalid class of package state
// (state.IsInvalidError), naming the call, the types and the fix.
//
// # What round-trips
//
// A decoded spec is equal to the encoded one under rule R1 (package typed:
// a nil and an empty slice or map are equal, times compare by instant),
// which is all protobuf can keep: a float's negative zero, like every zero
// field, is left out of the encoding and decodes as zero (equal under R1,
// its sign lost). [Register] refuses, naming the spec type
// and the field, what protobuf would lose or cannot encode:
//
//   - a spec type that is not a struct;
//   - an exported field without a protobuf tag, a tag that is not a field
//     number from 1 to 2^29-1 (protobuf:"-" and protobuf:"0" drop the
//     field), two fields with one number;
//   - an unexported field, or an embedded struct of an unexported type
//     (protobuf drops them), unless the struct holding it implements
//     encoding.BinaryMarshaler and BinaryUnmarshaler;
//   - a field of interface, func, chan, complex, uintptr or unsafe pointer
//     type, a pointer to a pointer, slice or map, and the shapes protobuf
//     has no encoding for (a slice of slices other than [][]byte, arrays
//     other than byte arrays, maps keyed by structs, maps of slices);
//   - a spec type that cannot be deep-copied (as codec.Register does).
//
// Then it encodes a probe value of the type (every container holding one
// zero element) and checks that it decodes equal.
//
// Some values of accepted types still have no protobuf encoding: a nil
// element of a slice of pointers, an empty element of a [][]byte (or of
// another repeated field whose elements encode as bytes), a nil value in a
// map of pointers. For spec types that can hold one, every encoding is
// decoded again and compared, and such a value is refused when it is
// written, with an error of the invalid class; nothing is written. Other
// spec types pay no such check.
package protobuf
