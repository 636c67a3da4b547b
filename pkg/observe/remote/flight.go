package remote

import (
	"bytes"
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/observe/remote/internal/pb"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/runtime/plan"
)

// recordChunk is the most file bytes one message of a Record stream
// carries (gRPC's default message limit is 4 MiB).
var recordChunk = 1 << 20

// WithRecorder serves the daemon's flight recorder (the Recorder service,
// rule OB4): rec's recordings, written with reg (the daemon's types).
func WithRecorder(rec *recording.Recorder, reg *codec.Registry) ServerOption {
	return func(o *serverOptions) { o.recorder, o.codec = rec, reg }
}

// PlanFunc plans a change file (YAML or JSON, see plan.ParseChange)
// against the daemon's live state, writing nothing to it: typically
// plan.ParseChange with the daemon's types, then plan.Make with its live
// state and its controllers. A change it cannot plan (unknown types, a
// controller's output, a file that does not parse) is an error of the
// invalid class. It must be safe for concurrent use.
type PlanFunc func(ctx context.Context, change []byte) (*plan.Plan, error)

// WithPlanner serves plans of proposed changes (the Planner service, rule
// OB5).
func WithPlanner(f PlanFunc) ServerOption {
	return func(o *serverOptions) { o.planner = f }
}

// registerFlight adds the Recorder and Planner services that the options
// ask for.
func (s *Server) registerFlight(r grpc.ServiceRegistrar) {
	if s.o.recorder != nil {
		pb.RegisterRecorderServer(r, recorderServer{rec: s.o.recorder, reg: s.o.codec})
	}
	if s.o.planner != nil {
		pb.RegisterPlannerServer(r, plannerServer{plan: s.o.planner})
	}
}

type recorderServer struct {
	pb.UnimplementedRecorderServer
	rec *recording.Recorder
	reg *codec.Registry
}

// Record takes the recording asked for, writes it whole, and sends its
// bytes in chunks, the summary with the last.
func (s recorderServer) Record(req *pb.RecordRequest, stream grpc.ServerStreamingServer[pb.RecordChunk]) (err error) {
	defer guard("the recorder", &err)
	d := time.Duration(req.GetForNanos())
	if d < 0 || d > recording.MaxRecordFor {
		return status.Errorf(codes.InvalidArgument, "record: for %v: want 0 (the window now) up to %v", d, recording.MaxRecordFor)
	}
	rec, err := s.take(stream.Context(), d)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := recording.Write(&buf, rec, s.reg); err != nil {
		return status.Errorf(codes.Internal, "record: writing the recording: %v", err)
	}
	data := buf.Bytes()
	sum := summaryOf(rec, len(data))
	for {
		n := min(len(data), recordChunk)
		msg := &pb.RecordChunk{Data: data[:n]}
		if n == len(data) {
			msg.Summary = sum
		}
		if err := stream.Send(msg); err != nil {
			return err
		}
		if data = data[n:]; len(data) == 0 {
			return nil
		}
	}
}

// take takes the window now (d == 0) or records for d.
func (s recorderServer) take(ctx context.Context, d time.Duration) (*recording.Recording, error) {
	var rec *recording.Recording
	var err error
	if d == 0 {
		rec, err = s.rec.Take()
	} else {
		rec, err = s.rec.Record(ctx, d)
	}
	switch {
	case err == nil:
		return rec, nil
	case errors.Is(err, recording.ErrNotStarted):
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, recording.ErrStartedOver):
		return nil, status.Error(codes.Aborted, err.Error())
	case ctx.Err() != nil:
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return nil, status.Error(codes.Internal, err.Error())
}

func summaryOf(rec *recording.Recording, size int) *pb.RecordingSummary {
	s := &pb.RecordingSummary{
		Source: rec.Source, Reason: rec.Reason, StartUnixNano: rec.Start.UnixNano(), EndUnixNano: rec.End.UnixNano(),
		Kinds: uint32(len(rec.Kinds)), Initial: uint32(len(rec.Initial)), Changes: uint32(len(rec.Changes)),
		Outside: uint32(len(rec.Outside())), Coalesced: rec.Coalesced, Replay: rec.Replay, Size: uint64(size),
	}
	if !rec.Requested.IsZero() {
		s.RequestedUnixNano = rec.Requested.UnixNano()
	}
	return s
}

type plannerServer struct {
	pb.UnimplementedPlannerServer
	plan PlanFunc
}

// Plan plans the change with the daemon's PlanFunc.
func (s plannerServer) Plan(ctx context.Context, req *pb.PlanRequest) (_ *pb.PlanResponse, err error) {
	defer guard("the planner", &err)
	if len(bytes.TrimSpace(req.GetChange())) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "plan: the change %s is empty", nameOr(req.GetName()))
	}
	p, err := s.plan(ctx, req.GetChange())
	if err != nil {
		return nil, toStatus(err)
	}
	var text bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		return nil, status.Errorf(codes.Internal, "plan: %v", err)
	}
	resp := &pb.PlanResponse{Text: text.String(), Converged: p.Converged, Why: p.Why, WorldActions: uint32(len(p.World))}
	for _, c := range p.Changes {
		switch c.Op {
		case plan.Create:
			resp.Create++
		case plan.Update:
			resp.Update++
		case plan.Destroy:
			resp.Destroy++
		}
	}
	return resp, nil
}

func nameOr(name string) string {
	if name == "" {
		return "sent"
	}
	return name
}
