package remote_test

import (
	"context"
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// TestA1_ServeRefusesWithoutAuthenticator: a listener without an
// authenticator and rules does not start (and is closed); told insecure
// explicitly, it serves and warns when it starts.
func TestA1_ServeRefusesWithoutAuthenticator(t *testing.T) {
	srv := remote.NewServer(inmem.NewState(), registry())
	for name, opts := range map[string][]remote.ServeOption{
		"nothing":              nil,
		"no rules":             {remote.WithAuthenticator(access.PeerCredentials(), nil)},
		"insecure and secured": {remote.Insecure(), remote.WithAuthenticator(access.PeerCredentials(), &access.Policy{})},
	} {
		lis := listen(t, "unix")
		err := remote.Serve(testCtx(t), lis, srv.Register, opts...)
		require.Error(t, err, name)
		assert.True(t, state.IsInvalidError(err), name)
		_, aerr := lis.Accept()
		assert.ErrorIs(t, aerr, net.ErrClosed, "%s: the listener is closed", name)
	}
	err := remote.Serve(testCtx(t), listen(t, "unix"), srv.Register)
	assert.ErrorContains(t, err, "without an authenticator and access rules: give remote.WithAuthenticator(access.PeerCredentials() or access.MutualTLS(cfg), policy), or remote.Insecure() to serve everyone")

	core, logs := observer.New(zap.WarnLevel)
	ctx, cancel := context.WithCancel(testCtx(t))
	lis := listen(t, "unix")
	served := make(chan error, 1)
	go func() {
		served <- remote.Serve(ctx, lis, srv.Register, remote.Insecure(), remote.WithServeLogger(zap.New(core)))
	}()
	cl := client(t, target(lis))
	require.NoError(t, cl.Create(ctx, conformance.NewIntResource("ns", "a", 1)), "insecure serves everyone")
	cancel()
	require.NoError(t, <-served)
	require.Equal(t, 1, logs.Len())
	assert.Contains(t, logs.All()[0].Message, "WITHOUT authentication (remote.Insecure)")
}

// TestA1_IdentitiesReachTheRules: over the unix socket the rules see this
// process's uid, over mutual TLS the certificate's name: each gets what
// its role grants, a denial is PermissionDenied naming identity, verb
// and resource (access.IsDeniedError on the client), nothing is written,
// and the audit log has the identity of each.
func TestA1_IdentitiesReachTheRules(t *testing.T) {
	ctx := testCtx(t)
	e := newAccessEnv(t, "reader-one")
	before := e.seed(t)
	overUnix := accessClient(t, e.unixConn(t))
	overTLS := accessClient(t, e.certConn(t, "reader"))
	writer := accessClient(t, e.certConn(t, "bystander"))
	for name, cl := range map[string]state.State{"unix": overUnix, "tls": overTLS} {
		got, err := cl.Get(ctx, resource.NewPointer("one", conformance.IntResourceType, "a"))
		require.NoError(t, err, name)
		assert.Equal(t, 1, got.(*conformance.IntResource).TypedSpec().Value)
		err = cl.Create(ctx, conformance.NewIntResource("one", "new", 1))
		require.Error(t, err, name)
		assert.Equal(t, codes.PermissionDenied, status.Code(err), name)
		assert.True(t, access.IsDeniedError(err), name)
	}
	err := overUnix.Create(ctx, conformance.NewIntResource("one", "new", 1))
	uid := access.Identity{Transport: access.UnixPeer, UID: uint32(os.Getuid())}
	assert.EqualError(t, err, "denied: identity "+uid.String()+" has no role granting create on "+conformance.IntResourceType+"(one) (resource new)")
	err = overTLS.Create(ctx, conformance.NewIntResource("one", "new", 1))
	assert.EqualError(t, err, `denied: identity certificate "CN=reader" has no role granting create on `+conformance.IntResourceType+"(one) (resource new)")
	assert.Equal(t, before, e.contents(t), "nothing written")

	require.NoError(t, writer.Create(ctx, conformance.NewIntResource("two", "w", 1)))
	writes := e.audited(`certificate "CN=reader"`, "denied")
	require.NotEmpty(t, writes)
	assert.Equal(t, "create", writes[0].ContextMap()["verb"])
	created := e.audited(`certificate "CN=bystander"`, "allowed")
	require.NotEmpty(t, created)
	last := created[len(created)-1].ContextMap()
	assert.Equal(t, map[string]any{"verb": "create", "namespace": "two", "id": "w", "version": uint64(1), "rule": "role writer"},
		map[string]any{"verb": last["verb"], "namespace": last["namespace"], "id": last["id"], "version": last["version"], "rule": last["rule"]})
}

// TestA1_DefinitionsAndRevisionNeedARole: an identity no role is bound to
// cannot even ask for the definitions or the revision.
func TestA1_DefinitionsAndRevisionNeedARole(t *testing.T) {
	ctx := testCtx(t)
	e := newAccessEnv(t, "")
	conn := e.unixConn(t)
	_, err := remote.Definitions(ctx, conn)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.ErrorContains(t, err, "has no role")
	_, err = accessClient(t, conn).(state.RevisionReporter).Revision(ctx)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	defs, err := remote.Definitions(ctx, e.certConn(t, "reader"))
	require.NoError(t, err)
	assert.Positive(t, defs.Len())
}

// TestA1_CallsOfOtherServicesNeedTheirPage: beside the State, a call of a
// service is admitted by the page WithPages maps it to (grpc.health.v1's
// Check to health: the writer has every page, reader-one none), and a
// call of no page (its List) is denied.
func TestA1_CallsOfOtherServicesNeedTheirPage(t *testing.T) {
	ctx := testCtx(t)
	e := newAccessEnv(t, "reader-one")
	for _, cn := range []string{"reader", "bystander"} {
		_, err := healthpb.NewHealthClient(e.certConn(t, cn)).List(ctx, &healthpb.HealthListRequest{})
		assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
		assert.ErrorContains(t, err, "no page grants the call /grpc.health.v1.Health/List")
	}
	_, err := healthpb.NewHealthClient(e.certConn(t, "bystander")).Check(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	_, err = healthpb.NewHealthClient(e.certConn(t, "reader")).Check(ctx, &healthpb.HealthCheckRequest{})
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.ErrorContains(t, err, `denied: identity certificate "CN=reader" has no role granting the health pages`)
	assert.NotEmpty(t, e.audited(`certificate "CN=reader"`, "denied"))
}
