package etcd

import clientv3 "go.etcd.io/etcd/client/v3"

// SendsItsOwnTxn reports whether a state on cli sends its writes'
// transactions as requests it built (see txnSender), not through cli.KV.
func SendsItsOwnTxn(cli *clientv3.Client) bool { return newTxnSender(cli).kvc != nil }
