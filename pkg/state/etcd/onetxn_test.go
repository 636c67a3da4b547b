package etcd_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// txnShape is what a transaction asked etcd: how many conditions, and how
// many operations on success and on failure.
type txnShape struct{ compares, success, failure int }

// rpcLog records the unary RPCs a client sent, by method, and the shape
// of each transaction.
type rpcLog struct {
	mu   sync.Mutex
	by   map[string]int
	txns []txnShape
	reqs []*etcdserverpb.TxnRequest
}

func (l *rpcLog) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	l.mu.Lock()
	l.by[method]++
	if tx, ok := req.(*etcdserverpb.TxnRequest); ok {
		l.txns = append(l.txns, txnShape{len(tx.Compare), len(tx.Success), len(tx.Failure)})
		l.reqs = append(l.reqs, tx)
	}
	l.mu.Unlock()
	return invoker(ctx, method, req, reply, cc, opts...)
}

// take returns what was recorded since the last take, and forgets it.
func (l *rpcLog) take() (map[string]int, []txnShape) {
	l.mu.Lock()
	defer l.mu.Unlock()
	by, txns := l.by, l.txns
	l.by, l.txns, l.reqs = map[string]int{}, nil, nil
	return by, txns
}

// requests returns the transactions recorded since the last take, and
// forgets everything recorded.
func (l *rpcLog) requests() []*etcdserverpb.TxnRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	reqs := l.reqs
	l.by, l.txns, l.reqs = map[string]int{}, nil, nil
	return reqs
}

// loggingClient returns a client of the test server that records its
// unary RPCs, closed at the end of the test.
func loggingClient(t *testing.T) (*clientv3.Client, *rpcLog) {
	t.Helper()
	l := &rpcLog{by: map[string]int{}}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{server.Endpoint()},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithUnaryInterceptor(l.intercept)},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cli.Close() })
	return cli, l
}

// TestWriteMemory_AWriteOfAKnownKeyIsOneTransaction: a Create, and an
// Update or Destroy of a key the state knows (its own write, or the
// running feed of a watched kind), sends exactly one RPC: a transaction
// with one condition on the key (two when fenced: the term's key too) and
// two operations when it succeeds (the value's put or delete, and the
// kind's head key's put) — the raw-etcd floor of E1 plus the head key.
func TestWriteMemory_AWriteOfAKnownKeyIsOneTransaction(t *testing.T) {
	ctx := testCtx(t)
	ns := resource.Namespace("onetxn")
	for _, tc := range []struct {
		name    string
		watched bool
		fenced  bool
	}{{"memory", false, false}, {"feed", true, false}, {"fenced", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := newPrefix()
			cli, log := loggingClient(t)
			st, err := etcd.New(ctx, cli, registry(), etcd.WithPrefix(prefix))
			require.NoError(t, err)
			wctx, compares := ctx, 1
			if tc.fenced {
				term, err := newElector(t, client, prefix, "a").Campaign(ctx, "a")
				require.NoError(t, err)
				wctx, compares = state.WithFence(ctx, term.Fence()), 2
			}
			r := conformance.NewIntResource(ns, "a", 1)
			if tc.watched {
				watchKind(t, ctx, st, resource.KindOf(r.Metadata()))
			}
			log.take()
			one := func(what string, err error) {
				t.Helper()
				require.NoError(t, err, what)
				by, txns := log.take()
				require.Equal(t, map[string]int{"/etcdserverpb.KV/Txn": 1}, by, what)
				require.Equal(t, compares, txns[0].compares, what)
				require.Equal(t, 2, txns[0].success, what)
			}
			one("create", st.Create(wctx, r))
			for v := 2; v < 5; v++ {
				r.TypedSpec().Value = v
				one("update", st.Update(wctx, r))
			}
			one("destroy", st.Destroy(wctx, r.Metadata()))
		})
	}
}

// watchKind watches kind on st until the end of the test and returns once
// the watch is bootstrapped; its events are drained.
func watchKind(t *testing.T, ctx context.Context, st state.State, kind resource.Kind) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan state.Event)
	require.NoError(t, st.WatchKind(ctx, kind, ch, state.WithBootstrapContents(true)))
	for bootstrapped := false; !bootstrapped; {
		select {
		case ev := <-ch:
			bootstrapped = ev.Type == state.Bootstrapped
		case <-ctx.Done():
			t.Fatal("the watch did not bootstrap")
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}
