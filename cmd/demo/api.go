package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"

	obsremote "github.com/resgraph/resgraph/pkg/observe/remote"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// The agent's API, what resgraphctl talks to: on one unix socket (in the
// data directory by default), the remote State of the agent's state
// (package pkg/state/remote: get, list, watch, write, with the types'
// definitions) and its Runtime's observer (package pkg/observe/remote:
// explanations, the dependency graph, the health checks, the standard
// gRPC health protocol, its flight recorder's recordings and plans of
// proposed changes — resgraphctl record and plan). Who may connect is whoever may open the socket:
// it lives in a directory only the agent's user can enter (0700), until
// the agent authenticates its callers.

// listenAPI listens on the unix socket path. Its directory is created
// (0700) when missing. A socket file left by an agent that is gone is
// removed; one that an agent still answers on is an error naming it.
func listenAPI(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err == nil {
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("another agent serves its API on %s: stop it, or give this one another --data-dir or --api-socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove the stale socket %s: %w", path, err)
		}
	}
	return net.Listen("unix", path)
}

// serveAPI serves the API on lis until ctx is done; the socket file is
// removed when it stops.
func (d *daemon) serveAPI(ctx context.Context, lis net.Listener) error {
	srv := remote.NewServer(d.state, d.codec)
	gs := grpc.NewServer(srv.GRPCServerOptions()...)
	srv.Register(gs)
	obsremote.NewServer(d.engine.Observe(), obsremote.WithHealth(d.health),
		obsremote.WithRecorder(d.recorder, d.codec), obsremote.WithPlanner(d.plan)).Register(gs)
	errc := make(chan error, 1)
	go func() { errc <- gs.Serve(lis) }()
	select {
	case <-ctx.Done():
		gs.Stop() // ends the watches too; their clients resume against the next agent, or learn it restarted
		<-errc
		return nil
	case err := <-errc:
		if errors.Is(err, grpc.ErrServerStopped) {
			return nil
		}
		return fmt.Errorf("API: %w", err)
	}
}
