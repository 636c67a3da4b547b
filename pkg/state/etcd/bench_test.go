package etcd_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
	rgruntime "github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// The benchmarks implement workloads W1, W3 and W5 of bench/README.md on
// the etcd state, on the test server (one etcd member on loopback, data in
// /dev/shm when available), beside the in-memory state for W1 and W5. The
// resources are the chain's A (one namespace, a spec of two ints, no
// labels). Run them one at a time (each iteration is a whole workload):
//
//	cd pkg/state/etcd && RESGRAPH_MUTATION_DETECTOR=0 go test -run '^$' -bench 'W1|W5|W3' -benchtime 1x
//
// (the mutation detector, on by default in test binaries, would slow the
// in-memory state down).

// benchBackends are the states W1 and W5 compare; new returns a fresh
// state and, for etcd, its key prefix.
var benchBackends = []struct {
	name string
	new  func(tb testing.TB) (state.State, string)
}{
	{"etcd", func(tb testing.TB) (state.State, string) {
		prefix := newPrefix()
		st, err := etcd.New(context.Background(), client, registry(), etcd.WithPrefix(prefix))
		if err != nil {
			tb.Fatal(err)
		}
		return st, prefix
	}},
	{"inmem", func(testing.TB) (state.State, string) { return inmem.NewState(), "" }},
}

// BenchmarkW1 is W1: create 10k resources, then update each once, with 0
// and 8 kind watchers draining their channels. One iteration is the whole
// workload on a fresh state; ops/s counts the 20k writes over the time
// until every watcher has seen every final version.
func BenchmarkW1(b *testing.B) {
	for _, be := range benchBackends {
		for _, watchers := range []int{0, 8} {
			b.Run(fmt.Sprintf("%s/watchers=%d", be.name, watchers), func(b *testing.B) { benchW1(b, be.new, watchers, nil) })
		}
	}
}

