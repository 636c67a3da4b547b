package remote_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

const badNS = "bad"

// rawServed serves a fresh inmem state on loopback TCP and returns it,
// a raw protocol client and a remote client of it.
func rawServed(t *testing.T) (state.State, pb.StateClient, state.State) {
	t.Helper()
	st := inmem.NewState()
	d := serve(t, listen(t, "tcp"), st)
	return st, pb.NewStateClient(dial(t, d.Addr)), client(t, d.Addr)
}

// revision returns the revision of an inmem state: it moves with every
// write.
func revision(t *testing.T, st state.State) uint64 {
	t.Helper()
	rev, err := st.(state.RevisionReporter).Revision(context.Background())
	require.NoError(t, err)
	return rev
}

// goodResource is a well-formed IntResource on the wire.
func goodResource(id string) *pb.Resource {
	return &pb.Resource{
		Metadata: &pb.Metadata{Namespace: badNS, Type: conformance.IntResourceType, Id: id},
		Spec:     []byte(`{"Value":1}`),
	}
}

// with returns goodResource("x") changed by fn.
func with(fn func(*pb.Resource)) *pb.Resource {
	r := goodResource("x")
	fn(r)
	return r
}

// TestN4_MalformedRequestsAreRefusedNamingTheProblem: every malformed
// request gets a typed status whose message names what is wrong; nothing
// is written; the server keeps serving.
func TestN4_MalformedRequestsAreRefusedNamingTheProblem(t *testing.T) {
	ctx := testCtx(t)
	st, raw, cl := rawServed(t)
	require.NoError(t, cl.Create(ctx, conformance.NewIntResource(badNS, "kept", 1)))
	create := func(r *pb.Resource) error {
		_, err := raw.Create(ctx, &pb.CreateRequest{Resource: r})
		return err
	}
	bigPhase := pb.Phase(9)
	for _, tc := range []struct {
		name string
		call func() error
		code codes.Code
		want string
	}{
		{"create without resource", func() error { return create(nil) }, codes.InvalidArgument, "without a resource"},
		{"create without metadata", func() error { return create(&pb.Resource{Spec: []byte("{}")}) }, codes.InvalidArgument, "without metadata"},
		{"create with empty ID", func() error { return create(with(func(r *pb.Resource) { r.Metadata.Id = "" })) }, codes.InvalidArgument, "empty"},
		{"create of unknown type", func() error { return create(with(func(r *pb.Resource) { r.Metadata.Type = "Nope.test" })) }, codes.InvalidArgument, `"Nope.test" is not registered`},
		{"create with unknown phase", func() error { return create(with(func(r *pb.Resource) { r.Metadata.Phase = 7 })) }, codes.InvalidArgument, "unknown phase 7"},
		{"create with unknown encoding", func() error { return create(with(func(r *pb.Resource) { r.SpecFormat = 9 })) }, codes.InvalidArgument, "unknown format 9"},
		{"create with encoding out of range", func() error { return create(with(func(r *pb.Resource) { r.SpecFormat = 300 })) }, codes.InvalidArgument, "spec format 300 out of range"},
		{"create with a spec that does not decode", func() error { return create(with(func(r *pb.Resource) { r.Spec = []byte(`{"Value":`) })) }, codes.InvalidArgument, "decode"},
		{"create with a spec of the wrong shape", func() error { return create(with(func(r *pb.Resource) { r.Spec = []byte(`{"Value":"x"}`) })) }, codes.InvalidArgument, "Value"},
		{"create with an empty finalizer", func() error { return create(with(func(r *pb.Resource) { r.Metadata.Finalizers = []string{""} })) }, codes.InvalidArgument, "empty or repeated finalizer"},
		{"create with a bad time", func() error { return create(with(func(r *pb.Resource) { r.Metadata.CreatedNanos = -1 })) }, codes.InvalidArgument, "-1 nanoseconds"},
		{"create of a pointer-only resource", func() error { return create(with(func(r *pb.Resource) { r.PointerOnly = true })) }, codes.InvalidArgument, "pointer-only"},
		{"update with unknown expected phase", func() error {
			_, err := raw.Update(ctx, &pb.UpdateRequest{Resource: goodResource("kept"), ExpectedPhase: &bigPhase})
			return err
		}, codes.InvalidArgument, "unknown expected phase 9"},
		{"check of no write", func() error { _, err := raw.CheckWrite(ctx, &pb.CheckWriteRequest{}); return err }, codes.InvalidArgument, "exactly one of create and update"},
		{"check of two writes", func() error {
			_, err := raw.CheckWrite(ctx, &pb.CheckWriteRequest{Create: &pb.CreateRequest{Resource: goodResource("y")}, Update: &pb.UpdateRequest{Resource: goodResource("kept")}})
			return err
		}, codes.InvalidArgument, "exactly one of create and update"},
		{"check of a create without resource", func() error {
			_, err := raw.CheckWrite(ctx, &pb.CheckWriteRequest{Create: &pb.CreateRequest{}})
			return err
		}, codes.InvalidArgument, "without a resource"},
		{"get without pointer", func() error { _, err := raw.Get(ctx, &pb.GetRequest{}); return err }, codes.InvalidArgument, "without a resource pointer"},
		{"destroy of unknown type", func() error {
			_, err := raw.Destroy(ctx, &pb.DestroyRequest{Pointer: &pb.Pointer{Namespace: badNS, Type: "Nope.test", Id: "kept"}})
			return err
		}, codes.InvalidArgument, "not registered"},
		{"list with a bad ID expression", func() error { return list(ctx, raw, &pb.ListRequest{Kind: intKind(), IdRegexp: "("}) }, codes.InvalidArgument, "ID regular expression"},
		{"list with an unknown label operation", func() error {
			return list(ctx, raw, &pb.ListRequest{Kind: intKind(), LabelQueries: []*pb.LabelQuery{{Terms: []*pb.LabelTerm{{Key: "k", Op: 99}}}}})
		}, codes.InvalidArgument, "unknown operation 99"},
		{"list without kind", func() error { return list(ctx, raw, &pb.ListRequest{}) }, codes.InvalidArgument, "without a resource kind"},
		{"watch of a pointer and a kind", func() error {
			return watchOnce(ctx, raw, &pb.WatchClientMessage{Request: &pb.WatchRequest{Kind: intKind(), Pointer: &pb.Pointer{Namespace: badNS, Type: conformance.IntResourceType, Id: "kept"}}})
		}, codes.InvalidArgument, "exactly one of a pointer and a kind"},
		{"watch of nothing", func() error { return watchOnce(ctx, raw, &pb.WatchClientMessage{Request: &pb.WatchRequest{}}) }, codes.InvalidArgument, "exactly one"},
		{"watch with negative tail", func() error {
			return watchOnce(ctx, raw, &pb.WatchClientMessage{Request: &pb.WatchRequest{Kind: intKind(), TailEvents: -1}})
		}, codes.InvalidArgument, "tail events -1"},
		{"watch with bootstrap and a bookmark", func() error {
			return watchOnce(ctx, raw, &pb.WatchClientMessage{Request: &pb.WatchRequest{Kind: intKind(), BootstrapContents: true, StartFromBookmark: []byte("x")}})
		}, codes.InvalidArgument, "exclusive"},
		{"watch with a malformed bookmark", func() error {
			return watchOnce(ctx, raw, &pb.WatchClientMessage{Request: &pb.WatchRequest{Kind: intKind(), StartFromBookmark: []byte("x")}})
		}, codes.InvalidArgument, "bookmark"},
		{"watch that starts with credits", func() error { return watchOnce(ctx, raw, &pb.WatchClientMessage{Credits: 1}) }, codes.InvalidArgument, "first message must be the request"},
		{"a request larger than the server's bound", func() error {
			return create(with(func(r *pb.Resource) { r.Spec = []byte(`{"Value":1,"Pad":"` + strings.Repeat("x", 5<<20) + `"}`) }))
		}, codes.ResourceExhausted, "larger than max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := revision(t, st)
			err := tc.call()
			require.Error(t, err)
			assert.Equal(t, tc.code, status.Code(err), "%v", err)
			assert.Contains(t, status.Convert(err).Message(), tc.want)
			assert.Equal(t, before, revision(t, st), "nothing written")
			r, err := cl.Get(ctx, resource.NewPointer(badNS, conformance.IntResourceType, "kept"))
			require.NoError(t, err, "the server keeps serving")
			assert.Equal(t, 1, r.(*conformance.IntResource).TypedSpec().Value)
		})
	}
}

