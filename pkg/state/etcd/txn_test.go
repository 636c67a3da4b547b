package etcd_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// otherKV is a KV of the client's that is not the client's own type: a
// state on a client whose KV it is sends its writes through it.
type otherKV struct{ clientv3.KV }

// txnWrites makes, on a new state at prefix over cli, a Create, two
// Updates, an Update of an old version (refused before its transaction),
// an Update etcd refuses (another state wrote the key since), a Destroy, and the same
// fenced by a term, and returns each transaction sent, described with the
// prefix and the term's lease left out.
func txnWrites(t *testing.T, cli *clientv3.Client, log *rpcLog, prefix string) []string {
	t.Helper()
	ctx := testCtx(t)
	st, err := etcd.New(ctx, cli, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	other := newStateAt(t, prefix)
	term, err := newElector(t, client, prefix, "a").Campaign(ctx, "a")
	require.NoError(t, err)
	log.requests()
	for i, wctx := range []context.Context{ctx, state.WithFence(ctx, term.Fence())} {
		r := conformance.NewIntResource("txn", fmt.Sprint("a", i), 1)
		require.NoError(t, st.Create(wctx, r))
		old := r.DeepCopy()
		r.TypedSpec().Value = 2
		require.NoError(t, st.Update(wctx, r))
		r.TypedSpec().Value = 3
		require.NoError(t, st.Update(wctx, r))
		require.True(t, state.IsConflictError(st.Update(wctx, old)))
		// Another state updates the key: st's transaction is refused.
		cur := r.DeepCopy()
		require.NoError(t, other.Update(ctx, cur))
		require.True(t, state.IsConflictError(st.Update(wctx, r)))
		r = cur.(*conformance.IntResource)
		require.NoError(t, st.Destroy(wctx, r.Metadata()))
	}
	var out []string
	for _, req := range log.requests() {
		d := strings.ReplaceAll(describeTxn(req), prefix, "P/")
		out = append(out, leaseKey.ReplaceAllString(d, "%leader/a/L"))
	}
	return out
}

// leaseKey matches the campaign's key, named after its lease.
var leaseKey = regexp.MustCompile(`%leader/a/[0-9a-f]+`)

// describeTxn describes a transaction: its conditions, its operations on
// success and on failure (values left out: their timestamps differ).
func describeTxn(tx *etcdserverpb.TxnRequest) string {
	var b strings.Builder
	for _, c := range tx.Compare {
		fmt.Fprintf(&b, "if %s(%s) %s %T; ", c.Target, c.Key, c.Result, c.TargetUnion)
	}
	for i, ops := range [][]*etcdserverpb.RequestOp{tx.Success, tx.Failure} {
		fmt.Fprintf(&b, "%d:", i)
		for _, op := range ops {
			switch r := op.Request.(type) {
			case *etcdserverpb.RequestOp_RequestPut:
				p := r.RequestPut
				fmt.Fprintf(&b, " put(%s, %t, %d %t %t %t)", p.Key, len(p.Value) > 0, p.Lease, p.PrevKv, p.IgnoreValue, p.IgnoreLease)
			case *etcdserverpb.RequestOp_RequestDeleteRange:
				d := r.RequestDeleteRange
				fmt.Fprintf(&b, " delete(%s, %q %t)", d.Key, d.RangeEnd, d.PrevKv)
			case *etcdserverpb.RequestOp_RequestRange:
				g := r.RequestRange
				fmt.Fprintf(&b, " get(%s, %q %d %d %t %t %t %v %v)", g.Key, g.RangeEnd, g.Limit, g.Revision, g.Serializable, g.KeysOnly, g.CountOnly, g.SortOrder, g.SortTarget)
			default:
				fmt.Fprintf(&b, " %T", r)
			}
		}
		b.WriteString("; ")
	}
	return b.String()
}

// TestWriteTxn_TheRequestIsTheClientBuildersOne: the transactions a state
// builds itself (a client whose KV is its own) are the ones the etcd
// client's builder makes (a client with another KV), condition for
// condition and operation for operation, for every write, refused and
// fenced ones included.
func TestWriteTxn_TheRequestIsTheClientBuildersOne(t *testing.T) {
	own, ownLog := loggingClient(t)
	other, otherLog := loggingClient(t)
	other.KV = otherKV{other.KV}
	require.True(t, etcd.SendsItsOwnTxn(own))
	require.False(t, etcd.SendsItsOwnTxn(other))
	built := txnWrites(t, own, ownLog, newPrefix())
	require.Len(t, built, 2*5)
	require.Equal(t, txnWrites(t, other, otherLog, newPrefix()), built)
}

// TestWriteTxn_ANamespacedClientWritesInItsNamespace: a state on a client
// whose KV is namespace.NewKV's writes under the namespace, as it reads.
func TestWriteTxn_ANamespacedClientWritesInItsNamespace(t *testing.T) {
	ctx := testCtx(t)
	cli, _ := loggingClient(t)
	ns := strings.TrimSuffix(newPrefix(), "/")
	cli.KV = namespace.NewKV(cli.KV, ns)
	require.False(t, etcd.SendsItsOwnTxn(cli))
	prefix := newPrefix()
	st, err := etcd.New(ctx, cli, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	r := conformance.NewIntResource("txn", "a", 1)
	require.NoError(t, st.Create(ctx, r))
	r.TypedSpec().Value = 2
	require.NoError(t, st.Update(ctx, r))
	got, err := st.Get(ctx, r.Metadata())
	require.NoError(t, err)
	require.Equal(t, 2, got.(*conformance.IntResource).TypedSpec().Value)
	raw, err := client.Get(ctx, ns+prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	require.Equal(t, int64(2), raw.Count, "the resource's key and its kind's head key, under the namespace")
	require.NoError(t, st.Destroy(ctx, r.Metadata()))
}

// TestWriteTxn_IsOneAllocation: the request of an unfenced write's
// transaction, with its condition, operations and their lists, is one
// allocation (a fence's condition and read are a second one).
func TestWriteTxn_IsOneAllocation(t *testing.T) {
	require.Equal(t, []float64{1, 1, 1}, etcd.AllocsOfAWriteTxn())
}