// benchW1 runs W1; fence, when set, returns the context of the writes on
// a state at a prefix (BenchmarkW1Fence).
func benchW1(b *testing.B, newState func(testing.TB) (state.State, string), watchers int, fence func(b *testing.B, prefix string) context.Context) {
	const n = 10_000
	ctx := context.Background()
	kind := chainKinds[0]
	var total, writeTime time.Duration
	var mallocs, iterations uint64
	for b.Loop() {
		b.StopTimer()
		st, prefix := newState(b)
		if fence != nil {
			ctx = fence(b, prefix)
		}
		wctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		dones := make([]chan struct{}, watchers)
		for w := range dones {
			ch := make(chan state.Event, 1024)
			if err := st.WatchKind(wctx, kind, ch); err != nil {
				b.Fatal(err)
			}
			dones[w] = make(chan struct{})
			wg.Go(func() { awaitVersions(wctx, ch, n, 2, dones[w]) })
		}
		rs := make([]*chainA, n)
		for i := range rs {
			rs[i] = newChainA(fmt.Sprintf("r%05d", i), i)
		}
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()

		start := time.Now()
		for _, r := range rs {
			if err := st.Create(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
		for _, r := range rs {
			r.TypedSpec().M = 1
			if err := st.Update(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
		writeTime += time.Since(start)
		for _, done := range dones {
			<-done
		}
		total += time.Since(start)

		b.StopTimer()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		mallocs += after.Mallocs - before.Mallocs
		iterations++
		cancel()
		wg.Wait()
		b.StartTimer()
	}
	ops := float64(2 * n * iterations)
	b.ReportMetric(ops/total.Seconds(), "ops/s")
	b.ReportMetric(ops/writeTime.Seconds(), "writer-ops/s")
	b.ReportMetric(float64(mallocs)/ops, "allocs/stateop")
}

// awaitVersions drains a kind watch and closes done once it has seen each
// of n resources at version final.
func awaitVersions(ctx context.Context, ch <-chan state.Event, n int, final uint64, done chan<- struct{}) {
	seen := map[resource.ID]bool{}
	for {
		select {
		case ev := <-ch:
			if ev.Resource == nil || ev.Type == state.Destroyed {
				continue
			}
			md := ev.Resource.Metadata()
			if md.Version().Value() == final && !seen[md.ID()] {
				if seen[md.ID()] = true; len(seen) == n {
					close(done)
				}
			}
		case <-ctx.Done():
			return
		}
	}
}

// BenchmarkW5 is W5: 100k resources in a kind; one full List, and a Get
// of a random one.
func BenchmarkW5(b *testing.B) {
	const n = 100_000
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			st, prefix := be.new(b)
			ptrs := w5Setup(b, st, prefix, n)
			b.Run("List", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					l, err := st.List(context.Background(), chainKinds[0])
					if err != nil || len(l.Items) != n {
						b.Fatal(len(l.Items), err)
					}
				}
			})
			b.Run("Get", func(b *testing.B) {
				rng := rand.New(rand.NewPCG(5, 5))
				order := make([]resource.Pointer, 1<<14)
				for i := range order {
					order[i] = ptrs[rng.IntN(len(ptrs))]
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := st.Get(context.Background(), order[i&(len(order)-1)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}

// w5Setup stores n resources: through the state for inmem; for etcd,
// encoded and put directly in transactions of a hundred (creating 100k
// resources one by one through etcd would take minutes and is W1's
// business), with the kind's head key.
func w5Setup(b *testing.B, st state.State, prefix string, n int) []resource.Pointer {
	b.Helper()
	ctx := context.Background()
	ptrs := make([]resource.Pointer, n)
	reg := registry()
	kind := chainKinds[0]
	var ops []clientv3.Op
	flush := func() {
		if len(ops) == 0 {
			return
		}
		if _, err := client.Txn(ctx).Then(append(ops, clientv3.OpPut(prefix+kind.Namespace()+"/"+kind.Type()+"/", ""))...).Commit(); err != nil {
			b.Fatal(err)
		}
		ops = ops[:0]
	}
	now := time.Now()
	for i := range n {
		r := newChainA(fmt.Sprintf("r%06d", i), i)
		ptrs[i] = resource.PointerOf(r.Metadata())
		if prefix == "" {
			if err := st.Create(ctx, r); err != nil {
				b.Fatal(err)
			}
			continue
		}
		md := r.Metadata()
		md.SetVersion(resource.VersionUndefined.Next())
		md.SetCreated(now)
		md.SetUpdated(now)
		val, err := reg.Encode(r)
		if err != nil {
			b.Fatal(err)
		}
		ops = append(ops, clientv3.OpPut(prefix+kind.Namespace()+"/"+kind.Type()+"/"+md.ID(), string(val)))
		if len(ops) == 100 {
			flush()
		}
	}
	flush()
	return ptrs
}

// BenchmarkW3 is W3 on etcd at N = 1k: the chain of four transforms
// A→B→C→D→E (no finalizers), N As created, then updated; res/s is N over
// the time from the first write until every E holds its final value. The
// chain runs in one Runtime in this process, or split over two child
// processes (A→B→C and C→D→E), the As written from this process.
func BenchmarkW3(b *testing.B) {
	const n = 1_000
	for _, split := range []bool{false, true} {
		name := "one-process"
		if split {
			name = "two-processes"
		}
		b.Run(fmt.Sprintf("%s/N=%d", name, n), func(b *testing.B) { benchW3(b, n, split, false) })
	}
}

// benchW3 runs W3 b.N times and reports its rates; with lead, the
// one-process Runtime runs under leadership (BenchmarkW3Fence).
func benchW3(b *testing.B, n int, split, lead bool) {
	var create, update time.Duration
	iterations := 0
	for b.Loop() {
		c, u := runW3(b, n, split, lead)
		create += c
		update += u
		iterations++
	}
	b.ReportMetric(float64(n*iterations)/create.Seconds(), "create-res/s")
	b.ReportMetric(float64(n*iterations)/update.Seconds(), "update-res/s")
}

// runW3 runs W3 once on a fresh prefix and returns the create and update
// times; the timer runs only during them. With lead, the one-process
// Runtime leads its election before the timer starts, and every write of
// its controllers is fenced.
func runW3(b *testing.B, n int, split, lead bool) (create, update time.Duration) {
	b.StopTimer()
	defer b.StartTimer() // b.Loop wants it running
	ctx := context.Background()
	prefix := newPrefix()
	st, err := etcd.New(ctx, client, registry(), etcd.WithPrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	var stop func()
	if split {
		p1 := startChild(b, "w3-p1", prefix, false, chainStages[:2]...)
		p2 := startChild(b, "w3-p2", prefix, false, chainStages[2:]...)
		stop = func() { p1.stop(b); p2.stop(b) }
	} else {
		stop = runChainEngine(b, st, prefix, lead)
	}
	defer stop()
	id := func(i int) resource.ID { return fmt.Sprintf("a%05d", i) }

	phase := func(final func(i int) int, write func(i int) error) time.Duration {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ch := make(chan []state.Event, 64)
		if err := st.WatchKindAggregated(wctx, chainKinds[4], ch); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		for i := range n {
			if err := write(i); err != nil {
				b.Fatal(err)
			}
		}
		awaitFinal(b, ch, n, final)
		took := time.Since(start)
		b.StopTimer()
		return took
	}
	create = phase(func(i int) int { return i + 4 }, func(i int) error { return st.Create(ctx, newChainA(id(i), i)) })
	update = phase(func(i int) int { return i + 1_000_004 }, func(i int) error {
		return st.Modify(ctx, newChainA(id(i), 0), func(r resource.Resource) error {
			r.(*chainA).TypedSpec().N = i + 1_000_000
			return nil
		})
	})
	return create, update
}

// runChainEngine runs a Runtime with the whole chain on st in this
// process and returns the function that stops it; with lead, under
// leadership of the Runtime's election at prefix, once it leads.
func runChainEngine(b *testing.B, st state.State, prefix string, lead bool) (stop func()) {
	var opts []rgruntime.Option
	var el *etcd.Elector
	if lead {
		var err error
		el, err = etcd.NewElector(context.Background(), client, etcd.WithElectionPrefix(prefix))
		if err != nil {
			b.Fatal(err)
		}
		opts = append(opts, rgruntime.WithLeadership(el, rgruntime.LeadPerRuntime))
	}
	rt, err := rgruntime.New(st, zap.NewNop(), opts...)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range chainStages {
		c, err := chainStage(s, false)
		if err != nil {
			b.Fatal(err)
		}
		if err := rt.RegisterController(c); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	if lead {
		awaitLeading(b, rt)
	}
	return func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
		if el != nil {
			_ = el.Close()
		}
	}
}

// awaitLeading waits until the Runtime leads every controller (a poll of
// their statuses, outside the benchmark's timer).
func awaitLeading(b *testing.B, rt *rgruntime.Runtime) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		leading := true
		for _, c := range rt.Observe().Controllers() {
			leading = leading && c.Leadership != nil && c.Leadership.Role == observe.RoleLeader
		}
		if leading {
			return
		}
		time.Sleep(time.Millisecond) // a poll: statuses change with no event to wait for
	}
	b.Fatal("the Runtime did not lead within a minute")
}

// awaitFinal receives E's changes until each of the n Es "a%05d" holds
// final(i).
func awaitFinal(b *testing.B, ch <-chan []state.Event, n int, final func(i int) int) {
	b.Helper()
	done := map[resource.ID]bool{}
	timeout := time.NewTimer(5 * time.Minute)
	defer timeout.Stop()
	for len(done) < n {
		select {
		case batch := <-ch:
			for _, ev := range batch {
				if ev.Resource == nil || ev.Type == state.Destroyed {
					continue
				}
				var i int
				if _, err := fmt.Sscanf(ev.Resource.Metadata().ID(), "a%05d", &i); err != nil {
					b.Fatal(err)
				}
				if chainN(ev.Resource) == final(i) {
					done[ev.Resource.Metadata().ID()] = true
				}
			}
		case <-timeout.C:
			b.Fatalf("W3: %d of %d Es final after 5 minutes", len(done), n)
		}
	}
}
