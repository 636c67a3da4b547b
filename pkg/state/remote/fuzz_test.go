package remote_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// rawCodec sends and receives a call's message as the bytes given: the
// fuzzer's bytes reach the server's decoding as they are.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }

func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// The methods the fuzzer calls, by the first byte of its input.
var fuzzMethods = []string{"Get", "List", "Create", "Update", "Destroy", "Watch", "KindHead", "Definitions", "CheckWrite"}

// FuzzServerRequest sends arbitrary bytes as the request of every method
// of the server (for Watch, as its first and second messages): whatever
// they are, the call ends with a typed status (never Internal or Unknown,
// which would be a panic or a bug), a failed call writes nothing, a
// CheckWrite never writes (rule N5), and the server keeps serving (rule
// N4).
func FuzzServerRequest(f *testing.F) {
	st := inmem.NewState()
	d := serve(f, listen(f, "tcp"), st)
	conn := dial(f, d.Addr)
	ctx := context.Background()
	if err := st.Create(ctx, conformance.NewIntResource(badNS, "kept", 1)); err != nil {
		f.Fatal(err)
	}
	for _, seed := range fuzzSeeds() {
		f.Add(seed.method, seed.payload, seed.second)
	}
	kept := resource.NewPointer(badNS, conformance.IntResourceType, "kept")
	f.Fuzz(func(t *testing.T, method byte, payload, second []byte) {
		before, _ := st.(state.RevisionReporter).Revision(ctx)
		name := fuzzMethods[int(method)%len(fuzzMethods)]
		err := fuzzCall(ctx, conn, name, payload, second)
		if code := status.Code(err); code == codes.Internal || code == codes.Unknown {
			t.Fatalf("%s: %v", name, err)
		}
		after, _ := st.(state.RevisionReporter).Revision(ctx)
		if err != nil && after != before {
			t.Fatalf("a failed call wrote: %v", err)
		}
		if name == "CheckWrite" && after != before {
			t.Fatalf("a CheckWrite wrote (rule N5): %v", err)
		}
		if _, err := st.Get(ctx, kept); err != nil && !state.IsNotFoundError(err) {
			t.Fatalf("the state stopped serving: %v", err)
		}
		raw := pb.NewStateClient(conn)
		if _, err := raw.Definitions(ctx, &pb.DefinitionsRequest{}); err != nil {
			t.Fatalf("the server stopped serving: %v", err)
		}
	})
}

// fuzzCall calls method with payload as its request (and second as a
// Watch's second message) and returns how it ended.
func fuzzCall(ctx context.Context, conn *grpc.ClientConn, method string, payload, second []byte) error {
	// A watch that is set up stays open: it is left after two messages,
	// or when this bound ends it.
	bound := 10 * time.Second
	if method == "Watch" {
		bound = 200 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	full := "/resgraph.remote.v1.State/" + method
	codec := grpc.ForceCodec(rawCodec{})
	switch method {
	case "List", "Watch":
		desc := &grpc.StreamDesc{ServerStreams: true, ClientStreams: method == "Watch"}
		s, err := conn.NewStream(ctx, desc, full, codec)
		if err != nil {
			return err
		}
		err = s.SendMsg(&payload)
		if err == nil && method == "Watch" && second != nil {
			err = s.SendMsg(&second)
		}
		if err == nil {
			err = s.CloseSend()
		}
		// io.EOF from SendMsg: the server has ended the stream (it refused
		// the first message before the second was sent); the status it
		// ended with comes from RecvMsg.
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		for range 2 {
			var out []byte
			if err := s.RecvMsg(&out); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return err
			}
		}
		return nil
	default:
		var out []byte
		return conn.Invoke(ctx, full, &payload, &out, codec)
	}
}

type fuzzSeed struct {
	method          byte
	payload, second []byte
}

// fuzzSeeds are well-formed requests of every method, and a few broken
// ones.
func fuzzSeeds() []fuzzSeed {
	m := func(msg proto.Message) []byte {
		b, err := proto.Marshal(msg)
		if err != nil {
			panic(err)
		}
		return b
	}
	ptr := &pb.Pointer{Namespace: badNS, Type: conformance.IntResourceType, Id: "kept"}
	res := &pb.Resource{Metadata: &pb.Metadata{Namespace: badNS, Type: conformance.IntResourceType, Id: "new", Version: 1}, Spec: []byte(`{"Value":2}`)}
	checked := &pb.Resource{Metadata: &pb.Metadata{Namespace: badNS, Type: conformance.IntResourceType, Id: "checked"}, Spec: []byte(`{"Value":3}`)}
	watch := m(&pb.WatchClientMessage{Request: &pb.WatchRequest{Kind: intKind(), BootstrapContents: true}})
	return []fuzzSeed{
		{0, m(&pb.GetRequest{Pointer: ptr}), nil},
		{1, m(&pb.ListRequest{Kind: intKind(), IdRegexp: "^k"}), nil},
		{2, m(&pb.CreateRequest{Resource: res, Owner: "o"}), nil},
		{3, m(&pb.UpdateRequest{Resource: res}), nil},
		{4, m(&pb.DestroyRequest{Pointer: ptr}), nil},
		{5, watch, m(&pb.WatchClientMessage{Credits: 2})},
		{5, watch, m(&pb.WatchClientMessage{Credits: 9})},
		{5, m(&pb.WatchClientMessage{Request: &pb.WatchRequest{Pointer: ptr, TailEvents: 3}}), nil},
		{6, m(&pb.KindHeadRequest{Kind: intKind()}), nil},
		{7, nil, nil},
		{8, m(&pb.CheckWriteRequest{Create: &pb.CreateRequest{Resource: checked}}), nil},
		{8, m(&pb.CheckWriteRequest{Create: &pb.CreateRequest{Resource: res}}), nil},
		{8, m(&pb.CheckWriteRequest{Update: &pb.UpdateRequest{Resource: res}}), nil},
		{8, m(&pb.CheckWriteRequest{Create: &pb.CreateRequest{Resource: res}, Update: &pb.UpdateRequest{Resource: res}}), nil},
		{8, nil, nil},
		{2, []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, nil},
		{5, []byte("garbage"), []byte{0x10}},
	}
}
