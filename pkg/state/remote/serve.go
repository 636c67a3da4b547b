package remote

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// ServeOption configures [Serve].
type ServeOption func(*serveOptions)

type serveOptions struct {
	auth     access.Authenticator
	policy   *access.Policy
	insecure bool
	pages    map[string]access.Page
	grpc     []grpc.ServerOption
	logger   *zap.Logger
	timeout  time.Duration
	shutdown time.Duration
}

// WithAuthenticator makes Serve authenticate every connection with auth
// (access.PeerCredentials on a unix socket, access.MutualTLS on TCP) and
// decide every call of its identity with policy: the State's accesses
// through the state guarded for it (access.Subject.Guard), the other
// services' calls by the pages of [WithPages].
func WithAuthenticator(auth access.Authenticator, policy *access.Policy) ServeOption {
	return func(o *serveOptions) { o.auth, o.policy = auth, policy }
}

// Insecure makes Serve serve without authenticating anyone: every caller
// may use every resource and call. Serve logs it as a warning when it
// starts.
func Insecure() ServeOption { return func(o *serveOptions) { o.insecure = true } }

// WithPages maps the calls of the services served beside the State to the
// pages that grant them: a key is a full method name
// ("/pkg.Service/Method") or a service's prefix ("/pkg.Service/"). A call
// of no page, and not of the State service, is denied.
func WithPages(pages map[string]access.Page) ServeOption {
	return func(o *serveOptions) {
		for k, v := range pages {
			o.pages[k] = v
		}
	}
}

// WithGRPCOptions adds options of the gRPC server (the State server's
// [Server.GRPCServerOptions], for one).
func WithGRPCOptions(opts ...grpc.ServerOption) ServeOption {
	return func(o *serveOptions) { o.grpc = append(o.grpc, opts...) }
}

// WithServeLogger sets the logger of Serve's start and end (default: none).
func WithServeLogger(l *zap.Logger) ServeOption {
	return func(o *serveOptions) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithHandshakeTimeout bounds a connection's authentication (default 10 s):
// a peer that does not finish its handshake in time is disconnected.
func WithHandshakeTimeout(d time.Duration) ServeOption {
	return func(o *serveOptions) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// WithShutdownTimeout sets how long Serve waits for calls in flight once
// its context is done before it cancels them (default [ShutdownTimeout];
// 0 cancels them at once, watches included).
func WithShutdownTimeout(d time.Duration) ServeOption {
	return func(o *serveOptions) {
		if d >= 0 {
			o.shutdown = d
		}
	}
}

// Serve serves the services register adds on lis until ctx is done, then
// stops (calls in flight get ShutdownTimeout to end, then are canceled:
// [WithShutdownTimeout]), and returns after every goroutine it started
// has ended; lis is closed. It returns nil after a stop caused by ctx, the server's error otherwise.
//
// No identity, no access (rule A1): Serve refuses to start (and closes
// lis) unless [WithAuthenticator] gives it an authenticator and a policy,
// or [Insecure] says so explicitly — then it logs a warning. With an
// authenticator, a connection whose peer is not authenticated is closed
// before any call, and audited; every call of an authenticated one is
// decided for its subject: the State's accesses by the guarded state, the
// other calls by [WithPages] (the subject is then in the call's context,
// access.FromContext).
func Serve(ctx context.Context, lis net.Listener, register func(grpc.ServiceRegistrar), opts ...ServeOption) error {
	o := serveOptions{pages: map[string]access.Page{}, logger: zap.NewNop(), timeout: 10 * time.Second, shutdown: ShutdownTimeout}
	opt.Apply(&o, opts)
	if err := o.check(lis); err != nil {
		return errors.Join(err, lis.Close())
	}
	gopts := append([]grpc.ServerOption{grpc.ConnectionTimeout(o.timeout)}, o.grpc...)
	if o.insecure {
		o.logger.Warn("remote: serving on " + addrString(lis) + " WITHOUT authentication (remote.Insecure): whoever connects may read and write every resource")
	} else {
		g := &gate{pages: o.pages}
		gopts = append(gopts, grpc.Creds(&authCredentials{auth: o.auth, policy: o.policy, timeout: o.timeout}),
			grpc.ChainUnaryInterceptor(g.unary), grpc.ChainStreamInterceptor(g.stream))
		o.logger.Info("remote: serving on " + addrString(lis) + ", authenticating with " + o.auth.String())
	}
	gs := grpc.NewServer(gopts...)
	register(gs)
	return serveUntil(ctx, gs, lis, o.shutdown)
}

// ShutdownTimeout bounds how long [Serve] waits for calls in flight once
// its context is done; then it cancels them.
const ShutdownTimeout = 5 * time.Second

func (o *serveOptions) check(lis net.Listener) error {
	switch {
	case lis == nil:
		return state.NewInvalidError(nil, "remote: Serve: no listener")
	case o.insecure && o.auth != nil:
		return state.NewInvalidError(nil, "remote: Serve on %s: both an authenticator and Insecure: choose one", addrString(lis))
	case o.insecure:
		return nil
	case o.auth == nil || o.policy == nil:
		return state.NewInvalidError(nil, "remote: refusing to serve on %s without an authenticator and access rules: "+
			"give remote.WithAuthenticator(access.PeerCredentials() or access.MutualTLS(cfg), policy), or remote.Insecure() to serve everyone", addrString(lis))
	}
	return nil
}

func addrString(lis net.Listener) string { return lis.Addr().Network() + ":" + lis.Addr().String() }

// serveUntil serves gs on lis until ctx is done or serving fails.
func serveUntil(ctx context.Context, gs *grpc.Server, lis net.Listener, grace time.Duration) error {
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	var err error
	select {
	case err = <-served:
		gs.Stop()
		return err
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		gs.GracefulStop()
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
		gs.Stop()
		<-stopped
	}
	if err = <-served; errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	return err
}

// gate decides the calls of an authenticated connection: the State's go
// to the server (which guards the state for the subject), the others need
// their page.
type gate struct{ pages map[string]access.Page }

// stateService is the prefix of the State service's methods.
var stateService = "/" + pb.State_ServiceDesc.ServiceName + "/"

func (g *gate) admit(ctx context.Context, method string) (context.Context, error) {
	sub := SubjectOf(ctx)
	if sub == nil {
		return nil, status.Error(codes.PermissionDenied, "denied: the connection has no identity")
	}
	if strings.HasPrefix(method, stateService) {
		return ctx, nil
	}
	page, ok := g.pages[method]
	if !ok {
		page, ok = g.pages[method[:strings.LastIndexByte(method, '/')+1]]
	}
	if !ok {
		return nil, toStatus(sub.RefuseCall(method)).Err()
	}
	if err := sub.Page(ctx, page); err != nil {
		return nil, toStatus(err).Err()
	}
	return access.NewContext(ctx, sub), nil
}

func (g *gate) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, err := g.admit(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (g *gate) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, err := g.admit(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	return handler(srv, contextStream{ServerStream: ss, ctx: ctx})
}

// contextStream is a server stream with the context of its admission.
type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s contextStream) Context() context.Context { return s.ctx }
