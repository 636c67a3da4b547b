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
	"sync"
	"sync/atomic"
	"time"

	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/bench/common/measure"
	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/resgraph/res"
	rgworkloads "github.com/resgraph/resgraph/bench/resgraph/workloads"
)

// registry knows A..E with the default (JSON) spec encoding.
var registry = func() *codec.Registry {
	reg := codec.NewRegistry()
	codec.MustRegister[params.Spec, res.ADef](reg)
	codec.MustRegister[params.Spec, res.BDef](reg)
	codec.MustRegister[params.Spec, res.CDef](reg)
	codec.MustRegister[params.Spec, res.DDef](reg)
	codec.MustRegister[params.Spec, res.EDef](reg)

	return reg
}()

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
	objs := make([]*res.A, p.N)
	for i := range objs {
		objs[i] = res.NewA(i, 0)
	}

	st, cli, err := newState(ctx, o, r)
	if err != nil {
		return err
	}
	defer cli.Close() //nolint:errcheck

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		wg     sync.WaitGroup
		cut    atomic.Int64
		out    runner.W1Outcome
		kind   = res.Kind(params.AType)
		delays = measure.NewOpDelays(p.N, p.Watchers)
	)

	for w := range p.Watchers {
		ch := make(chan state.Event, p.ChanBuf)

		if err := st.WatchKind(ctx, kind, ch); err != nil {
			return err
		}

		t := measure.NewFinalTracker(p.N, 1)
		out.Trackers = append(out.Trackers, t)
		sub := delays.Sub(w)

		wg.Go(func() {
			for !t.Done() {
				select {
				case <-ctx.Done():
					return
				case ev := <-ch:
					switch ev.Type { //nolint:exhaustive
					case state.Created, state.Updated:
						s := res.SpecOf(ev.Resource)
						sub.Observe(s.Value, s.Index)
						t.Observe(s)
					case state.Errored:
						cut.Add(1)

						return
					}
				}
			}
		})
	}

	out.Before = measure.Snapshot(true)
	start := time.Now()

	for i, obj := range objs {
		delays.Called(0, i)

		if err := st.Create(ctx, obj); err != nil {
			return err
		}

		delays.Returned(0, i)
	}

	for i, obj := range objs {
		obj.TypedSpec().Value++
		delays.Called(1, i)

		if err := st.Update(ctx, obj); err != nil {
			return err
		}

		delays.Returned(1, i)
	}

	out.Write = time.Since(start)

	done := make(chan struct{})

	go func() { wg.Wait(); close(done) }()

	out.TimedOut = !measure.WaitTimeout(done, p.Timeout)
	out.Drain = time.Since(start)
	out.After = measure.Snapshot(false)

	cancel()
	<-done

	out.Cut = int(cut.Load())
	runner.ReportE1(r, p, out, delays.Stats(), valueBytes(objs))

	return nil
}

// valueBytes is the mean size of the value resgraph's etcd state stores for
// each resource in its final state (untimed, after the measurement).
func valueBytes(objs []*res.A) float64 {
	total := 0

	for _, obj := range objs {
		b, err := registry.Encode(obj)
		if err != nil {
			return 0
		}

		total += len(b)
	}

	return float64(total) / float64(max(1, len(objs)))
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
