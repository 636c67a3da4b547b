package remote_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(floodSocketEnv); path != "" {
		// The test binary re-executed as the flooding client of
		// TestN3_HostileTenThousandConnections.
		os.Exit(flood(path, os.Getenv(floodCountEnv)))
	}
	goleak.VerifyTestMain(m)
}

// registry knows the conformance suites' resource types.
func registry() *codec.Registry {
	reg := codec.NewRegistry()
	codec.MustRegister[conformance.IntSpec, conformance.IntResourceDefinition](reg)
	codec.MustRegister[conformance.StrSpec, conformance.StrResourceDefinition](reg)
	codec.MustRegister[conformance.ListSpec, conformance.ListResourceDefinition](reg)
	codec.MustRegister[conformance.IntSpec, conformance.UndeclaredResourceDefinition](reg)
	return reg
}

// daemon is a served state: a gRPC server of a state on a listener.
type daemon struct {
	State  state.State
	Server *grpc.Server
	Addr   string // the dial target
	lis    net.Listener
	done   chan struct{}
}

// listen returns a listener on loopback TCP ("tcp") or on a unix socket
// in a temporary directory ("unix").
func listen(tb testing.TB, network string) net.Listener {
	tb.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(tb.TempDir(), "state.sock")
	}
	lis, err := net.Listen(network, addr)
	if err != nil {
		tb.Fatal(err)
	}
	return lis
}

// target returns the gRPC dial target of a listener.
func target(lis net.Listener) string {
	if lis.Addr().Network() == "unix" {
		return "unix://" + lis.Addr().String()
	}
	return lis.Addr().String()
}

// serve serves st on lis until the test ends.
func serve(tb testing.TB, lis net.Listener, st state.State, opts ...remote.ServerOption) *daemon {
	tb.Helper()
	d := serveUntil(lis, st, opts...)
	tb.Cleanup(d.stop)
	return d
}

// serveRegistry serves st with reg on lis until the test ends.
func serveRegistry(tb testing.TB, lis net.Listener, st state.State, reg *codec.Registry) *daemon {
	tb.Helper()
	d := serveWithRegistry(lis, st, reg)
	tb.Cleanup(d.stop)
	return d
}

// serveUntil serves st on lis until the daemon's stop.
func serveUntil(lis net.Listener, st state.State, opts ...remote.ServerOption) *daemon {
	return serveWithRegistry(lis, st, registry(), opts...)
}

func serveWithRegistry(lis net.Listener, st state.State, reg *codec.Registry, opts ...remote.ServerOption) *daemon {
	srv := remote.NewServer(st, reg, opts...)
	gs := grpc.NewServer(srv.GRPCServerOptions()...)
	srv.Register(gs)
	d := &daemon{State: st, Server: gs, Addr: target(lis), lis: lis, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		_ = gs.Serve(lis)
	}()
	return d
}

// stop stops the daemon's server and waits for it; it may be called
// more than once.
func (d *daemon) stop() {
	d.Server.Stop()
	<-d.done
}

// dial returns a connection to addr, closed when the test ends.
func dial(tb testing.TB, addr string) *grpc.ClientConn {
	tb.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	return conn
}

// client returns a remote client of addr.
func client(tb testing.TB, addr string, opts ...remote.ClientOption) state.State {
	tb.Helper()
	st, err := remote.NewClient(dial(tb, addr), registry(), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// served returns a client of a fresh inmem state served on network.
func served(tb testing.TB, network string, inmemOpts ...inmem.Option) (state.State, *daemon) {
	tb.Helper()
	d := serve(tb, listen(tb, network), inmem.NewState(inmemOpts...))
	return client(tb, d.Addr), d
}

// testCtx is canceled when the test ends.
func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	return ctx
}
