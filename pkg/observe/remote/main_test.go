package remote_test

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/observe/remote"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type (
	linkSpec   struct{ MTU int }
	statusSpec struct{ MTU int }
	linkDef    struct{}
	statusDef  struct{}
	link       = typed.Resource[linkSpec, linkDef]
	linkStatus = typed.Resource[statusSpec, statusDef]
)

func (linkDef) Definition() typed.Definition {
	return typed.Definition{Type: "Links.test.resgraph.dev", DefaultNamespace: "net"}
}

func (statusDef) Definition() typed.Definition {
	return typed.Definition{Type: "LinkStatuses.test.resgraph.dev", DefaultNamespace: "net"}
}

// linkToStatus is a transform from each link to its status.
func linkToStatus() controller.Controller {
	return transform.NewController(transform.Settings[*link, *linkStatus]{
		Name: "LinkToStatus",
		MapMetadataFunc: func(l *link) *linkStatus {
			return typed.NewDefault[statusSpec, statusDef](l.Metadata().ID(), statusSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, l *link, s *linkStatus) error {
			s.TypedSpec().MTU = l.TypedSpec().MTU
			return nil
		},
	}, transform.WithInputFinalizers())
}

// daemon is a Runtime with one transform, its observer served on a unix
// socket until the test ends.
type daemon struct {
	env    *runtimetest.Env
	client *remote.Client
	target string
}

func start(tb testing.TB, opts ...remote.ServerOption) *daemon {
	tb.Helper()
	env := runtimetest.Start(tb, runtimetest.WithControllers(linkToStatus()))
	return (&daemon{env: env}).serve(tb, opts...)
}

// serve serves the daemon's observer with opts on a socket of its own
// until the test ends, and returns the daemon as reached there.
func (d *daemon) serve(tb testing.TB, opts ...remote.ServerOption) *daemon {
	tb.Helper()
	lis, err := net.Listen("unix", filepath.Join(tb.TempDir(), "api.sock"))
	if err != nil {
		tb.Fatal(err)
	}
	gs := grpc.NewServer()
	remote.NewServer(d.env.Runtime.Observe(), opts...).Register(gs)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gs.Serve(lis)
	}()
	tb.Cleanup(func() {
		gs.Stop()
		<-done
	})
	target := "unix://" + lis.Addr().String()
	return &daemon{env: d.env, client: remote.NewClient(dial(tb, target)), target: target}
}

// dial returns a connection to target, closed when the test ends.
func dial(tb testing.TB, target string) *grpc.ClientConn {
	tb.Helper()
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	return conn
}
