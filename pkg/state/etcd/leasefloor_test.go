package etcd_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state/etcd"
	"github.com/resgraph/resgraph/pkg/state/etcd/internal/etcdtest"
)

// startWithTimeouts starts an etcd server of the test's own with the
// given heartbeat interval and election timeout (in ms), and returns a
// client of it.
func startWithTimeouts(t *testing.T, heartbeat, election string) *clientv3.Client {
	t.Helper()
	dir, err := os.MkdirTemp(etcdtest.TempRoot(), "resgraph-etcd-timeouts-")
	require.NoError(t, err)
	srv, err := etcdtest.Start(dir, "--heartbeat-interval", heartbeat, "--election-timeout", election)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	cli, err := srv.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// TestElector_LeaseFloorIsLoggedAndKeysAreEscaped: on an etcd with its
// default election timeout (1 s), a lease of 1 s is granted as 2 s (etcd
// grants no lease under 1.5 times its election timeout, rounded up to
// whole seconds): the elector says so at WARN, naming both. The election
// "controller/BtoC" (a controller's election under
// runtime.LeadPerController) is the key prefix
// PREFIX%leader/controller%2FBtoC/, its name escaped as the state escapes
// names, the candidate's key there is named by its lease's ID in hex, and
// the term's number is that key's create revision; the Runtime's election
// (runtime.LeadPerRuntime) is PREFIX%leader/runtime/ — what docs/states.md's
// "Running replicas" section and the package doc say.
func TestElector_LeaseFloorIsLoggedAndKeysAreEscaped(t *testing.T) {
	cli := startWithTimeouts(t, "100", "1000")
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
	assert.Equal(t, fmt.Sprintf("/mydaemon/%%leader/controller%%2FBtoC/%x", kv.Lease), string(kv.Key),
		"the candidate's key is named by its lease's ID in hex")
	assert.Equal(t, uint64(kv.CreateRevision), term.Number(), "the term's number is its key's create revision")
	ttl, err := cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
	require.NoError(t, err)
	assert.Equal(t, int64(2), ttl.GrantedTTL, "the key lives under the granted lease")

	rterm, err := el.Campaign(ctx, runtime.RuntimeElection)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rterm.Resign(context.Background()) })
	resp, err = cli.Get(ctx, "/mydaemon/%leader/runtime/", clientv3.WithPrefix())
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1, "the Runtime's election")
	assert.Equal(t, fmt.Sprintf("/mydaemon/%%leader/runtime/%x", kv.Lease), string(resp.Kvs[0].Key),
		"one lease per elector: the same ID names its key in every election")
}

// TestElector_AOneSecondLeaseNeedsAShortElectionTimeout: etcd grants a lease
// of 1 s (the elector's floor: WithLeaseTTL rounds up to whole seconds,
// at least one) only when 1.5 times its election timeout is at most a
// second: with a timeout of 600 ms it grants 1 s, and the elector warns
// about nothing.
func TestElector_AOneSecondLeaseNeedsAShortElectionTimeout(t *testing.T) {
	cli := startWithTimeouts(t, "100", "600")
	core, logs := observer.New(zapcore.WarnLevel)
	el := newElector(t, cli, "/mydaemon/", "r1", etcd.WithElectorLogger(zap.New(core)), etcd.WithLeaseTTL(300*time.Millisecond))
	ctx := testCtx(t)
	term, err := el.Campaign(ctx, "controller/BtoC")
	require.NoError(t, err)
	t.Cleanup(func() { _ = term.Resign(context.Background()) })

	assert.Empty(t, logs.All(), "no warning: etcd granted what was asked")
	resp, err := cli.Get(ctx, "/mydaemon/%leader/controller%2FBtoC/", clientv3.WithPrefix())
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1)
	ttl, err := cli.TimeToLive(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	require.NoError(t, err)
	assert.Equal(t, int64(1), ttl.GrantedTTL, "300 ms asked: 1 s, the elector's floor, granted")
}
