package etcd

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// SendsItsOwnTxn reports whether a state on cli sends its writes'
// transactions as requests it built (see txnSender), not through cli.KV.
func SendsItsOwnTxn(cli *clientv3.Client) bool { return newTxnSender(cli).kvc != nil }

// txnSink keeps the requests AllocsOfAWriteTxn builds on the heap.
var txnSink *writeTxn

// AllocsOfAWriteTxn returns the allocations of building the request of
// an unfenced Create, Update and Destroy, each.
func AllocsOfAWriteTxn() []float64 {
	key, head, val := []byte("/p/ns/type/id"), []byte("/p/ns/type/"), []byte("value")
	var out []float64
	for _, op := range []writeOp{opCreate, opUpdate, opDestroy} {
		out = append(out, testing.AllocsPerRun(100, func() { txnSink = newWriteTxn(op, key, head, 7, val, nil) }))
	}
	return out
}
