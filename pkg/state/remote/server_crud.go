package remote

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// listChunk bounds the resources of one List message.
const listChunk = 512

// Get serves state.State.Get.
func (s *Server) Get(ctx context.Context, req *pb.GetRequest) (_ *pb.GetResponse, err error) {
	defer s.recoverCall("Get", &err)
	st, ptr, err := s.beginPointer(ctx, req)
	if err != nil {
		return nil, err
	}
	var rev uint64
	r, err := st.Get(ctx, ptr, state.WithReadOnlyGet(), state.WithGetRevision(&rev))
	if err != nil {
		return nil, toStatus(err).Err()
	}
	m, err := s.encodeStored(r, false, req.GetSpecJson())
	if err != nil {
		return nil, err
	}
	return &pb.GetResponse{Resource: m, Revision: rev}, nil
}

// List serves state.State.List, in messages of at most listChunk
// resources and the message size bound.
func (s *Server) List(req *pb.ListRequest, stream pb.State_ListServer) (err error) {
	defer s.recoverCall("List", &err)
	ctx := stream.Context()
	st, kind, err := s.beginKind(ctx, req)
	if err != nil {
		return err
	}
	opts, err := listOptions(req)
	if err != nil {
		return invalid("list %s: %v", resource.KindString(kind), err)
	}
	var rev uint64
	list, err := st.List(ctx, kind, append(opts, state.WithListRevision(&rev))...)
	if err != nil {
		return toStatus(err).Err()
	}
	msg, size := &pb.ListResponse{Revision: rev}, 0
	for _, r := range list.Items {
		m, err := s.encodeStored(r, true, req.GetSpecJson())
		if err != nil {
			return err
		}
		n := proto.Size(m) + 8
		if len(msg.Resources) > 0 && (size+n > s.o.maxMessage || len(msg.Resources) == listChunk) {
			if err := stream.Send(msg); err != nil {
				return err
			}
			msg, size = &pb.ListResponse{}, 0
		}
		msg.Resources = append(msg.Resources, m)
		size += n
	}
	return stream.Send(msg)
}

// listOptions returns the options of a List request.
func listOptions(req *pb.ListRequest) ([]state.ListOption, error) {
	opts := []state.ListOption{state.WithReadOnlyList()}
	q, err := queriesFromPB(req.GetLabelQueries())
	if err != nil {
		return nil, err
	}
	idq, err := idQueryFromPB(req.GetIdRegexp())
	if err != nil {
		return nil, err
	}
	return append(opts, func(o *state.ListOptions) {
		o.LabelQueries = q
		o.IDQuery = idq
	}), nil
}

// Create serves state.State.Create.
func (s *Server) Create(ctx context.Context, req *pb.CreateRequest) (_ *pb.WriteResponse, err error) {
	defer s.recoverCall("Create", &err)
	return s.write(ctx, req, req.GetResource(), createFunc(ctx, req), false)
}

// Update serves state.State.Update.
func (s *Server) Update(ctx context.Context, req *pb.UpdateRequest) (_ *pb.WriteResponse, err error) {
	defer s.recoverCall("Update", &err)
	return s.write(ctx, req, req.GetResource(), updateFunc(ctx, req), false)
}

// writeFunc makes a write of r to st: a request's write, as Create,
// Update and CheckWrite serve it.
type writeFunc func(st state.State, r resource.Resource) error

// createFunc is the write of a Create request.
func createFunc(ctx context.Context, req *pb.CreateRequest) writeFunc {
	return func(st state.State, r resource.Resource) error {
		return st.Create(ctx, r, state.WithCreateOwner(req.GetOwner()))
	}
}

// updateFunc is the write of an Update request.
func updateFunc(ctx context.Context, req *pb.UpdateRequest) writeFunc {
	return func(st state.State, r resource.Resource) error {
		opts := []state.UpdateOption{state.WithUpdateOwner(req.GetOwner()), state.WithExpectedPhaseAny()}
		if req.ExpectedPhase != nil {
			p := req.GetExpectedPhase()
			if p != pb.Phase_PHASE_RUNNING && p != pb.Phase_PHASE_TEARING_DOWN {
				return state.NewInvalidError(r.Metadata(), "remote: update: unknown expected phase %d", p)
			}
			opts = append(opts, state.WithExpectedPhase(resource.Phase(p)))
		}
		return st.Update(ctx, r, opts...)
	}
}

