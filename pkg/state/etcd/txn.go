package etcd

import (
	"context"
	"reflect"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// A write's transaction (Create, Update, Destroy) is one conditional Txn:
// if the key's condition holds (and the fence's key still has its term's
// create revision), put or delete the key and put the kind's head key;
// else read the key (and the fence's key). The state builds etcd's
// request itself, in one allocation (writeTxn; a fence's part is a second
// one), where the client's builder
// (Txn().If().Then().Else()) allocates each condition, operation and
// their lists apart, and sends it with the client's own KV service and
// call options (txnSender). The request is the same either way.

// writeOp is what a write's transaction does.
type writeOp uint8

const (
	opCreate  writeOp = iota // if the key does not exist: put
	opUpdate                 // if the key's mod revision is the expected one: put
	opDestroy                // if the key's mod revision is the expected one: delete
)

// writeTxn is the request of a write's transaction, with everything it
// points to but a fence's part (fenceTxn), which only fenced writes
// allocate.
type writeTxn struct {
	req      pb.TxnRequest
	cmps     [2]*pb.Compare
	cmp      pb.Compare
	created  pb.Compare_CreateRevision
	modified pb.Compare_ModRevision
	success  [2]*pb.RequestOp
	failure  [2]*pb.RequestOp
	ops      [3]pb.RequestOp // the value's put or delete, the head key's put, the key's read
	put      pb.RequestOp_RequestPut
	putReq   pb.PutRequest
	del      pb.RequestOp_RequestDeleteRange
	delReq   pb.DeleteRangeRequest
	head     pb.RequestOp_RequestPut
	headReq  pb.PutRequest
	get      pb.RequestOp_RequestRange
	getReq   pb.RangeRequest
}

// fenceTxn is a fenced write's condition on its term's key and the read
// of that key on failure.
type fenceTxn struct {
	cmp    pb.Compare
	rev    pb.Compare_CreateRevision
	op     pb.RequestOp
	get    pb.RequestOp_RequestRange
	getReq pb.RangeRequest
}

// newWriteTxn returns the transaction of op on key (of a kind whose head
// key is head): mod is the key's expected mod revision (opUpdate,
// opDestroy), val the value to put (opCreate, opUpdate), fc the write's
// fence or nil. The failure branch reads the key (opUpdate, opDestroy),
// then the fence's key when fc is not nil: responses in that order.
func newWriteTxn(op writeOp, key, head []byte, mod int64, val []byte, fc *fence) *writeTxn {
	t := &writeTxn{}
	t.cmp = pb.Compare{Result: pb.Compare_EQUAL, Key: key}
	if op == opCreate {
		t.cmp.Target, t.cmp.TargetUnion = pb.Compare_CREATE, &t.created
	} else {
		t.modified.ModRevision = mod
		t.cmp.Target, t.cmp.TargetUnion = pb.Compare_MOD, &t.modified
	}
	t.cmps[0] = &t.cmp
	t.req.Compare = t.cmps[:1]
	if op == opDestroy {
		t.delReq.Key, t.del.RequestDeleteRange = key, &t.delReq
		t.ops[0].Request = &t.del
	} else {
		t.putReq.Key, t.putReq.Value, t.put.RequestPut = key, val, &t.putReq
		t.ops[0].Request = &t.put
	}
	t.headReq.Key, t.head.RequestPut = head, &t.headReq
	t.ops[1].Request = &t.head
	t.success = [2]*pb.RequestOp{&t.ops[0], &t.ops[1]}
	t.req.Success = t.success[:]
	t.req.Failure = t.failure[:0]
	if op != opCreate {
		t.getReq.Key, t.get.RequestRange = key, &t.getReq
		t.ops[2].Request = &t.get
		t.req.Failure = append(t.req.Failure, &t.ops[2])
	}
	if fc != nil {
		t.fenced(fc)
	}
	return t
}

// fenced adds the fence's condition and, on failure, the read of its key.
func (t *writeTxn) fenced(fc *fence) {
	f := &fenceTxn{}
	f.rev.CreateRevision = fc.rev
	f.cmp = pb.Compare{Result: pb.Compare_EQUAL, Target: pb.Compare_CREATE, Key: []byte(fc.key), TargetUnion: &f.rev}
	t.cmps[1] = &f.cmp
	t.req.Compare = t.cmps[:2]
	f.getReq.Key, f.get.RequestRange = f.cmp.Key, &f.getReq
	f.op.Request = &f.get
	t.req.Failure = append(t.req.Failure, &f.op)
}

// txnSender sends the write transactions: with etcd's KV service on the
// client's connection (the client's retrying KV client, called with the
// client's call options) when the client's KV is its own; through the
// client's KV otherwise (a namespace.NewKV wrapper, a client without a
// connection of its own), whose builder makes the same request.
type txnSender struct {
	kv   clientv3.KV
	kvc  pb.KVClient // nil: through kv
	opts []grpc.CallOption
}

// newTxnSender returns the sender of cli's write transactions.
func newTxnSender(cli *clientv3.Client) txnSender {
	s := txnSender{kv: cli.KV}
	if cli.ActiveConnection() == nil || reflect.TypeOf(cli.KV) != reflect.TypeOf(clientv3.NewKV(cli)) {
		return s
	}
	var g optsOf
	// The client's KV passes its call options to the KV client it wraps:
	// a KV on g hands them to g, and sends nothing.
	if _, err := clientv3.NewKVFromKVClient(&g, cli).Txn(context.Background()).Commit(); err != nil || !g.called {
		return s
	}
	s.kvc, s.opts = clientv3.RetryKVClient(cli), g.opts
	return s
}

// optsOf is a KV client that records the call options of a Txn and
// answers it without sending it.
type optsOf struct {
	pb.KVClient // nil: any other call panics
	opts        []grpc.CallOption
	called      bool
}

func (g *optsOf) Txn(_ context.Context, _ *pb.TxnRequest, opts ...grpc.CallOption) (*pb.TxnResponse, error) {
	g.opts, g.called = opts, true
	return &pb.TxnResponse{}, nil
}

// commit sends t.
func (s *txnSender) commit(ctx context.Context, t *writeTxn) (*clientv3.TxnResponse, error) {
	if s.kvc == nil {
		return s.kv.Txn(ctx).If(cmps(t.req.Compare)...).Then(ops(t.req.Success)...).Else(ops(t.req.Failure)...).Commit()
	}
	resp, err := s.kvc.Txn(ctx, &t.req, s.opts...)
	if err != nil {
		return nil, clientv3.ContextError(ctx, err)
	}
	return (*clientv3.TxnResponse)(resp), nil
}

// cmps are a request's conditions for the client's builder.
func cmps(cs []*pb.Compare) []clientv3.Cmp {
	out := make([]clientv3.Cmp, len(cs))
	for i, c := range cs {
		out[i] = clientv3.Cmp(*c)
	}
	return out
}

// ops are a request's operations for the client's builder.
func ops(rs []*pb.RequestOp) []clientv3.Op {
	out := make([]clientv3.Op, len(rs))
	for i, r := range rs {
		switch r := r.Request.(type) {
		case *pb.RequestOp_RequestPut:
			out[i] = clientv3.OpPut(string(r.RequestPut.Key), string(r.RequestPut.Value))
		case *pb.RequestOp_RequestDeleteRange:
			out[i] = clientv3.OpDelete(string(r.RequestDeleteRange.Key))
		case *pb.RequestOp_RequestRange:
			out[i] = clientv3.OpGet(string(r.RequestRange.Key))
		}
	}
	return out
}
