module github.com/resgraph/resgraph/bench/cosietcd

go 1.26.2

require (
	github.com/cosi-project/runtime v1.16.2
	github.com/cosi-project/state-etcd v0.0.0
	github.com/resgraph/resgraph/bench v0.0.0-00010101000000-000000000000
	go.etcd.io/etcd/client/v3 v3.6.16
	go.uber.org/zap v1.28.0
)

// The established runtime's etcd state (github.com/cosi-project/state-etcd)
// is not served by the module proxy: this module is outside go.work, and
// bench/compare builds it in a temporary copy whose replace points at the
// source tree given with --state-etcd DIR.
replace (
	github.com/cosi-project/state-etcd => ./state-etcd-src
	github.com/resgraph/resgraph => ../..
	github.com/resgraph/resgraph/bench => ..
	github.com/resgraph/resgraph/pkg/state/etcd => ../../pkg/state/etcd
)
