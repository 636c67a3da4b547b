package remote

import (
	"context"
	"math"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// The flow of a watch: the served state's watch sends into a channel of
// watchChanCap events; the call's goroutine sends them on in messages of
// at most batchEvents events (and the message size bound), one message
// per credit the client granted, and a client grants at most maxCredits
// ahead. So a client that does not read holds at most maxCredits messages
// in flight and watchChanCap events in the channel: the state's watch then
// waits, and the state coalesces what it has not delivered (rule S12).
const (
	watchChanCap = 8
	batchEvents  = 32
	maxCredits   = 2
)

// Watch serves state.State.Watch, WatchKind and WatchKindAggregated (see
// the protocol in state.proto).
func (s *Server) Watch(stream pb.State_WatchServer) (err error) {
	defer s.recoverCall("Watch", &err)
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	if err := s.wire.malformed(first); err != nil {
		return err
	}
	req := first.GetRequest()
	if req == nil {
		return invalid("watch: the first message must be the request")
	}
	st, err := s.stateOf(ctx)
	if err != nil {
		return err
	}
	release, err := s.limits.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ch := make(chan state.Event, watchChanCap)
	if err := s.startWatch(wctx, st, req, ch); err != nil {
		return err
	}
	if err := stream.Send(&pb.WatchServerMessage{Established: true}); err != nil {
		return err
	}
	cr := &credits{wake: make(chan struct{}, 1)}
	go cr.receive(stream, s.wire, cancel)
	return s.pump(wctx, stream, ch, cr, req.GetSpecJson())
}

// startWatch starts the served state's watch of the request, or returns
// the status of its refusal. On a resumption, a bookmark the state
// refuses is reported as unknown (the request was accepted before, so the
// bookmark is what it refuses).
func (s *Server) startWatch(ctx context.Context, st state.State, req *pb.WatchRequest, ch chan state.Event) error {
	var err error
	switch {
	case (req.Pointer == nil) == (req.Kind == nil):
		return invalid("watch: give exactly one of a pointer and a kind")
	case req.TailEvents < 0 || req.TailEvents > math.MaxInt32:
		return invalid("watch: tail events %d out of range", req.TailEvents)
	case req.Pointer != nil:
		if req.BootstrapContents || len(req.LabelQueries) > 0 || req.IdRegexp != "" {
			return invalid("watch: a single-resource watch takes no bootstrap contents, label or ID query")
		}
		ptr, perr := s.knownPointer(req.Pointer)
		if perr != nil {
			return perr
		}
		opts := []state.WatchOption{state.WithTailEvents(int(req.TailEvents))}
		if req.StartFromBookmark != nil {
			opts = append(opts, state.WithStartFromBookmark(state.Bookmark(req.StartFromBookmark)))
		}
		err = st.Watch(ctx, ptr, ch, opts...)
	default:
		kind, kerr := s.knownKind(req.Kind)
		if kerr != nil {
			return kerr
		}
		opts, oerr := watchKindOptions(req)
		if oerr != nil {
			return invalid("watch %s: %v", resource.KindString(kind), oerr)
		}
		err = st.WatchKind(ctx, kind, ch, opts...)
	}
	if err == nil {
		return nil
	}
	if req.Resume && (state.IsInvalidError(err) || state.IsBufferOverrunError(err)) {
		return toStatus(bookmarkUnknown(err)).Err()
	}
	return toStatus(err).Err()
}

// watchKindOptions returns the options of a WatchKind request.
func watchKindOptions(req *pb.WatchRequest) ([]state.WatchKindOption, error) {
	q, err := queriesFromPB(req.LabelQueries)
	if err != nil {
		return nil, err
	}
	idq, err := idQueryFromPB(req.IdRegexp)
	if err != nil {
		return nil, err
	}
	opts := []state.WatchKindOption{
		state.WithBootstrapContents(req.BootstrapContents),
		state.WithKindTailEvents(int(req.TailEvents)),
		func(o *state.WatchKindOptions) {
			o.LabelQueries = q
			o.IDQuery = idq
		},
	}
	if req.StartFromBookmark != nil {
		opts = append(opts, state.WithKindStartFromBookmark(state.Bookmark(req.StartFromBookmark)))
	}
	return opts, nil
}

// credits counts the messages a watch's client allows the server to send.
type credits struct {
	n    atomic.Int64
	wake chan struct{} // capacity 1: a grant arrived
}

// receive reads the client's grants until the call ends; a message that
// is not a grant, or a grant beyond maxCredits, ends the watch with
// InvalidArgument.
func (c *credits) receive(stream pb.State_WatchServer, wire *wireCodec, cancel context.CancelCauseFunc) {
	for {
		m, err := stream.Recv()
		if err != nil {
			return
		}
		if err := wire.malformed(m); err != nil {
			cancel(err)
			return
		}
		if m.Request != nil || m.Credits == 0 || c.n.Add(int64(m.Credits)) > maxCredits {
			cancel(invalid("watch: protocol violation: a second request, an empty grant, or more than %d messages granted ahead", maxCredits))
			return
		}
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// take waits for a credit and takes it.
func (c *credits) take(ctx context.Context) error {
	for c.n.Load() == 0 {
		select {
		case <-c.wake:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	c.n.Add(-1)
	return nil
}

// pump sends the watch's events to the client until the watch ends: the
// client leaves (the context is done), or the state sends an Errored
// event (sent on, then the call ends).
func (s *Server) pump(ctx context.Context, stream pb.State_WatchServer, ch <-chan state.Event, cr *credits, withJSON bool) error {
	var pending *pb.Event
	for {
		if err := cr.take(ctx); err != nil {
			return causeStatus(err)
		}
		msg, size := &pb.WatchServerMessage{}, 0
		for len(msg.Events) < batchEvents {
			if pending == nil {
				ev, ok, err := receiveEvent(ctx, ch, len(msg.Events) == 0)
				if err != nil {
					return causeStatus(err)
				}
				if !ok {
					break
				}
				if pending = s.encodeEvent(ev, withJSON); pending == nil {
					continue
				}
			}
			n := proto.Size(pending) + 8
			if len(msg.Events) > 0 && size+n > s.o.maxMessage-64 {
				break
			}
			msg.Events = append(msg.Events, pending)
			size += n
			if pending.Type == pb.EventType_EVENT_ERRORED {
				return stream.Send(msg)
			}
			pending = nil
		}
		if err := stream.Send(msg); err != nil {
			return err
		}
	}
}

// receiveEvent returns the next event of ch: waiting for it when block is
// set, else only one already there (ok false when none is).
func receiveEvent(ctx context.Context, ch <-chan state.Event, block bool) (state.Event, bool, error) {
	if !block {
		select {
		case ev := <-ch:
			return ev, true, nil
		default:
			return state.Event{}, false, nil
		}
	}
	select {
	case ev := <-ch:
		return ev, true, nil
	case <-ctx.Done():
		return state.Event{}, false, context.Cause(ctx)
	}
}

// causeStatus returns the status a watch ends with for the cause of its
// end: a protocol violation's own status, else Canceled.
func causeStatus(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.Canceled, "remote: watch ended: "+err.Error())
}

// encodeEvent returns ev on the wire, nil for an event not sent (Noop, an
// unknown type). A resource that cannot be sent turns the event into an
// Errored one naming it.
func (s *Server) encodeEvent(ev state.Event, withJSON bool) *pb.Event {
	m := &pb.Event{Type: pb.EventType(ev.Type), Bookmark: ev.Bookmark, Revision: ev.Revision}
	switch ev.Type {
	case state.Created, state.Updated, state.Destroyed:
		var err error
		if m.Resource, err = s.encodeWatched(ev.Resource, ev.Type == state.Destroyed, withJSON); err == nil && ev.Old != nil {
			m.Old, err = s.encodeWatched(ev.Old, false, withJSON)
		}
		if err != nil {
			return &pb.Event{Type: pb.EventType_EVENT_ERRORED, Error: errorToPB(err)}
		}
	case state.Bootstrapped:
	case state.Errored:
		m.Error = errorToPB(ev.Error)
	default:
		return nil
	}
	return m
}

// encodeWatched returns a watched resource on the wire; for a Destroyed
// event, a tombstone (resource.IsTombstone), or a resource without version
// or spec, is the pointer-only resource of a single-resource watch (rule
// S8), which the client turns back into a tombstone.
func (s *Server) encodeWatched(r resource.Resource, destroyed, withJSON bool) (*pb.Resource, error) {
	if r == nil || r.Metadata() == nil {
		return nil, status.Error(codes.Internal, "remote: the state sent an event without a resource")
	}
	md := r.Metadata()
	if destroyed && (resource.IsTombstone(r) || md.Version() == resource.VersionUndefined && r.Spec() == nil) {
		return &pb.Resource{Metadata: &pb.Metadata{Id: md.ID()}, PointerOnly: true}, nil
	}
	return s.enc.get(r, true, withJSON, func() (*pb.Resource, error) { return s.encodeStored(r, true, withJSON) })
}
