package etcd_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/state/etcd"
	"github.com/resgraph/resgraph/pkg/state/etcd/internal/etcdtest"
)

// TestElector_LeaseFloorIsLoggedAndKeysAreEscaped: on an etcd with its
// default election timeout (1 s), a lease of 1 s is granted as 2 s (etcd
// grants no lease under 1.5 times its election timeout, rounded up to
// whole seconds): the elector says so at WARN, naming both. The election
// "controller/BtoC" (a controller's election under
// runtime.LeadPerController) is the key prefix
// PREFIX%leader/controller%2FBtoC/, its name escaped as the state escapes
// names, and the term's number is the create revision of the leader's key
// there, which lives under the granted lease — what the README's replicas
// section says.
func TestElector_LeaseFloorIsLoggedAndKeysAreEscaped(t *testing.T) {
	dir, err := os.MkdirTemp(etcdtest.TempRoot(), "resgraph-etcd-default-timeouts-")
	require.NoError(t, err)
	srv, err := etcdtest.Start(dir, "--heartbeat-interval", "100", "--election-timeout", "1000")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	cli, err := srv.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = cli.Close() })

	core, logs := observer.New(zapcore.WarnLevel)
	el := newElector(t, cli, "/mydaemon/", "r1", etcd.WithElectorLogger(zap.New(core)))
	ctx := testCtx(t)
	term, err := el.Campaign(ctx, "controller/BtoC")
	require.NoError(t, err)
	t.Cleanup(func() { _ = term.Resign(context.Background()) })

	warned := logs.FilterMessageSnippet("etcd granted a longer lease than asked").All()
	require.Len(t, warned, 1, "one warning for the session's lease")
	fields := warned[0].ContextMap()
	assert.Equal(t, time.Second, fields["asked"])
	assert.Equal(t, 2*time.Second, fields["granted"])

	resp, err := cli.Get(ctx, "/mydaemon/%leader/controller%2FBtoC/", clientv3.WithPrefix())
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1, "the leader's key under the escaped election name")
	kv := resp.Kvs[0]
	assert.Equal(t, uint64(kv.CreateRevision), term.Number(), "the term's number is its key's create revision")
	ttl, err := cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
	require.NoError(t, err)
	assert.Equal(t, int64(2), ttl.GrantedTTL, "the key lives under the granted lease")
}
