// Package workloads runs W7 against resgraph's remote State
// (github.com/resgraph/resgraph/pkg/state/remote): the in-memory state
// served by remote.NewServer on loopback TCP, read and watched through
// remote.NewClient.
//
// W7 mirrors ../cosiworkloads.W7 line for line; only the server, the
// client and the library's imports differ. The programs it runs over them
// are W1's writer with watchers (W1DelaysOn) and W5's reads (W5On) of
// ../../resgraph/workloads.
package workloads

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote"

	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/resgraph/res"
	rgworkloads "github.com/resgraph/resgraph/bench/resgraph/workloads"
)

var registry = res.Registry()

// W7: the state over gRPC on loopback — remote watch fan-out under the W1
// writer, or remote List/Get (params.W7Params).
func W7(ctx context.Context, p params.W7Params, o runner.Options, r *runner.Report) error {
	st, err := rgworkloads.NewState(o, r)
	if err != nil {
		return err
	}

	r.Note("server", "remote.NewServer(st, registry) on loopback TCP (default options), read through remote.NewClient (default options), JSON specs")

	srv := remote.NewServer(st, registry)
	gs := grpc.NewServer(srv.GRPCServerOptions()...)
	srv.Register(gs)

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}

	served := make(chan struct{})

	go func() { defer close(served); _ = gs.Serve(lis) }()

	defer func() { gs.Stop(); <-served }()

	switch p.Part {
	case params.W7FanOut:
		clients := make([]state.State, p.W1.Watchers)

		for i := range clients {
			if clients[i], err = dial(lis.Addr().String()); err != nil {
				return err
			}
		}

		out, delays, err := rgworkloads.W1DelaysOn(ctx, st, clients, p.W1)
		if err != nil {
			return err
		}

		runner.ReportE1(r, p.W1, out, delays, 0)

		return nil
	case params.W7List:
		client, err := dial(lis.Addr().String())
		if err != nil {
			return err
		}

		return rgworkloads.W5On(ctx, st, client, p.W5, r)
	}

	return fmt.Errorf("W7: unknown -part %q", p.Part)
}

// conns are the client connections of the run, closed when the process
// exits (each run is a process of its own).
var conns []*grpc.ClientConn

// dial returns a remote client of the server at addr, on a connection of
// its own.
func dial(addr string) (state.State, error) { //nolint:ireturn
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}

	conns = append(conns, conn)

	return remote.NewClient(conn, registry)
}
