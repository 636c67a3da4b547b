// Package workloads runs the etcd workloads E1 (W1 on etcd) and E3 (W3 on
// etcd) against resgraph on its pkg/state/etcd.
//
// E1 mirrors ../../cosietcd/workloads.E1 line for line (only the state
// constructor and the library's imports differ); E3 is the W3 program of
// ../../resgraph/workloads (ChainOn) on the etcd state.
package workloads

import (
	"context"
	"errors"
	"time"

	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/resgraph/res"
	rgworkloads "github.com/resgraph/resgraph/bench/resgraph/workloads"
)

// registry knows A..E with the default (JSON) spec encoding.
var registry = res.Registry()

// newState returns resgraph's etcd state with default options (besides the
// key prefix and a silent logger).
func newState(ctx context.Context, o runner.Options, r *runner.Report) (state.State, *clientv3.Client, error) { //nolint:ireturn
	if o.HistCap != 0 {
		return nil, nil, errors.New("-histcap is COSI's in-memory option")
	}

	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{o.Etcd},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, nil, err
	}

	r.Note("state", "etcd.New(ctx, cli, codec registry (JSON specs), etcd.WithPrefix(\""+params.EtcdPrefix+"/\"), etcd.WithLogger(zap.NewNop())), default options")

	st, err := etcd.New(ctx, cli, registry, etcd.WithPrefix(params.EtcdPrefix+"/"), etcd.WithLogger(zap.NewNop()))
	if err != nil {
		cli.Close() //nolint:errcheck

		return nil, nil, err
	}

	return st, cli, nil
}

// E1: W1 on etcd — create N resources, then update each once, with K
// kind-watchers; also the delay from each write's return to its receipt.
func E1(ctx context.Context, p params.W1Params, o runner.Options, r *runner.Report) error {
	st, cli, err := newState(ctx, o, r)
	if err != nil {
		return err
	}
	defer cli.Close() //nolint:errcheck

	watchers := make([]state.State, p.Watchers)
	for i := range watchers {
		watchers[i] = st
	}

	out, delays, err := rgworkloads.W1DelaysOn(ctx, st, watchers, p)
	if err != nil {
		return err
	}

	runner.ReportE1(r, p, out, delays, valueBytes(p.N))

	return nil
}

// valueBytes is the mean size of the value resgraph's etcd state stores for
// each of the n resources in its final state (untimed, after the
// measurement).
func valueBytes(n int) float64 {
	total := 0

	for i := range n {
		b, err := registry.Encode(res.NewA(i, 1))
		if err != nil {
			return 0
		}

		total += len(b)
	}

	return float64(total) / float64(max(1, n))
}

// E3: W3 (the transform chain A->B->C->D->E) on etcd.
func E3(ctx context.Context, p params.ChainParams, o runner.Options, r *runner.Report) error {
	st, cli, err := newState(ctx, o, r)
	if err != nil {
		return err
	}
	defer cli.Close() //nolint:errcheck

	return rgworkloads.ChainOn(ctx, st, p, r)
}
