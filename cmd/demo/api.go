package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/resgraph/resgraph/pkg/access"
	obsremote "github.com/resgraph/resgraph/pkg/observe/remote"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// The agent's API, what resgraphctl talks to: on one unix socket (in the
// data directory by default), the remote State of the agent's state
// (package pkg/state/remote: get, list, watch, write, with the types'
// definitions) and its Runtime's observer (package pkg/observe/remote:
// explanations, the dependency graph, the health checks, the standard
// gRPC health protocol, its flight recorder's recordings and plans of
// proposed changes — resgraphctl record and plan), and optionally on a
// TCP address with mutual TLS. Every connection is authenticated (the
// unix peer's uid and gids, the client certificate) and every call
// decided by the access rules (--rules; see apiaccess.go), audited in
// audit.log beside the agent's data.

// listenSocket listens on the unix socket path, for what (its API, its
// debug pages; flag is the flag that names it). Its directory is created
// (0700) when missing. A socket file left by an agent that is gone is
// removed; one that an agent still answers on is an error naming it.
func listenSocket(path, what, flag string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err == nil {
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("another agent serves %s on %s: stop it, or give this one another %s", what, path, flag)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove the stale socket %s: %w", path, err)
		}
	}
	return net.Listen("unix", path)
}

// serveAPI serves the API on lis until ctx is done, every connection
// authenticated by auth and every call decided by policy
// (remote.Serve).
func (d *daemon) serveAPI(ctx context.Context, lis net.Listener, auth access.Authenticator, policy *access.Policy) error {
	srv := remote.NewServer(d.state, d.codec)
	register := func(r grpc.ServiceRegistrar) {
		srv.Register(r)
		obs := d.engine.Observe()
		obsremote.NewServer(obs, obsremote.WithHealth(obsremote.RuntimeHealth(obs)),
			obsremote.WithRecorder(d.recorder, d.codec), obsremote.WithPlanner(d.plan)).Register(r)
	}
	err := remote.Serve(ctx, lis, register, remote.WithAuthenticator(auth, policy), remote.WithPages(apiPages),
		remote.WithGRPCOptions(srv.GRPCServerOptions()...), remote.WithServeLogger(serveLogger(d.logger)),
		remote.WithShutdownTimeout(0)) // ends the watches too; their clients resume against the next agent, or learn it restarted
	if err != nil {
		return fmt.Errorf("API: %w", err)
	}
	return nil
}

// serveLogger is the logger of remote.Serve: its warnings, not its
// "serving on" line — startAPI logged the socket already, with what
// resgraphctl does with it and the access rules.
func serveLogger(l *zap.Logger) *zap.Logger {
	return l.Named("api").WithOptions(zap.IncreaseLevel(zap.WarnLevel))
}

// apiPages are the pages (package access) that grant the calls of the
// API beside the State's.
var apiPages = map[string]access.Page{
	"/resgraph.observe.v1.Observer/ExplainResource":   access.PageExplain,
	"/resgraph.observe.v1.Observer/ExplainController": access.PageExplain,
	"/resgraph.observe.v1.Observer/Graph":             access.PageGraph,
	"/resgraph.observe.v1.Observer/Health":            access.PageHealth,
	"/grpc.health.v1.Health/":                         access.PageHealth,
	"/resgraph.observe.v1.Recorder/":                  access.PageRecording,
	"/resgraph.observe.v1.Planner/":                   access.PageExplain,
}
