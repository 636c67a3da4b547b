package remote

import (
	"context"
	"fmt"
	"runtime/debug"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// Server serves a state.State over gRPC (see the package documentation).
// Make one with [NewServer] and add it to a gRPC server with
// [Server.Register]. A Server is safe for concurrent use and starts no
// goroutine of its own: every goroutine it runs belongs to a call and ends
// with it.
type Server struct {
	pb.UnimplementedStateServer

	st     state.State
	coder  coder
	o      serverOptions
	limits *watchLimits
	wire   *wireCodec
	enc    encodings
}

// DefaultMaxMessageSize is the default bound of one message's size, in
// bytes: gRPC's default receive limit.
const DefaultMaxMessageSize = 4 << 20

// DefaultMaxWatchesPerConnection is the default bound of the watches one
// connection may have open at once.
const DefaultMaxWatchesPerConnection = 1024

// ServerOption configures a [Server].
type ServerOption func(*serverOptions)

type serverOptions struct {
	callState      func(ctx context.Context) (state.State, error)
	maxMessage     int
	maxWatchesConn int
	logger         *zap.Logger
}

// WithCallState makes the server serve, for each call, the state fn
// derives from the call's context (its peer, its credentials: see
// google.golang.org/grpc/peer) instead of the state given to NewServer;
// an error from fn ends the call with it — an error carrying a gRPC
// status (status.Error(codes.PermissionDenied, ...), or any error with a
// GRPCStatus method) with that status. Access control wraps the state a
// caller may see here. fn is called once per call, before anything is
// read or written.
func WithCallState(fn func(ctx context.Context) (state.State, error)) ServerOption {
	return func(o *serverOptions) { o.callState = fn }
}

// WithMaxMessageSize bounds the size of the messages the server sends, in
// bytes (default [DefaultMaxMessageSize]): List and Watch split their
// answers below it, and a resource that does not fit in one message fails
// its call (or ends its watch) with ResourceExhausted. Pass the same bound
// to the gRPC server (grpc.MaxRecvMsgSize, see [Server.GRPCServerOptions])
// and to the client ([WithClientMaxMessageSize]).
func WithMaxMessageSize(n int) ServerOption {
	return func(o *serverOptions) {
		if n > 0 {
			o.maxMessage = n
		}
	}
}

// WithMaxWatchesPerConnection bounds the watches one client connection
// may have open at once (default [DefaultMaxWatchesPerConnection]); one
// more is refused with ResourceExhausted. Connections are told apart by
// the stats handler of [Server.GRPCServerOptions]; without it, by the
// peer's address (all the clients of a unix socket then share one bound).
func WithMaxWatchesPerConnection(n int) ServerOption {
	return func(o *serverOptions) {
		if n > 0 {
			o.maxWatchesConn = n
		}
	}
}

// WithServerLogger sets the logger of the server's failures (default: none).
func WithServerLogger(l *zap.Logger) ServerOption {
	return func(o *serverOptions) {
		if l != nil {
			o.logger = l
		}
	}
}

// NewServer returns a server of st, encoding and decoding specs with reg
// (the registry must know every type a client reads or writes; a type it
// does not know is refused with InvalidArgument). A nil st without
// [WithCallState] makes a server whose every call fails with
// FailedPrecondition; a nil reg is an empty registry.
func NewServer(st state.State, reg *codec.Registry, opts ...ServerOption) *Server {
	o := serverOptions{maxMessage: DefaultMaxMessageSize, maxWatchesConn: DefaultMaxWatchesPerConnection, logger: zap.NewNop()}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if reg == nil {
		reg = codec.NewRegistry()
	}
	if usercode.IsNil(st) {
		st = nil
	}
	return &Server{st: st, coder: coder{reg: reg}, o: o, limits: newWatchLimits(o.maxWatchesConn), wire: newWireCodec()}
}

// Register adds the State service to a gRPC server.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	pb.RegisterStateServer(r, s)
}

// GRPCServerOptions returns the options to give grpc.NewServer for the
// server's bounds and answers to hold exactly: the stats handler that
// tells connections apart (for [WithMaxWatchesPerConnection]), the
// receive limit of [WithMaxMessageSize], and the codec that lets the
// server answer bytes that are not a request with InvalidArgument (gRPC
// alone answers Internal). Without them the server works, with the
// fallbacks the options describe.
func (s *Server) GRPCServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.StatsHandler(connTagger{}),
		grpc.MaxRecvMsgSize(s.o.maxMessage),
		grpc.ForceServerCodecV2(s.wire),
	}
}

// stateOf returns the state to serve for a call: the call state's, or
// the server's, guarded for the call's subject when [Serve] authenticated
// its connection (package access: every access decided and audited).
func (s *Server) stateOf(ctx context.Context) (state.State, error) {
	return s.served(ctx, false)
}

// served is stateOf; with check, the state under the access guard is the
// served state's checks of a write ([checkState]) instead of the state.
func (s *Server) served(ctx context.Context, check bool) (state.State, error) {
	st := s.st
	if s.o.callState != nil {
		var err error
		if st, err = s.o.callState(ctx); err != nil {
			return nil, toStatus(err).Err()
		}
		if usercode.IsNil(st) {
			return nil, status.Error(codes.Internal, "remote: the call's state is nil")
		}
	}
	if st == nil {
		return nil, status.Error(codes.FailedPrecondition, "remote: the server was given no state")
	}
	if check {
		st = checkState{State: st}
	}
	if sub := SubjectOf(ctx); sub != nil {
		return sub.Guard(st), nil
	}
	return st, nil
}

// recoverCall turns a panic of a call into an Internal status, so that
// one call's failure never stops the server.
func (s *Server) recoverCall(method string, err *error) {
	if p := recover(); p != nil {
		s.o.logger.Error("remote: call panicked", zap.String("method", method), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
		*err = status.Error(codes.Internal, fmt.Sprintf("remote: %s panicked: %v", method, p))
	}
}

// invalid returns an InvalidArgument status for a request that cannot be
// served, with the invalid class.
func invalid(format string, args ...any) error {
	return toStatus(state.NewInvalidError(nil, "remote: "+format, args...)).Err()
}