// write serves a write of the resource m by do: it refuses a request
// that did not decode or whose resource does not, and answers with what
// the write set back in the resource. With check (CheckWrite), do writes
// to the served state's checks instead of the state ([checkState]), under
// the same access guard, and the answer is empty when they pass.
func (s *Server) write(ctx context.Context, req proto.Message, m *pb.Resource, do writeFunc, check bool) (*pb.WriteResponse, error) {
	if err := s.wire.malformed(req); err != nil {
		return nil, err
	}
	st, err := s.served(ctx, check)
	if err != nil {
		return nil, err
	}
	r, err := s.decodeRequest(m)
	if err != nil {
		return nil, err
	}
	err = do(st, r)
	switch {
	case check && errors.Is(err, errChecked):
		return &pb.WriteResponse{}, nil
	case err != nil:
		return nil, toStatus(err).Err()
	case check:
		return nil, status.Error(codes.Internal, "remote: CheckWrite: the write reached no check")
	}
	return writeResponse(r.Metadata()), nil
}

// begin starts serving a call: it refuses a request that did not decode
// and returns the state to serve.
func (s *Server) begin(ctx context.Context, req proto.Message) (state.State, error) {
	if err := s.wire.malformed(req); err != nil {
		return nil, err
	}
	return s.stateOf(ctx)
}

// kindRequest is a request about one kind.
type kindRequest interface {
	proto.Message
	GetKind() *pb.Kind
}

