// Package cosiworkloads runs W7 against the established runtime's gRPC
// State (github.com/cosi-project/runtime v1.16.2, its public API:
// pkg/state/protobuf/server and pkg/state/protobuf/client): its in-memory
// state served by server.NewState on loopback TCP, read and watched through
// client.NewAdapter.
//
// W7 mirrors ../workloads.W7 line for line; only the server, the client
// and the library's imports differ. The programs it runs over them are W1's
// writer with watchers (W1DelaysOn) and W5's reads (W5On) of
// ../../cosi/workloads.
package cosiworkloads

import (
	"context"
	"fmt"
	"net"

	"github.com/cosi-project/runtime/api/v1alpha1"
	"github.com/cosi-project/runtime/pkg/resource/protobuf"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/cosi-project/runtime/pkg/state/protobuf/client"
	"github.com/cosi-project/runtime/pkg/state/protobuf/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/cosi/res"
	cosiworkloads "github.com/resgraph/resgraph/bench/cosi/workloads"
)

// The client decodes the resources it receives through the protobuf
// registry: A..E are registered there (their specs have protobuf tags).
func init() {
	for _, err := range []error{
		protobuf.RegisterDynamic[params.Spec](params.AType, &res.A{}),
		protobuf.RegisterDynamic[params.Spec](params.BType, &res.B{}),
		protobuf.RegisterDynamic[params.Spec](params.CType, &res.C{}),
		protobuf.RegisterDynamic[params.Spec](params.DType, &res.D{}),
		protobuf.RegisterDynamic[params.Spec](params.EType, &res.E{}),
	} {
		if err != nil {
			panic(err)
		}
	}
}

// W7: the state over gRPC on loopback — remote watch fan-out under the W1
// writer, or remote List/Get (params.W7Params).
func W7(ctx context.Context, p params.W7Params, o runner.Options, r *runner.Report) error {
	st := cosiworkloads.NewState(o, r)
	r.Note("server", "server.NewState(st) registered with v1alpha1.RegisterStateServer on loopback TCP, read through state.WrapCore(client.NewAdapter(v1alpha1.NewStateClient(conn))) (default options)")

	gs := grpc.NewServer()
	v1alpha1.RegisterStateServer(gs, server.NewState(st))

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

		out, delays, err := cosiworkloads.W1DelaysOn(ctx, st, clients, p.W1)
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

		return cosiworkloads.W5On(ctx, st, client, p.W5, r)
	}

	return fmt.Errorf("W7: unknown -part %q", p.Part)
}

// conns are the client connections of the run, closed when the process
// exits (each run is a process of its own).
var conns []*grpc.ClientConn

// dial returns a client of the server at addr, on a connection of its own.
func dial(addr string) (state.State, error) { //nolint:ireturn
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}

	conns = append(conns, conn)

	return state.WrapCore(client.NewAdapter(v1alpha1.NewStateClient(conn))), nil
}
