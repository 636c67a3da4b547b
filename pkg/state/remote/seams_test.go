package remote_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// TestCallState_DeniesWithItsStatus: the per-call hook decides, from the
// call's context, whom to serve: a denial reaches the client as the
// status it carries (PermissionDenied), and nothing is read or written.
func TestCallState_DeniesWithItsStatus(t *testing.T) {
	ctx := testCtx(t)
	st := inmem.NewState()
	d := serve(t, listen(t, "tcp"), st, remote.WithCallState(func(ctx context.Context) (state.State, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		if user := md.Get("user"); len(user) != 1 || user[0] != "admin" {
			return nil, status.Errorf(codes.PermissionDenied, "denied: %v may not use this state", user)
		}
		return st, nil
	}))
	cl := client(t, d.Addr)
	r := conformance.NewIntResource(limitNS, "a", 1)
	err := cl.Create(metadata.AppendToOutgoingContext(ctx, "user", "mallory"), r)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.Contains(t, err.Error(), "denied: [mallory]")
	err = cl.WatchKind(metadata.AppendToOutgoingContext(ctx, "user", "mallory"), limitKind(), make(chan state.Event, 1))
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	_, err = st.Get(ctx, r.Metadata())
	assert.True(t, state.IsNotFoundError(err), "nothing written")

	require.NoError(t, cl.Create(metadata.AppendToOutgoingContext(ctx, "user", "admin"), r))
}

type linkSpec struct {
	MTU  int    `json:"mtu"`
	Name string `json:"name"`
}

type linkDef struct{}

func (linkDef) Definition() typed.Definition {
	return typed.Definition{Type: "Links.net.resgraph.dev", DefaultNamespace: "network"}
}

func (linkDef) ResourceDefinition() definition.Definition {
	return definition.Definition{
		Aliases: []string{"links", "link"},
		Columns: []definition.Column{{Name: "MTU", Path: ".mtu"}},
	}
}

// TestDefinitions_ServedToTools: a tool that was not compiled with the
// server's types learns their definitions over the API and resolves
// their aliases.
func TestDefinitions_ServedToTools(t *testing.T) {
	ctx := testCtx(t)
	reg := registry()
	codec.MustRegister[linkSpec, linkDef](reg)
	srv := serveRegistry(t, listen(t, "unix"), inmem.NewState(), reg)
	defs, err := remote.Definitions(ctx, dial(t, srv.Addr))
	require.NoError(t, err)
	d, err := defs.Resolve("LINK")
	require.NoError(t, err)
	assert.True(t, d.Equal(definition.Definition{
		Type: "Links.net.resgraph.dev", DefaultNamespace: "network", Aliases: []string{"links", "link"},
		Encoding: "json", Columns: []definition.Column{{Name: "MTU", Path: ".mtu"}},
	}), "%+v", d)
	assert.Equal(t, len(reg.Types()), defs.Len())
}

// TestN4_VanishingClientLeavesNothing: a client that goes away in the
// middle of its watches and of a List leaves no goroutine behind on the
// server, and the server serves the next client.
func TestN4_VanishingClientLeavesNothing(t *testing.T) {
	ctx := testCtx(t)
	st := inmem.NewState()
	d := serve(t, listen(t, "tcp"), st)
	for i := range 2000 {
		require.NoError(t, st.Create(ctx, conformance.NewStrResource(limitNS, fmt.Sprintf("s%04d", i), strings.Repeat("v", 500))))
	}
	ignore := goleak.IgnoreCurrent()
	conn := dial(t, d.Addr)
	cl, err := remote.NewClient(conn, registry())
	require.NoError(t, err)
	kind := resource.NewKind(limitNS, conformance.StrResourceType)
	cctx, cancel := context.WithCancel(ctx)
	for range 20 {
		// Watches whose watcher never reads: the server holds their backlog.
		require.NoError(t, cl.WatchKind(cctx, kind, make(chan state.Event), state.WithBootstrapContents(true)))
	}
	listed := make(chan error, 1)
	go func() { _, err := cl.List(cctx, kind); listed <- err }()
	require.NoError(t, conn.Close())
	<-listed
	cancel() // the client's process is gone: its own goroutines end (S13)
	goleak.VerifyNone(t, ignore)

	after := client(t, d.Addr)
	list, err := after.List(ctx, kind)
	require.NoError(t, err)
	assert.Len(t, list.Items, 2000)
}