func intKind() *pb.Kind { return &pb.Kind{Namespace: badNS, Type: conformance.IntResourceType} }

// list runs a List call to its end.
func list(ctx context.Context, raw pb.StateClient, req *pb.ListRequest) error {
	s, err := raw.List(ctx, req)
	if err != nil {
		return err
	}
	for {
		if _, err := s.Recv(); err != nil {
			return err
		}
	}
}

// watchOnce sends first on a new Watch call and returns how the call
// ended (nil when the server set the watch up).
func watchOnce(ctx context.Context, raw pb.StateClient, first *pb.WatchClientMessage) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := raw.Watch(ctx)
	if err != nil {
		return err
	}
	if err := s.Send(first); err != nil {
		return err
	}
	m, err := s.Recv()
	if err != nil {
		return err
	}
	if m.Established {
		return nil
	}
	return status.Error(codes.Internal, "not established")
}

// TestN4_WatchProtocolViolationEndsTheWatch: a client that sends a second
// request, or grants more messages than allowed, has its watch ended
// with InvalidArgument.
func TestN4_WatchProtocolViolationEndsTheWatch(t *testing.T) {
	ctx := testCtx(t)
	_, raw, _ := rawServed(t)
	for name, second := range map[string]*pb.WatchClientMessage{
		"second request":   {Request: &pb.WatchRequest{Kind: intKind()}},
		"too many credits": {Credits: 1000},
		"empty grant":      {},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := raw.Watch(ctx)
			require.NoError(t, err)
			require.NoError(t, s.Send(&pb.WatchClientMessage{Request: &pb.WatchRequest{Kind: intKind()}}))
			m, err := s.Recv()
			require.NoError(t, err)
			require.True(t, m.Established)
			require.NoError(t, s.Send(second))
			_, err = s.Recv()
			assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			assert.Contains(t, status.Convert(err).Message(), "protocol violation")
		})
	}
}

