// Package workloads runs the etcd workloads E1 (W1 on etcd) and E3 (W3 on
// etcd) against the COSI runtime v1.16.2 on github.com/cosi-project/state-etcd.
//
// E1 mirrors ../../resgraphetcd/workloads.E1 line for line (only the state
// constructor and the library's imports differ); E3 is the W3 program of
// ../../cosi/workloads (ChainOn) on the etcd state.
package workloads

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosi-project/runtime/pkg/resource/protobuf"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/cosi-project/runtime/pkg/state/impl/store"
	"github.com/cosi-project/state-etcd/pkg/state/impl/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/bench/common/measure"
	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/cosi/res"
	cosiworkloads "github.com/resgraph/resgraph/bench/cosi/workloads"
)

func init() {
	// COSI's protobuf marshaler decodes by type: register A..E as dynamic
	// (protoenc-encoded) specs.
	for _, err := range []error{
		protobuf.RegisterDynamic[params.Spec](params.AType, &res.A{}),
		protobuf.RegisterDynamic[params.Spec](params.BType, &res.B{}),
		protobuf.RegisterDynamic[params.Spec](params.CType, &res.C{}),
		protobuf.RegisterDynamic[params.Spec](params.DType, &res.D{}),
		protobuf.RegisterDynamic[params.Spec](params.EType, &res.E{}),
	} {
		if err != nil {
			panic(err)
		}
	}
}

var marshaler = store.ProtobufMarshaler{}

// newState returns COSI's etcd state the way its own tests build it:
// state.WrapCore(etcd.NewState(cli, store.ProtobufMarshaler{}, ...)).
func newState(o runner.Options, r *runner.Report) (state.State, *clientv3.Client, error) { //nolint:ireturn
	if o.HistCap != 0 {
		return nil, nil, fmt.Errorf("-histcap is an in-memory option")
	}

	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{o.Etcd},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, nil, err
	}

	r.Note("state", "state.WrapCore(etcd.NewState(cli, store.ProtobufMarshaler{}, etcd.WithKeyPrefix(\""+params.EtcdPrefix+"\")))")

	return state.WrapCore(etcd.NewState(cli, marshaler, etcd.WithKeyPrefix(params.EtcdPrefix))), cli, nil
}

// E1: W1 on etcd — create N resources, then update each once, with K
// kind-watchers; also the delay from each write's return to its receipt.
func E1(ctx context.Context, p params.W1Params, o runner.Options, r *runner.Report) error {
	objs := make([]*res.A, p.N)
	for i := range objs {
		objs[i] = res.NewA(i, 0)
	}

	st, cli, err := newState(o, r)
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

	// state-etcd starts its etcd watch asynchronously: with the bootstrap
	// bookmark it watches from the revision read in WatchKind, so no write
	// made after WatchKind returned is missed (the bookmark is a Noop event).
	r.Note("watch", "WatchKind(..., state.WithBootstrapBookmark(true))")

	for w := range p.Watchers {
		ch := make(chan state.Event, p.ChanBuf)

		if err := st.WatchKind(ctx, kind, ch, state.WithBootstrapBookmark(true)); err != nil {
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

// valueBytes is the mean size of the value state-etcd stores for each
// resource in its final state (untimed, after the measurement).
func valueBytes(objs []*res.A) float64 {
	total := 0

	for _, obj := range objs {
		b, err := marshaler.MarshalResource(obj)
		if err != nil {
			return 0
		}

		total += len(b)
	}

	return float64(total) / float64(max(1, len(objs)))
}

// E3: W3 (the transform chain A->B->C->D->E) on etcd.
func E3(ctx context.Context, p params.ChainParams, o runner.Options, r *runner.Report) error {
	st, cli, err := newState(o, r)
	if err != nil {
		return err
	}
	defer cli.Close() //nolint:errcheck

	return cosiworkloads.ChainOn(ctx, st, p, r)
}
