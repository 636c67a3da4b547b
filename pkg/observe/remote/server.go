package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/remote/internal/pb"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
)

// DefaultHealthWatchInterval is how often a health Watch asks the health
// function, unless [WithHealthWatchInterval] says otherwise.
const DefaultHealthWatchInterval = time.Second

// Server serves an observe.Observer (and a daemon's health) over gRPC.
// Build it with [NewServer] and add it to a gRPC server with
// [Server.Register].
type Server struct {
	pb.UnimplementedObserverServer
	obs observe.Observer
	o   serverOptions
}

type serverOptions struct {
	health        HealthFunc
	watchInterval time.Duration
	recorder      *recording.Recorder
	codec         *codec.Registry
	planner       PlanFunc
}

// ServerOption configures a [Server].
type ServerOption func(*serverOptions)

// WithHealth serves the daemon's health: f returns its checks (see
// [Check]), asked on every Health call, every grpc.health.v1 Check and at
// every interval of a Watch (rule OB3). f must be safe for concurrent
// use and return promptly; ctx is the call's.
func WithHealth(f HealthFunc) ServerOption {
	return func(o *serverOptions) { o.health = f }
}

// WithHealthWatchInterval sets how often a grpc.health.v1 Watch asks the
// health function for a change (default [DefaultHealthWatchInterval]); a
// value that is not positive keeps the default.
func WithHealthWatchInterval(d time.Duration) ServerOption {
	return func(o *serverOptions) {
		if d > 0 {
			o.watchInterval = d
		}
	}
}

// NewServer returns a server of obs, typically a Runtime's Observe().
func NewServer(obs observe.Observer, opts ...ServerOption) *Server {
	s := &Server{obs: obs, o: serverOptions{watchInterval: DefaultHealthWatchInterval}}
	for _, o := range opts {
		o(&s.o)
	}
	return s
}

// Register adds the Observer service to r, the gRPC health service
// (grpc.health.v1) when the server was given [WithHealth], the Recorder
// service with [WithRecorder] and the Planner service with [WithPlanner].
func (s *Server) Register(r grpc.ServiceRegistrar) {
	pb.RegisterObserverServer(r, s)
	if s.o.health != nil {
		registerHealth(r, s)
	}
	s.registerFlight(r)
}

// guard turns a panic of the code a call runs into an Internal status,
// so that one call's failure ends that call only.
func guard(what string, err *error) {
	if p := recover(); p != nil {
		*err = status.Errorf(codes.Internal, "%s panicked: %v", what, p)
	}
}

// ExplainResource implements the Observer service.
func (s *Server) ExplainResource(ctx context.Context, req *pb.ExplainResourceRequest) (_ *pb.Explanation, err error) {
	defer guard("explain", &err)
	switch {
	case req.GetNamespace() == "":
		return nil, status.Error(codes.InvalidArgument, "explain: the resource's namespace is empty")
	case req.GetType() == "":
		return nil, status.Error(codes.InvalidArgument, "explain: the resource's type is empty")
	case req.GetId() == "":
		return nil, status.Error(codes.InvalidArgument, "explain: the resource's ID is empty")
	}
	sub := access.FromContext(ctx)
	if sub != nil {
		if err := sub.ExplainResource(ctx, req.GetNamespace(), req.GetType(), req.GetId()); err != nil {
			return nil, status.Error(codes.PermissionDenied, err.Error())
		}
	}
	x, err := s.obs.Explain(ctx, resource.NewPointer(req.GetNamespace(), req.GetType(), req.GetId()))
	if err != nil {
		return nil, toStatus(err)
	}
	if sub != nil {
		sub.ScrubResource(ctx, &x)
	}
	return explanation(x)
}

// ExplainController implements the Observer service.
func (s *Server) ExplainController(ctx context.Context, req *pb.ExplainControllerRequest) (_ *pb.Explanation, err error) {
	defer guard("explain", &err)
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "explain: the controller's name is empty")
	}
	x, err := s.obs.ExplainController(ctx, req.GetName())
	if err != nil {
		return nil, toStatus(err)
	}
	if sub := access.FromContext(ctx); sub != nil {
		sub.ScrubController(ctx, &x)
	}
	return explanation(x)
}

func explanation(x any) (*pb.Explanation, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "explain: encode the explanation: %v", err)
	}
	return &pb.Explanation{Json: b}, nil
}

// Graph implements the Observer service.
func (s *Server) Graph(context.Context, *pb.GraphRequest) (_ *pb.GraphResponse, err error) {
	defer guard("graph", &err)
	g, err := s.obs.Graph()
	if err != nil {
		return nil, toStatus(fmt.Errorf("graph: %w", err))
	}
	resp := &pb.GraphResponse{Edges: make([]*pb.Edge, 0, len(g.Edges))}
	for _, e := range g.Edges {
		resp.Edges = append(resp.Edges, &pb.Edge{
			Controller: e.ControllerName, Namespace: e.ResourceNamespace, Type: e.ResourceType,
			Id: e.ResourceID, EdgeType: e.EdgeType.String(), NoWriter: e.NoWriter,
		})
	}
	return resp, nil
}