// TestN4_UnknownTypesAreRefusedByTheClientBeforeSending: the client
// refuses a type its registry does not know, with the codec's error (of
// the invalid class) naming the type and the fix.
func TestN4_UnknownTypesAreRefusedByTheClientBeforeSending(t *testing.T) {
	ctx := testCtx(t)
	_, _, cl := rawServed(t)
	ptr := resource.NewPointer(badNS, "Nope.test", "x")
	_, err := cl.Get(ctx, ptr)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.Contains(t, err.Error(), `"Nope.test" is not registered`)
	err = cl.WatchKind(ctx, ptr, make(chan state.Event))
	assert.True(t, state.IsInvalidError(err), "%v", err)
}

// TestN4_BytesThatAreNotARequest: bytes that are not a protobuf message
// are answered with InvalidArgument naming the message, not with gRPC's
// Internal, on every method; nothing is written.
func TestN4_BytesThatAreNotARequest(t *testing.T) {
	ctx := testCtx(t)
	st := inmem.NewState()
	d := serve(t, listen(t, "tcp"), st)
	conn := dial(t, d.Addr)
	junk := []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}
	for _, method := range fuzzMethods {
		before := revision(t, st)
		err := fuzzCall(ctx, conn, method, junk, nil)
		assert.Equal(t, codes.InvalidArgument, status.Code(err), "%s: %v", method, err)
		assert.Contains(t, status.Convert(err).Message(), "malformed", method)
		assert.Equal(t, before, revision(t, st))
	}
}
