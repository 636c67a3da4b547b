package remote_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// TestN3_AWatchRefusedBeforeItIsReadGetsTheServersStatus: a server that
// refuses a watch before reading its request (here the daemon's own
// interceptor, as a rate limit would) ends the call with its status. A
// client that sends its request only after that status arrived gets
// io.EOF from the send; its Watch fails with the server's status
// (ResourceExhausted: rule N3's typed refusal), not with Unavailable — it
// is not a connection that broke, and trying again would fail the same
// way.
func TestN3_AWatchRefusedBeforeItIsReadGetsTheServersStatus(t *testing.T) {
	ctx := testCtx(t)
	refuse := func(any, grpc.ServerStream, *grpc.StreamServerInfo, grpc.StreamHandler) error {
		return status.Error(codes.ResourceExhausted, "too many watches for this daemon")
	}
	srv := remote.NewServer(inmem.NewState(), registry())
	gs := grpc.NewServer(append(srv.GRPCServerOptions(), grpc.ChainStreamInterceptor(refuse))...)
	srv.Register(gs)
	lis := listen(t, "tcp")
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gs.Serve(lis)
	}()
	t.Cleanup(func() { gs.Stop(); <-done })

	// The client's stream returns once the server's answer arrived (the
	// refusal's trailers), so that the request is sent after it.
	answered := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		cs, err := streamer(ctx, desc, cc, method, opts...)
		if err == nil {
			_, _ = cs.Header()
		}
		return cs, err
	}
	conn, err := grpc.NewClient(target(lis), grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithStreamInterceptor(answered))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	cl, err := remote.NewClient(conn, registry())
	require.NoError(t, err)

	err = cl.WatchKind(ctx, limitKind(), make(chan state.Event, 1))
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.Contains(t, err.Error(), "too many watches for this daemon")
	err = cl.Watch(ctx, resource.NewPointer(limitNS, limitKind().Type(), "a"), make(chan state.Event, 1))
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
}
