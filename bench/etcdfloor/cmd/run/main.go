// Command run is the floor of E1 (W1 on etcd): the least any state on etcd
// can do. It writes the same encoded values a state writes (COSI's protobuf
// encoding of each resource, built before the clock starts) with the raw etcd
// client, one conditional transaction per write and nothing else:
//
//   - Create: Txn(If CreateRevision(key) = 0, Then Put(key, value)) — the
//     existence check every Create needs;
//   - Update: Txn(If ModRevision(key) = rev, Then Put(key, value)), rev from
//     the Create's response — the optimistic-concurrency check every Update
//     needs, without reading the key first.
//
// Its watchers are raw etcd watches of the kind's prefix from the revision
// before the first write; an event's resource index comes from the key and its
// value from the key's version (1: created, 2: updated): nothing is decoded.
//
//	run -workload E1 -watchers 4 -etcd 127.0.0.1:2379
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/cosi-project/runtime/pkg/resource"
	"github.com/cosi-project/runtime/pkg/resource/protobuf"
	"github.com/cosi-project/runtime/pkg/state/impl/store"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/bench/common/measure"
	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/cosi/res"
)

func main() {
	runner.Main(runner.Backend{Name: "floor", E1: E1}, os.Args[1:])
}

// E1 is the floor of W1 on etcd.
func E1(ctx context.Context, p params.W1Params, o runner.Options, r *runner.Report) error {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{o.Etcd},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return err
	}
	defer cli.Close() //nolint:errcheck

	r.Note("floor", "raw clientv3: Create = Txn(If CreateRevision=0, Put), Update = Txn(If ModRevision=rev, Put); values = COSI protobuf encoding, pre-built")

	prefix := params.EtcdPrefix + "/" + params.NS + "/" + params.AType + "/"
	keys, created, updated, err := values(prefix, p.N)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// the revision before the first write: the watches start after it
	get, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return err
	}

	var (
		wg     sync.WaitGroup
		out    runner.W1Outcome
		delays = measure.NewOpDelays(p.N, p.Watchers)
	)

	for w := range p.Watchers {
		wch := cli.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(get.Header.Revision+1))

		t := measure.NewFinalTracker(p.N, 1)
		out.Trackers = append(out.Trackers, t)
		sub := delays.Sub(w)

		wg.Go(func() {
			for resp := range wch {
				for _, ev := range resp.Events {
					k := ev.Kv.Key

					idx, err := strconv.Atoi(string(k[len(k)-6:]))
					if err != nil {
						continue
					}

					v := int(ev.Kv.Version) - 1
					sub.Observe(v, idx)
					t.Observe(params.Spec{Value: v, Index: idx})
				}

				if t.Done() {
					return
				}
			}
		})
	}

	modRev := make([]int64, p.N)

	out.Before = measure.Snapshot(true)
	start := time.Now()

	for i := range p.N {
		delays.Called(0, i)

		resp, err := cli.Txn(ctx).If(
			clientv3.Compare(clientv3.CreateRevision(keys[i]), "=", 0),
		).Then(
			clientv3.OpPut(keys[i], created[i]),
		).Commit()
		if err != nil {
			return err
		}

		if !resp.Succeeded {
			return fmt.Errorf("create %s: exists", keys[i])
		}

		modRev[i] = resp.Header.Revision
		delays.Returned(0, i)
	}

	for i := range p.N {
		delays.Called(1, i)

		resp, err := cli.Txn(ctx).If(
			clientv3.Compare(clientv3.ModRevision(keys[i]), "=", modRev[i]),
		).Then(
			clientv3.OpPut(keys[i], updated[i]),
		).Commit()
		if err != nil {
			return err
		}

		if !resp.Succeeded {
			return fmt.Errorf("update %s: conflict", keys[i])
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

	total := 0
	for _, v := range updated {
		total += len(v)
	}

	runner.ReportE1(r, p, out, delays.Stats(), float64(total)/float64(max(1, p.N)))

	return nil
}

// values builds the keys and the encoded values of the creates and the
// updates: COSI's protobuf encoding of each resource as its etcd state
// writes it (created time set; on update, version 1 and the updated time).
func values(prefix string, n int) (keys, created, updated []string, err error) {
	if err = protobuf.RegisterDynamic[params.Spec](params.AType, &res.A{}); err != nil {
		return nil, nil, nil, err
	}

	m := store.ProtobufMarshaler{}
	now := time.Now()

	v1, err := resource.ParseVersion("1")
	if err != nil {
		return nil, nil, nil, err
	}

	for i := range n {
		a := res.NewA(i, 0)
		a.Metadata().SetCreated(now)

		c, err := m.MarshalResource(a)
		if err != nil {
			return nil, nil, nil, err
		}

		a.TypedSpec().Value = 1
		a.Metadata().SetVersion(v1)
		a.Metadata().SetUpdated(now)

		u, err := m.MarshalResource(a)
		if err != nil {
			return nil, nil, nil, err
		}

		keys = append(keys, prefix+params.ID(i))
		created = append(created, string(c))
		updated = append(updated, string(u))
	}

	return keys, created, updated, nil
}