// beginKind is begin for a request about one kind: it also returns the
// kind, refused when the registry does not know its type.
func (s *Server) beginKind(ctx context.Context, req kindRequest) (state.State, resource.Kind, error) {
	st, err := s.begin(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	kind, err := s.knownKind(req.GetKind())
	return st, kind, err
}

// pointerRequest is a request about one resource.
type pointerRequest interface {
	proto.Message
	GetPointer() *pb.Pointer
}

// beginPointer is beginKind for a request about one resource.
func (s *Server) beginPointer(ctx context.Context, req pointerRequest) (state.State, resource.Pointer, error) {
	st, err := s.begin(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	ptr, err := s.knownPointer(req.GetPointer())
	return st, ptr, err
}

// Destroy serves state.State.Destroy.
func (s *Server) Destroy(ctx context.Context, req *pb.DestroyRequest) (_ *pb.DestroyResponse, err error) {
	defer s.recoverCall("Destroy", &err)
	st, ptr, err := s.beginPointer(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := st.Destroy(ctx, ptr, state.WithDestroyOwner(req.GetOwner())); err != nil {
		return nil, toStatus(err).Err()
	}
	return &pb.DestroyResponse{}, nil
}

// KindHead serves state.KindHeadReporter.KindHead; Unimplemented when
// the state does not report kind heads.
func (s *Server) KindHead(ctx context.Context, req *pb.KindHeadRequest) (_ *pb.KindHeadResponse, err error) {
	defer s.recoverCall("KindHead", &err)
	st, kind, err := s.beginKind(ctx, req)
	if err != nil {
		return nil, err
	}
	h, ok := st.(state.KindHeadReporter)
	if !ok {
		return nil, unsupported("report kind heads")
	}
	b, err := h.KindHead(ctx, kind)
	if err != nil {
		return nil, revisionStatus(err)
	}
	return &pb.KindHeadResponse{Bookmark: b}, nil
}

// Definitions serves the definitions of the registry's types.
func (s *Server) Definitions(ctx context.Context, req *pb.DefinitionsRequest) (_ *pb.DefinitionsResponse, err error) {
	defer s.recoverCall("Definitions", &err)
	if _, err := s.begin(ctx, req); err != nil {
		return nil, err
	}
	if sub := SubjectOf(ctx); sub != nil {
		if err := sub.CheckBound(); err != nil {
			return nil, toStatus(err).Err()
		}
	}
	defs := s.coder.reg.Definitions().All()
	out := &pb.DefinitionsResponse{Definitions: make([]*pb.Definition, 0, len(defs))}
	for _, d := range defs {
		out.Definitions = append(out.Definitions, definitionToPB(d))
	}
	return out, nil
}

// Revision serves state.RevisionReporter.Revision; Unimplemented when the
// state does not number its changes.
func (s *Server) Revision(ctx context.Context, req *pb.RevisionRequest) (_ *pb.RevisionResponse, err error) {
	defer s.recoverCall("Revision", &err)
	st, err := s.begin(ctx, req)
	if err != nil {
		return nil, err
	}
	rr, ok := st.(state.RevisionReporter)
	if !ok {
		return nil, unsupported("number its changes")
	}
	rev, err := rr.Revision(ctx)
	if err != nil {
		return nil, revisionStatus(err)
	}
	return &pb.RevisionResponse{Revision: rev}, nil
}

// KindRevision serves state.RevisionReporter.KindRevision; Unimplemented
// when the state does not number its changes.
func (s *Server) KindRevision(ctx context.Context, req *pb.KindRevisionRequest) (_ *pb.KindRevisionResponse, err error) {
	defer s.recoverCall("KindRevision", &err)
	st, kind, err := s.beginKind(ctx, req)
	if err != nil {
		return nil, err
	}
	rr, ok := st.(state.RevisionReporter)
	if !ok {
		return nil, unsupported("number its changes")
	}
	last, at, err := rr.KindRevision(ctx, kind)
	if err != nil {
		return nil, revisionStatus(err)
	}
	return &pb.KindRevisionResponse{Last: last, At: at}, nil
}

// unsupported is the status of a question the served state cannot answer.
func unsupported(what string) error {
	return status.Error(codes.Unimplemented, "remote: the served state does not "+what)
}

// revisionStatus is the status of a failed question: Unimplemented for
// an error matching errors.ErrUnsupported.
func revisionStatus(err error) error {
	if errors.Is(err, errors.ErrUnsupported) {
		return status.Error(codes.Unimplemented, err.Error())
	}
	return toStatus(err).Err()
}

// knownPointer returns the pointer of a request, refusing an invalid one
// and one of a type the registry does not know.
func (s *Server) knownPointer(p *pb.Pointer) (resource.Pointer, error) {
	ptr, err := pointerFromPB(p)
	return known(s, ptr, err)
}

// knownKind is knownPointer for a kind.
func (s *Server) knownKind(k *pb.Kind) (resource.Kind, error) {
	kind, err := kindFromPB(k)
	return known(s, kind, err)
}

// known returns v, decoded from a request with the error err, as a status
// error when err is set or the registry does not know v's type.
func known[T interface{ Type() resource.Type }](s *Server, v T, err error) (T, error) {
	if err == nil {
		err = s.coder.reg.ValidateType(v.Type())
	}
	if err != nil {
		var none T
		return none, toStatus(err).Err()
	}
	return v, nil
}

// decodeRequest returns the resource of a write request, or an
// InvalidArgument status naming what is wrong with it.
func (s *Server) decodeRequest(m *pb.Resource) (resource.Resource, error) {
	if m == nil {
		return nil, invalid("write request without a resource")
	}
	if m.PointerOnly {
		return nil, invalid("write request with a pointer-only resource")
	}
	r, err := s.coder.decodeInput(m)
	if err != nil {
		return nil, invalid("%v", err)
	}
	return r, nil
}

// encodeStored returns a stored resource on the wire, or the status of a
// resource that cannot be sent: one the registry cannot encode
// (Internal), one larger than the message bound (ResourceExhausted).
func (s *Server) encodeStored(r resource.Resource, inKind, withJSON bool) (*pb.Resource, error) {
	m, err := s.coder.encode(r, inKind, withJSON)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "remote: a stored resource does not encode: %v", err)
	}
	if n := proto.Size(m); n > s.o.maxMessage-64 {
		return nil, status.Errorf(codes.ResourceExhausted, "remote: %s encodes to %d bytes, more than the message size bound %d (remote.WithMaxMessageSize)",
			resource.PointerString(r.Metadata()), n, s.o.maxMessage)
	}
	return m, nil
}

// writeResponse is what a write sets back in the caller's resource.
func writeResponse(md *resource.Metadata) *pb.WriteResponse {
	out := &pb.WriteResponse{Version: md.Version().Value()}
	out.CreatedSeconds, out.CreatedNanos = timeToPB(md.Created())
	out.UpdatedSeconds, out.UpdatedNanos = timeToPB(md.Updated())
	return out
}
