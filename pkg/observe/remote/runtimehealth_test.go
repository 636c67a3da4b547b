package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/observe/remote"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// heldBack is a transform whose first pass waits for release: it signals
// entered when it starts transforming.
func heldBack(entered chan<- struct{}, release <-chan struct{}) controller.Controller {
	return transform.NewController(transform.Settings[*link, *linkStatus]{
		Name: "HeldBack",
		MapMetadataFunc: func(l *link) *linkStatus {
			return typed.NewDefault[statusSpec, statusDef](l.Metadata().ID(), statusSpec{})
		},
		TransformFunc: func(ctx context.Context, _ controller.Reader, _ *zap.Logger, _ *link, _ *linkStatus) error {
			select {
			case entered <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		},
	})
}

// TestOB6_TheRuntimesHealthIsServedWithItsNamedChecks: RuntimeHealth
// serves a real Runtime's health: while a controller is held back in its
// first pass, readiness fails naming it and why (the Health call) and
// grpc.health.v1's readiness is NOT_SERVING while liveness is SERVING;
// once it caught up, every check passes, one per controller.
func TestOB6_TheRuntimesHealthIsServedWithItsNamedChecks(t *testing.T) {
	st := runtimetest.NewState(t)
	runtimetest.Create(t, st, typed.NewDefault[linkSpec, linkDef]("eth0", linkSpec{MTU: 1500}))
	entered, release := make(chan struct{}, 1), make(chan struct{})
	env := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(heldBack(entered, release)))
	d := (&daemon{env: env}).serve(t, remote.WithHealth(remote.RuntimeHealth(env.Runtime.Observe())), remote.WithHealthWatchInterval(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a failure's bound
	defer cancel()
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("the held-back transform never ran")
	}

	cs, err := d.client.Health(ctx)
	require.NoError(t, err)
	assert.Equal(t, []remote.Check{
		{Probe: remote.Readiness, Name: "runtime", Message: "not ready: see the failing checks"},
		{Probe: remote.Readiness, Name: "controller HeldBack", Message: "its first pass has not ended"},
		{Probe: remote.Liveness, Name: "runtime", OK: true, Message: "live: its loops are moving"},
	}, cs)
	hc := healthpb.NewHealthClient(dial(t, d.target))
	for svc, want := range map[string]healthpb.HealthCheckResponse_ServingStatus{
		"": healthpb.HealthCheckResponse_NOT_SERVING, "readiness": healthpb.HealthCheckResponse_NOT_SERVING,
		"liveness": healthpb.HealthCheckResponse_SERVING,
	} {
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		require.NoError(t, err)
		assert.Equal(t, want, resp.GetStatus(), "service %q", svc)
	}

	w, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: "readiness"})
	require.NoError(t, err)
	close(release)
	for {
		resp, err := w.Recv()
		require.NoError(t, err, "ready once the controller caught up")
		if resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			break
		}
	}
	cs, err = d.client.Health(ctx)
	require.NoError(t, err)
	assert.True(t, remote.Passing(cs, ""), "%+v", cs)
	assert.Equal(t, []string{"runtime", "controller HeldBack", "runtime"}, names(cs))
}

func TestOB6_AnObserverThatTellsNoHealthServesNone(t *testing.T) {
	assert.Nil(t, remote.RuntimeHealth(nil))
}

func names(cs []remote.Check) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}
