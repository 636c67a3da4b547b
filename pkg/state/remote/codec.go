package remote

import (
	"sync"

	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // the proto codec wrapped below
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// wireCodec is the server's codec of messages (installed by
// [Server.GRPCServerOptions]): gRPC's protobuf codec, except that bytes
// that are not a message of the expected kind do not fail the call
// before it reaches the server — gRPC would answer Internal, a class that
// means a server's fault. The codec records the failure instead, with the
// (reset) message it was decoding, and the call's handler answers it with
// InvalidArgument naming the problem (rule N4).
type wireCodec struct {
	base encoding.CodecV2
	// failed maps a message that did not decode to why (entries are
	// taken by malformed, which every handler calls on what it received).
	failed sync.Map
}

func newWireCodec() *wireCodec { return &wireCodec{base: encoding.GetCodecV2("proto")} }

func (c *wireCodec) Marshal(v any) (mem.BufferSlice, error) { return c.base.Marshal(v) }

func (c *wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.base.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return err
	}
	proto.Reset(m)
	c.failed.Store(m, err)
	return nil
}

func (c *wireCodec) Name() string { return "proto" }

// malformed returns the InvalidArgument status of a received message
// that did not decode, nil for one that did.
func (c *wireCodec) malformed(m proto.Message) error {
	if err, ok := c.failed.LoadAndDelete(m); ok {
		return invalid("malformed %s message: %v", m.ProtoReflect().Descriptor().Name(), err)
	}
	return nil
}
