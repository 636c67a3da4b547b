package remote

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/observe/remote/internal/pb"
)

// Probe names what a health check tells: whether the daemon is ready, or
// whether it is live.
type Probe string

// The probes, which are also the grpc.health.v1 service names of their
// checks (rule OB3).
const (
	// Readiness: the daemon does its job (its controllers started and
	// caught up with their inputs).
	Readiness Probe = "readiness"
	// Liveness: the daemon's loops are moving; a failing liveness check
	// calls for a restart.
	Liveness Probe = "liveness"
)

// Check is the outcome of one health check.
type Check struct {
	// Probe is the probe the check belongs to.
	Probe Probe
	// Name names what was checked (a controller, a watch, ...).
	Name string
	// OK tells whether the check passes.
	OK bool
	// Message says what the check found: why it fails, or what it saw.
	Message string
}

// HealthFunc returns a daemon's health checks as they are now.
type HealthFunc func(ctx context.Context) []Check

// Passing reports whether every check of probe passes; for the probe ""
// whether every check passes.
func Passing(checks []Check, probe Probe) bool {
	for _, c := range checks {
		if !c.OK && (probe == "" || c.Probe == probe) {
			return false
		}
	}
	return true
}

// checks asks the health function, turning its panic into an Internal
// status.
func (s *Server) checks(ctx context.Context) (cs []Check, err error) {
	defer guard("health", &err)
	return s.o.health(ctx), nil
}

// Health implements the Observer service.
func (s *Server) Health(ctx context.Context, _ *pb.HealthRequest) (*pb.HealthResponse, error) {
	if s.o.health == nil {
		return nil, status.Error(codes.Unimplemented, "health: this daemon serves no health checks")
	}
	cs, err := s.checks(ctx)
	if err != nil {
		return nil, err
	}
	resp := &pb.HealthResponse{Checks: make([]*pb.Check, 0, len(cs))}
	for _, c := range cs {
		resp.Checks = append(resp.Checks, &pb.Check{Probe: string(c.Probe), Name: c.Name, Ok: c.OK, Message: c.Message})
	}
	return resp, nil
}

// healthServer serves grpc.health.v1 from the server's health function.
type healthServer struct {
	healthpb.UnimplementedHealthServer
	s *Server
}

func registerHealth(r grpc.ServiceRegistrar, s *Server) {
	healthpb.RegisterHealthServer(r, &healthServer{s: s})
}

// services are the grpc.health.v1 services served: every check, and each
// probe's.
var services = []Probe{"", Readiness, Liveness}

func known(service string) bool {
	for _, p := range services {
		if string(p) == service {
			return true
		}
	}
	return false
}

func servingStatus(checks []Check, probe Probe) healthpb.HealthCheckResponse_ServingStatus {
	if Passing(checks, probe) {
		return healthpb.HealthCheckResponse_SERVING
	}
	return healthpb.HealthCheckResponse_NOT_SERVING
}

// Check implements grpc.health.v1.
func (h *healthServer) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if !known(req.GetService()) {
		return nil, status.Errorf(codes.NotFound, "health: unknown service %q: the services are \"\", %q and %q", req.GetService(), Readiness, Liveness)
	}
	cs, err := h.s.checks(ctx)
	if err != nil {
		return nil, err
	}
	return &healthpb.HealthCheckResponse{Status: servingStatus(cs, Probe(req.GetService()))}, nil
}

// List implements grpc.health.v1.
func (h *healthServer) List(ctx context.Context, _ *healthpb.HealthListRequest) (*healthpb.HealthListResponse, error) {
	cs, err := h.s.checks(ctx)
	if err != nil {
		return nil, err
	}
	resp := &healthpb.HealthListResponse{Statuses: map[string]*healthpb.HealthCheckResponse{}}
	for _, p := range services {
		resp.Statuses[string(p)] = &healthpb.HealthCheckResponse{Status: servingStatus(cs, p)}
	}
	return resp, nil
}

// Watch implements grpc.health.v1: the current status at once, then each
// change, asking the health function at the watch interval.
func (h *healthServer) Watch(req *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	ctx := stream.Context()
	if !known(req.GetService()) {
		if err := stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVICE_UNKNOWN}); err != nil {
			return err
		}
		<-ctx.Done() // the services never change: it stays unknown
		return nil
	}
	t := time.NewTicker(h.s.o.watchInterval)
	defer t.Stop()
	last := healthpb.HealthCheckResponse_UNKNOWN
	for {
		cs, err := h.s.checks(ctx)
		if err != nil {
			return err
		}
		if st := servingStatus(cs, Probe(req.GetService())); st != last {
			if err := stream.Send(&healthpb.HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			last = st
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
