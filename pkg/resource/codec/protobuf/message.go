package protobuf

import (
	"errors"
	"fmt"
	"reflect"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// messageType is proto.Message's type.
var messageType = reflect.TypeFor[proto.Message]()

// A spec that is a generated protobuf message (a pointer to it, such as
// *pb.LinkSpec) is copied with proto.Clone, compared with proto.Equal and
// measured with proto.Size, by package typed, once this package is
// imported: no hand-written DeepCopy or Equal is needed. vtprotobuf's
// CloneVT and EqualVT methods, when generated, are used instead (package
// typed finds them itself). A nil message and an empty one are equal
// specs (rule R1), as a nil and an empty slice are.
func init() {
	typed.RegisterSpecMethods(func(t reflect.Type) (typed.SpecMethods, bool) {
		if t.Kind() != reflect.Pointer || !t.Implements(messageType) {
			return typed.SpecMethods{}, false
		}
		return typed.SpecMethods{Copy: cloneMessage, Equal: equalMessages, Size: sizeMessage}, true
	})
}

// message returns spec as a valid message: an empty one for a nil
// pointer.
func message(spec any) protoreflect.ProtoMessage {
	m := spec.(proto.Message)
	if !m.ProtoReflect().IsValid() {
		return m.ProtoReflect().Type().New().Interface()
	}
	return m
}

func cloneMessage(spec any) any {
	m := spec.(proto.Message)
	if !m.ProtoReflect().IsValid() {
		return spec // nil stays nil
	}
	return proto.Clone(m)
}

func equalMessages(a, b any) bool { return proto.Equal(message(a), message(b)) }

func sizeMessage(spec any) int { return proto.Size(spec.(proto.Message)) }

// isMessage reports whether S is a generated message, or a message held
// by value (a struct whose pointer is one), which cannot be a spec.
func isMessage[S any]() (pointer, byValue bool) {
	t := reflect.TypeFor[S]()
	switch {
	case t.Kind() == reflect.Pointer && t.Implements(messageType):
		return true, false
	case t.Kind() == reflect.Struct && reflect.PointerTo(t).Implements(messageType):
		return false, true
	}
	return false, false
}

// deterministic encodes maps in key order: one spec, one encoding.
var deterministic = proto.MarshalOptions{Deterministic: true}

// registerMessage registers typed.Resource[S, D], whose spec S is a
// pointer to a generated message, with its specs encoded by
// proto.Marshal. It probes that a message of the type round-trips: one
// that cannot be encoded empty (a proto2 required field) is refused.
func registerMessage[S any, D typed.DefinitionProvider](reg *codec.Registry) error {
	newMessage := func() proto.Message {
		var zero S
		return any(zero).(proto.Message).ProtoReflect().Type().New().Interface()
	}
	if err := probeMessage(newMessage()); err != nil {
		return err
	}
	return codec.RegisterWith[S, D](reg, codec.SpecEncoding[S]{
		Format: codec.FormatProtobuf,
		Append: func(dst []byte, s *S) ([]byte, error) {
			return deterministic.MarshalAppend(dst, message(*s))
		},
		Decode: func(data []byte, s *S) error {
			m := newMessage()
			if err := proto.Unmarshal(data, m); err != nil {
				return err
			}
			*s = m.(S)
			return nil
		},
	})
}

// errNoRoundTrip is wrapped by the refusal of a message type whose values
// do not survive an encoding.
var errNoRoundTrip = errors.New("its messages do not round-trip through protobuf")

// probeMessage encodes an empty message of the type and checks that it
// decodes equal.
func probeMessage(m proto.Message) error {
	b, err := deterministic.Marshal(m)
	if err != nil {
		return fmt.Errorf("%w: an empty %s does not encode (%v); a proto2 message with required fields cannot be a spec: make them optional",
			errNoRoundTrip, m.ProtoReflect().Descriptor().FullName(), err)
	}
	back := m.ProtoReflect().Type().New().Interface()
	if err := proto.Unmarshal(b, back); err != nil || !proto.Equal(m, back) {
		return fmt.Errorf("%w: an empty %s does not decode equal (%v)", errNoRoundTrip, m.ProtoReflect().Descriptor().FullName(), err)
	}
	return nil
}
