package debughttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

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
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
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
