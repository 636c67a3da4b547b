package remote

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// Unstructured is a resource of a type the client was not compiled with:
// its metadata and its spec as JSON (the server renders the spec of its
// own Go type with encoding/json). A client made with [WithUnstructured]
// reads and watches the types its codec registry does not know as
// Unstructured resources, and writes an Unstructured by sending its JSON,
// which the server decodes into the type it registered (for a type whose
// specs are JSON, or protobuf specs that JSON holds losslessly). Tools
// print them with the type's definition (its columns read the JSON; see
// package definition and [Definitions]).
type Unstructured struct {
	md   resource.Metadata
	spec json.RawMessage
}

// NewUnstructured returns an Unstructured resource with metadata md and a
// copy of the JSON spec.
func NewUnstructured(md resource.Metadata, spec json.RawMessage) *Unstructured {
	return &Unstructured{md: md, spec: bytes.Clone(spec)}
}

// Metadata returns the resource's metadata.
func (u *Unstructured) Metadata() *resource.Metadata { return &u.md }

// Spec returns the spec as JSON (a json.RawMessage): never change it.
func (u *Unstructured) Spec() any { return u.spec }

// SpecJSON returns the spec as JSON: never change it.
func (u *Unstructured) SpecJSON() json.RawMessage { return u.spec }

// DeepCopy returns a copy that shares nothing with u.
func (u *Unstructured) DeepCopy() resource.Resource {
	return &Unstructured{md: u.md.Copy(), spec: bytes.Clone(u.spec)}
}

// WithUnstructured makes the client serve the types its codec registry
// does not know as [Unstructured] resources (see there), instead of
// refusing them.
func WithUnstructured() ClientOption {
	return func(o *clientOptions) { o.unstructured = true }
}

// unknown reports whether the client handles typ as Unstructured: a type
// its registry does not know, with WithUnstructured.
func (c *client) unknown(typ resource.Type) bool {
	return c.o.unstructured && !c.coder.reg.Registered(typ)
}

// validateType checks that the client can read and write typ: its
// registry knows it, or it is handled as Unstructured.
func (c *client) validateType(typ resource.Type) error {
	if c.unknown(typ) {
		return nil
	}
	return c.coder.reg.ValidateType(typ)
}

// decodeUnstructured returns the Unstructured resource m carries.
func decodeUnstructured(m *pb.Resource, kind resource.Kind) (resource.Resource, error) {
	md, err := metadataFromPB(m.GetMetadata(), kind)
	if err != nil {
		return nil, err
	}
	if len(m.SpecJson) == 0 || !json.Valid(m.SpecJson) {
		return nil, fmt.Errorf("%s: the server sent no JSON rendering of the spec of a type the client does not know", resource.PointerString(&md))
	}
	return &Unstructured{md: md, spec: m.SpecJson}, nil
}

// encodeUnstructured returns u on the wire: its JSON as a JSON spec.
func encodeUnstructured(u *Unstructured) (*pb.Resource, error) {
	if !json.Valid(u.spec) {
		return nil, &codec.EncodeError{Resource: resource.PointerString(&u.md), Err: fmt.Errorf("the spec is not JSON")}
	}
	return &pb.Resource{Metadata: metadataToPB(&u.md, false), Spec: u.spec, SpecFormat: uint32(codec.FormatJSON)}, nil
}
