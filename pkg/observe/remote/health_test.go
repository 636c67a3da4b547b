package remote_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/observe/remote"
)

// switchable is a health function whose readiness check a test flips.
type switchable struct{ ready atomic.Bool }

func (s *switchable) checks(context.Context) []remote.Check {
	msg := "every controller started"
	if !s.ready.Load() {
		msg = "controller LinkToStatus: held back"
	}
	return []remote.Check{
		{Probe: remote.Readiness, Name: "controllers", OK: s.ready.Load(), Message: msg},
		{Probe: remote.Liveness, Name: "router", OK: true, Message: "draining"},
	}
}

func TestOB3_HealthIsServedTwiceWithOneAnswer(t *testing.T) {
	var h switchable
	d := start(t, remote.WithHealth(h.checks), remote.WithHealthWatchInterval(1))
	ctx := context.Background()
	hc := healthpb.NewHealthClient(dial(t, d.target))

	checkAll := func(want map[string]healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		for svc, st := range want {
			resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
			require.NoError(t, err)
			assert.Equal(t, st, resp.GetStatus(), "service %q", svc)
		}
		list, err := hc.List(ctx, &healthpb.HealthListRequest{})
		require.NoError(t, err)
		for svc, st := range want {
			assert.Equal(t, st, list.GetStatuses()[svc].GetStatus(), "List: service %q", svc)
		}
	}
	cs, err := d.client.Health(ctx)
	require.NoError(t, err)
	assert.Equal(t, h.checks(ctx), cs)
	assert.False(t, remote.Passing(cs, ""))
	checkAll(map[string]healthpb.HealthCheckResponse_ServingStatus{
		"": healthpb.HealthCheckResponse_NOT_SERVING, "readiness": healthpb.HealthCheckResponse_NOT_SERVING,
		"liveness": healthpb.HealthCheckResponse_SERVING,
	})

	wctx, cancel := context.WithTimeout(ctx, time.Minute) // a failure's bound: a status that never comes
	defer cancel()
	w, err := hc.Watch(wctx, &healthpb.HealthCheckRequest{Service: "readiness"})
	require.NoError(t, err)
	first, err := w.Recv()
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, first.GetStatus())

	h.ready.Store(true)
	next, err := w.Recv()
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, next.GetStatus())
	checkAll(map[string]healthpb.HealthCheckResponse_ServingStatus{
		"": healthpb.HealthCheckResponse_SERVING, "readiness": healthpb.HealthCheckResponse_SERVING,
		"liveness": healthpb.HealthCheckResponse_SERVING,
	})

	_, err = hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"})
	assert.Equal(t, codes.NotFound, status.Code(err))
	u, err := hc.Watch(wctx, &healthpb.HealthCheckRequest{Service: "nope"})
	require.NoError(t, err)
	unknown, err := u.Recv()
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVICE_UNKNOWN, unknown.GetStatus())
}

func TestOB3_WithoutHealthNothingIsServed(t *testing.T) {
	d := start(t)
	ctx := context.Background()
	_, err := d.client.Health(ctx)
	assert.Equal(t, codes.Unimplemented, status.Code(err))
	assert.Contains(t, err.Error(), "serves no health checks")
	_, err = healthpb.NewHealthClient(dial(t, d.target)).Check(ctx, &healthpb.HealthCheckRequest{})
	assert.Equal(t, codes.Unimplemented, status.Code(err))
}

func TestOB2_APanickingHealthFunctionEndsThatCallOnly(t *testing.T) {
	d := start(t, remote.WithHealth(func(context.Context) []remote.Check { panic("boom") }))
	ctx := context.Background()
	_, err := d.client.Health(ctx)
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.Contains(t, err.Error(), "boom")
	_, err = d.client.Graph(ctx)
	assert.NoError(t, err, "the server goes on serving")
}
