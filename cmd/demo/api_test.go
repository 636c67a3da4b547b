package main

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	obsremote "github.com/resgraph/resgraph/pkg/observe/remote"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state/remote"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
	"github.com/resgraph/resgraph/cmd/demo/internal/intent"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// TestAPI_ServesTheStateTheObserverAndHealth: the agent serves its state,
// its types' definitions, its observer and the gRPC health protocol on
// its API socket; ready once its controllers run.
func TestAPI_ServesTheStateTheObserverAndHealth(t *testing.T) {
	in, err := intent.Parse("sample", sampleIntent)
	require.NoError(t, err)
	socket := filepath.Join(t.TempDir(), "api.sock")
	d, _ := startDaemon(t, config{Intent: in, APISocket: socket})
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()

	w, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{Service: "readiness"})
	require.NoError(t, err)
	for {
		resp, err := w.Recv()
		require.NoError(t, err, "ready before the deadline")
		if resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			break
		}
	}
	checks, err := obsremote.NewClient(conn).Health(ctx)
	require.NoError(t, err)
	assert.True(t, obsremote.Passing(checks, ""), "%+v", checks)
	want := []string{"readiness runtime"}
	for _, c := range d.engine.Observe().Controllers() {
		want = append(want, "readiness controller "+c.Name)
	}
	want = append(want, "liveness runtime")
	var got []string
	for _, c := range checks {
		got = append(got, string(c.Probe)+" "+c.Name)
	}
	assert.Equal(t, want, got, "the Runtime's checks: one per controller, and the Runtime's")
	assert.Len(t, got, 10)

	defs, err := remote.Definitions(ctx, conn)
	require.NoError(t, err)
	def, err := defs.Resolve("linkstatuses")
	require.NoError(t, err)
	assert.Equal(t, netres.LinkStatusType, def.Type)
	st, err := remote.NewClient(conn, codec.NewRegistry(), remote.WithUnstructured())
	require.NoError(t, err)
	l, err := st.List(ctx, netres.Kinds()[0])
	require.NoError(t, err)
	assert.NotEmpty(t, l.Items)
	g, err := obsremote.NewClient(conn).Graph(ctx)
	require.NoError(t, err)
	assert.NotEmpty(t, g.Edges)
}

// TestAPI_AStaleSocketIsReplacedALiveOneRefused: a socket file left by an
// agent that died is removed; one an agent answers on is refused, naming
// it; the socket goes with the listener.
func TestAPI_AStaleSocketIsReplacedALiveOneRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "api.sock")
	stale, err := listenSocket(path, "its API", "--data-dir or --api-socket")
	require.NoError(t, err)
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	require.NoError(t, stale.Close())
	assert.FileExists(t, path, "a dead agent's socket")

	live, err := listenSocket(path, "its API", "--data-dir or --api-socket")
	require.NoError(t, err)
	_, err = listenSocket(path, "its API", "--data-dir or --api-socket")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "another agent serves its API on "+path)
	require.NoError(t, live.Close())
	assert.NoFileExists(t, path)
}

// TestAPI_SocketFlags: the API is served on api.sock in the data
// directory unless --api-socket says otherwise, or none.
func TestAPI_SocketFlags(t *testing.T) {
	var out, errOut syncBuffer
	parse := func(args ...string) cli.RunOptions {
		c, err := cli.Parse(append([]string{"run"}, args...), &out, &errOut)
		require.NoError(t, err)
		return c.Run
	}
	assert.Equal(t, filepath.Join(cli.DefaultDataDir(), "api.sock"), parse().APISocket)
	assert.Equal(t, "/x/api.sock", parse("--data-dir", "/x").APISocket)
	assert.Equal(t, "/y.sock", parse("--api-socket", "/y.sock").APISocket)
	assert.Empty(t, parse("--api-socket", "none").APISocket)
}
