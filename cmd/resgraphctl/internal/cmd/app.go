package cmd

import (
	"context"
	"io"
	"time"

	"google.golang.org/grpc"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/endpoint"
	obsremote "github.com/resgraph/resgraph/pkg/observe/remote"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// app is what every command shares: the global flags, the writers, and
// the connection to the daemon with its clients, made on first use.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// endpoint and requestTimeout are the global flags.
	endpoint       string
	requestTimeout time.Duration
	tls            endpoint.TLS
	// ran is set once a command's RunE starts: an error before it is a
	// usage error.
	ran bool

	conn *grpc.ClientConn
	st   state.State
	dry  state.State // st's dry run (remote.WithDryRun)
	defs *definition.Registry
}

// dial returns the connection to the daemon, made on first use.
func (a *app) dial() (*grpc.ClientConn, error) {
	if a.conn == nil {
		conn, err := endpoint.Dial(a.endpoint, a.tls)
		if err != nil {
			return nil, usageErr(err)
		}
		a.conn = conn
	}
	return a.conn, nil
}

// close closes the connection, if any.
func (a *app) close() {
	if a.conn != nil {
		_ = a.conn.Close()
	}
}

// state returns the daemon's state: a remote client that reads and
// writes every type as remote.Unstructured (resgraphctl is compiled with
// no resource type).
func (a *app) state() (state.State, error) {
	if a.st == nil {
		conn, err := a.dial()
		if err != nil {
			return nil, err
		}
		st, err := remote.NewClient(conn, codec.NewRegistry(), remote.WithUnstructured())
		if err != nil {
			return nil, err
		}
		a.st = st
	}
	return a.st, nil
}

// dryState returns the daemon's state as state() does, whose writes are
// dry runs (remote.WithDryRun): checked by the daemon, never written.
func (a *app) dryState() (state.State, error) {
	if a.dry == nil {
		conn, err := a.dial()
		if err != nil {
			return nil, err
		}
		st, err := remote.NewClient(conn, codec.NewRegistry(), remote.WithUnstructured(), remote.WithDryRun())
		if err != nil {
			return nil, err
		}
		a.dry = st
	}
	return a.dry, nil
}

// observer returns a client of the daemon's observer (explanations, the
// graph, health).
func (a *app) observer() (*obsremote.Client, error) {
	conn, err := a.dial()
	if err != nil {
		return nil, err
	}
	return obsremote.NewClient(conn), nil
}

// flight returns a client of the daemon's flight recorder and planner.
func (a *app) flight() (*obsremote.FlightClient, error) {
	conn, err := a.dial()
	if err != nil {
		return nil, err
	}
	return obsremote.NewFlightClient(conn), nil
}

// definitions returns the daemon's resource definitions, asked once.
func (a *app) definitions(ctx context.Context) (*definition.Registry, error) {
	if a.defs == nil {
		conn, err := a.dial()
		if err != nil {
			return nil, err
		}
		ctx, cancel := a.request(ctx)
		defer cancel()
		defs, err := remote.Definitions(ctx, conn)
		if err != nil {
			return nil, err
		}
		a.defs = defs
	}
	return a.defs, nil
}

// resolve returns the definition of the type named name (its type or an
// alias, any case).
func (a *app) resolve(ctx context.Context, name string) (definition.Definition, error) {
	defs, err := a.definitions(ctx)
	if err != nil {
		return definition.Definition{}, err
	}
	d, err := defs.Resolve(name)
	if err != nil {
		return d, unknownType(name, defs)
	}
	return d, nil
}

// kind resolves a type name and a namespace ("" for the type's default)
// into a kind.
func (a *app) kind(ctx context.Context, name, ns string) (resource.Kind, definition.Definition, error) {
	d, err := a.resolve(ctx, name)
	if err != nil {
		return nil, d, err
	}
	if ns == "" {
		ns = d.DefaultNamespace
	}
	if ns == "" {
		return nil, d, usageErr(errorf("%s has no default namespace: give one with -n", d.Type))
	}
	return resource.NewKind(ns, d.Type), d, nil
}

// request bounds one request by --request-timeout.
func (a *app) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, a.requestTimeout)
}

// shortName is what messages call a type: its first alias, or the type.
func shortName(d definition.Definition) string {
	if len(d.Aliases) > 0 {
		return d.Aliases[0]
	}
	return d.Type
}

// named is how messages name a resource: "linkspec/eth0".
func named(d definition.Definition, id resource.ID) string { return shortName(d) + "/" + id }
