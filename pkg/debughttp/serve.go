package debughttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/state"
)

// ListenOption configures [Listen] and [CheckAddr].
type ListenOption func(*listenConfig)

type listenConfig struct{ remote bool }

// AllowRemote lets [Listen] accept any address, every interface included.
// The debug pages expose profiles and internal state: give it only behind
// a network that restricts who reaches the port.
func AllowRemote() ListenOption { return func(c *listenConfig) { c.remote = true } }

// CheckAddr checks a "host:port" listen address. The port must be numeric
// (0 picks a free one). Unless [AllowRemote] is given, the host must be a
// loopback IP (127.0.0.0/8, ::1) or "localhost"; an empty host (every
// interface) is refused too. Errors are of the invalid class
// (state.IsInvalidError) and say how to allow a remote address.
func CheckAddr(addr string, opts ...ListenOption) error {
	var c listenConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return state.NewInvalidError(nil, "debug address %q: %w", addr, err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return state.NewInvalidError(nil, "debug address %q: port %q is not a number between 0 and 65535", addr, port)
	}
	if c.remote || host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	what := "host " + strconv.Quote(host) + " is not a loopback address"
	if host == "" {
		what = "an empty host listens on every interface"
	}
	return state.NewInvalidError(nil, "debug address %q: %s; the debug pages expose profiles and internal state, so they listen on loopback only (127.0.0.1, ::1 or localhost) unless remote addresses are allowed explicitly", addr, what)
}

// Listen checks addr with [CheckAddr] and listens on it (TCP). "localhost"
// is resolved to loopback addresses only.
func Listen(addr string, opts ...ListenOption) (net.Listener, error) {
	if err := CheckAddr(addr, opts...); err != nil {
		return nil, err
	}
	return net.Listen("tcp", addr)
}

// ShutdownTimeout bounds how long [Serve] waits for requests in flight
// once its context is done; then it closes their connections.
const ShutdownTimeout = 5 * time.Second

// Serve serves h on ln until ctx is done, then shuts the server down. It
// returns nil after a shutdown caused by ctx, the server's error otherwise
// (a closed listener, ...), and only after every goroutine it started has
// exited. Request contexts are canceled with ctx, so that long requests
// (CPU profiles, traces) end promptly. ln is closed when Serve returns.
//
// With [WithAuthenticator], every connection is authenticated before
// anything is read from it (a peer that fails is disconnected and
// audited) and every request carries its connection's subject
// (access.FromContext), which a handler made with [WithAccess] decides
// its pages for. Without one, Serve refuses to start (an invalid-class
// error, ln closed) on a listener that is not on loopback (a TCP address
// other than 127.0.0.0/8 and ::1; a unix socket counts as local) unless
// [Insecure] says so explicitly, which it logs as a warning (rule A1).
// It refuses an authenticator with a [*Handler] made without
// [WithAccess]: nothing would decide the pages.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, opts ...ServeOption) error {
	c := serveConfig{logger: zap.NewNop()}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if err := c.check(ln, h); err != nil {
		return errors.Join(err, ln.Close())
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	if c.auth != nil {
		ln = &authListener{Listener: ln, auth: c.auth, policy: c.policy, timeout: HandshakeTimeout}
		srv.Handler, srv.ConnContext = subjectHandler{h: h}, connContext
		c.logger.Info("debug endpoint on " + listenerName(ln) + ", authenticating with " + c.auth.String())
	} else if c.insecure && !isLocal(ln.Addr()) {
		c.logger.Warn("debug endpoint on " + listenerName(ln) + " WITHOUT authentication (debughttp.Insecure): whoever reaches it may read profiles, explanations and the trace")
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return errors.Join(err, srv.Close())
		}
		return nil
	})
	return g.Wait()
}

// HandshakeTimeout bounds a connection's authentication under
// [WithAuthenticator]: a peer that has not finished it by then is
// disconnected.
const HandshakeTimeout = 10 * time.Second

// ServeOption configures [Serve].
type ServeOption func(*serveConfig)

type serveConfig struct {
	auth     access.Authenticator
	policy   *access.Policy
	insecure bool
	logger   *zap.Logger
}

// WithAuthenticator makes [Serve] authenticate every connection with auth
// (access.PeerCredentials on a unix socket, access.MutualTLS on TCP) and
// give each request its connection's subject under policy, for a handler
// made with [WithAccess] (the same policy, as a rule) to decide.
func WithAuthenticator(auth access.Authenticator, policy *access.Policy) ServeOption {
	return func(c *serveConfig) { c.auth, c.policy = auth, policy }
}

// Insecure lets [Serve] serve a listener that is not on loopback without
// an authenticator: whoever reaches it may use every page. Serve logs it
// as a warning.
func Insecure() ServeOption { return func(c *serveConfig) { c.insecure = true } }

// WithServeLogger sets the logger of Serve's start (default: none).
func WithServeLogger(l *zap.Logger) ServeOption {
	return func(c *serveConfig) {
		if l != nil {
			c.logger = l
		}
	}
}

func (c *serveConfig) check(ln net.Listener, h http.Handler) error {
	if ln == nil {
		return state.NewInvalidError(nil, "debughttp: Serve: no listener")
	}
	name := listenerName(ln)
	switch {
	case c.auth != nil && c.insecure:
		return state.NewInvalidError(nil, "debughttp: Serve on %s: both an authenticator and Insecure: choose one", name)
	case c.auth != nil && c.policy == nil:
		return state.NewInvalidError(nil, "debughttp: Serve on %s: an authenticator without access rules", name)
	case c.auth != nil:
		if dh, ok := h.(*Handler); ok && dh.policy == nil {
			return state.NewInvalidError(nil, "debughttp: Serve on %s: the handler was made without debughttp.WithAccess, so nothing would decide its pages", name)
		}
	case !c.insecure && !isLocal(ln.Addr()):
		return state.NewInvalidError(nil, "debughttp: refusing to serve the debug pages on %s, which is not loopback, without an authenticator and access rules: "+
			"give debughttp.WithAuthenticator(access.MutualTLS(cfg), policy) and a handler made with debughttp.WithAccess(policy), or debughttp.Insecure() to serve everyone", name)
	}
	return nil
}

// isLocal reports whether a listener's address is reachable from this
// machine only: a loopback TCP address or a unix socket.
func isLocal(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

func listenerName(ln net.Listener) string { return ln.Addr().Network() + ":" + ln.Addr().String() }
