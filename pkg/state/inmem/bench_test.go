package inmem

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// The benchmarks implement the workloads of bench/README.md on this state and,
// where the workload says so, on the floor (floor_test.go). Resources: one
// namespace, the pair type (spec: two ints, B holding the resource's index),
// no labels. Watchers read channels of benchWatchBuffer events.

const benchWatchBuffer = 1024

func benchPair(i, a int) *pair {
	r := newPair(fmt.Sprintf("res-%06d", i), a)
	r.TypedSpec().B = i
	return r
}

// benchStore is what W1, W5 and W6 need of a store.
type benchStore interface {
	create(*pair) error
	update(*pair) error
	get(resource.Pointer) (resource.Resource, error)
	list() ([]resource.Resource, error)
}

type realStore struct{ st state.State }

func (s realStore) create(r *pair) error { return s.st.Create(context.Background(), r) }
func (s realStore) update(r *pair) error { return s.st.Update(context.Background(), r) }
func (s realStore) get(p resource.Pointer) (resource.Resource, error) {
	return s.st.Get(context.Background(), p)
}

func (s realStore) list() ([]resource.Resource, error) {
	l, err := s.st.List(context.Background(), testKind)
	return l.Items, err
}

// readOnlyStore reads with WithReadOnlyGet and WithReadOnlyList: the
// shared snapshots, no copies (S7).
type readOnlyStore struct{ realStore }

func (s readOnlyStore) get(p resource.Pointer) (resource.Resource, error) {
	return s.st.Get(context.Background(), p, state.WithReadOnlyGet())
}

func (s readOnlyStore) list() ([]resource.Resource, error) {
	l, err := s.st.List(context.Background(), testKind, state.WithReadOnlyList())
	return l.Items, err
}

type floorStore struct{ f *floorState }

func (s floorStore) create(r *pair) error                              { return s.f.Create(r) }
func (s floorStore) update(r *pair) error                              { return s.f.Update(r) }
func (s floorStore) get(p resource.Pointer) (resource.Resource, error) { return s.f.Get(p) }
func (s floorStore) list() ([]resource.Resource, error)                { return s.f.List(), nil }

// memCounter measures allocations over the timed parts of a benchmark.
type memCounter struct {
	mallocs, bytes uint64
	start          runtime.MemStats
}

func (m *memCounter) begin() { runtime.ReadMemStats(&m.start) }

func (m *memCounter) end() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.mallocs += ms.Mallocs - m.start.Mallocs
	m.bytes += ms.TotalAlloc - m.start.TotalAlloc
}

// finalWatcher drains a kind watch and closes done once it has seen every
// one of n resources (by spec B) at version final.
func finalWatcher(ctx context.Context, ch <-chan state.Event, n int, final uint64, done chan<- struct{}) {
	seen := make([]uint64, n)
	reached := 0
	for {
		ev, ok := receive(ctx, ch)
		if !ok {
			return
		}
		if ev.Type != state.Created && ev.Type != state.Updated {
			continue
		}
		i := ev.Resource.(*pair).TypedSpec().B
		v := version(ev.Resource)
		if v == final && seen[i] != final {
			if reached++; reached == n {
				close(done)
			}
		}
		seen[i] = v
	}
}

// receive receives an event the way an efficient consumer does: without
// locking the context's channel (shared by every watch) when one is ready.
func receive(ctx context.Context, ch <-chan state.Event) (state.Event, bool) {
	select {
	case ev := <-ch:
		return ev, true
	default:
	}
	select {
	case ev := <-ch:
		return ev, true
	case <-ctx.Done():
		return state.Event{}, false
	}
}

// BenchmarkW1_CreateUpdate is W1: create 10k resources, then update each
// once, with 0 and 8 kind watchers draining their channels. One iteration
// is the whole workload on a fresh state; ops/s counts the 20k writes over
// the time until every watcher has seen every final version.
func BenchmarkW1_CreateUpdate(b *testing.B) {
	for _, watchers := range []int{0, 8} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			benchW1(b, func() benchStore { return realStore{newBenchState()} }, watchers)
		})
	}
}

// newBenchState returns the state the benchmarks measure: without the
// mutation detector, which is on by default in test binaries (see
// BenchmarkMutationDetector for its cost).
func newBenchState(opts ...Option) state.State {
	return NewState(append(opts, withoutMutationDetector())...)
}

// BenchmarkMutationDetector is the detector's cost on W1 without watchers
// (creates and updates) and on a spec with slices and maps, and the
// production guard's (W1/guard).
func BenchmarkMutationDetector(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("W1/detector=%t", on), func(b *testing.B) {
			benchW1(b, func() benchStore {
				if on {
					return realStore{NewState(WithMutationDetector(nil))}
				}
				return realStore{newBenchState()}
			}, 0)
		})
	}
	b.Run("W1/guard", func(b *testing.B) {
		benchW1(b, func() benchStore { return realStore{NewState(WithMutationGuard())} }, 0)
	})
}

// BenchmarkW1_Floor is W1 on the floor (no watchers: it has none).
func BenchmarkW1_Floor(b *testing.B) {
	benchW1(b, func() benchStore { return floorStore{newFloorState()} }, 0)
}

func benchW1(b *testing.B, newStore func() benchStore, watchers int) {
	const n = 10_000
	b.ReportAllocs()
	var (
		mem              memCounter
		total, writeTime time.Duration
		iterations       int
	)
	for b.Loop() {
		b.StopTimer()
		st := newStore()
		rs := make([]*pair, n)
		for i := range rs {
			rs[i] = benchPair(i, 0)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		dones := make([]chan struct{}, watchers)
		for w := range watchers {
			ch := make(chan state.Event, benchWatchBuffer)
			if err := st.(realStore).st.WatchKind(ctx, testKind, ch); err != nil {
				b.Fatal(err)
			}
			dones[w] = make(chan struct{})
			wg.Go(func() { finalWatcher(ctx, ch, n, 2, dones[w]) })
		}
		mem.begin()
		b.StartTimer()

		start := time.Now()
		for _, r := range rs {
			if err := st.create(r); err != nil {
				b.Fatal(err)
			}
		}
		for _, r := range rs {
			r.TypedSpec().A = 1
			if err := st.update(r); err != nil {
				b.Fatal(err)
			}
		}
		writeTime += time.Since(start)
		for _, done := range dones {
			<-done
		}
		total += time.Since(start)

		b.StopTimer()
		mem.end()
		iterations++
		cancel()
		wg.Wait()
		b.StartTimer()
	}
	ops := float64(2 * n * iterations)
	b.ReportMetric(ops/total.Seconds(), "ops/s")
	b.ReportMetric(ops/writeTime.Seconds(), "writer-ops/s")
	b.ReportMetric(float64(mem.mallocs)/ops, "allocs/stateop")
	b.ReportMetric(float64(mem.bytes)/ops, "B/stateop")
}

// latencyHist is a histogram of delays in microseconds (the last bucket
// collects everything beyond).
type latencyHist [20_001]uint64

func (h *latencyHist) add(d time.Duration) {
	us := max(int(d/time.Microsecond), 0)
	h[min(us, len(h)-1)]++
}

func (h *latencyHist) merge(o *latencyHist) {
	for i := range h {
		h[i] += o[i]
	}
}

func (h *latencyHist) percentile(p float64) float64 {
	var total uint64
	for _, c := range h {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := uint64(p * float64(total))
	var acc uint64
	for i, c := range h {
		acc += c
		if acc > rank {
			return float64(i)
		}
	}
	return float64(len(h) - 1)
}

// w2Stamps records when each Update of W2 returned, by update number.
type w2Stamps struct {
	at  [1 << 17]atomic.Int64
	num [1 << 17]atomic.Int64
}

func (s *w2Stamps) set(i int, t time.Time) {
	s.at[i&(len(s.at)-1)].Store(t.UnixNano())
	s.num[i&(len(s.num)-1)].Store(int64(i))
}

// since returns the delay since update i returned (0 if it has not yet).
func (s *w2Stamps) since(i int, now time.Time) time.Duration {
	if s.num[i&(len(s.num)-1)].Load() != int64(i) {
		return 0
	}
	return now.Sub(time.Unix(0, s.at[i&(len(s.at)-1)].Load()))
}

// BenchmarkW2_Fanout64 is W2: one writer updating 1000 resources of one
// kind round-robin, 64 kind watchers. Paced: p50/p99 delay from Update
// returning to the event's receipt. Unpaced: the writer's updates/s, and
// the number of watchers cut off (an error event, or not ending at the
// final state), which must be 0.
func BenchmarkW2_Fanout64(b *testing.B) {
	for _, rate := range []int{2000, 10_000, 0} {
		name := fmt.Sprintf("paced=%d", rate)
		if rate == 0 {
			name = "unpaced"
		}
		b.Run(name, func(b *testing.B) { benchW2(b, rate) })
	}
}

func benchW2(b *testing.B, rate int) {
	const (
		n        = 1000
		watchers = 64
	)
	b.ReportAllocs()
	st := newBenchState()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs := make([]*pair, n)
	for i := range rs {
		rs[i] = benchPair(i, 0)
		if err := st.Create(ctx, rs[i]); err != nil {
			b.Fatal(err)
		}
	}
	stamps := new(w2Stamps)
	hists := make([]*latencyHist, watchers)
	seen := make([][]atomic.Int64, watchers) // A last seen, by resource
	var errored atomic.Int64
	var wg sync.WaitGroup
	for w := range watchers {
		hists[w] = new(latencyHist)
		seen[w] = make([]atomic.Int64, n)
		ch := make(chan state.Event, benchWatchBuffer)
		if err := st.WatchKind(ctx, testKind, ch); err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			for {
				ev, ok := receive(ctx, ch)
				if !ok {
					return
				}
				switch ev.Type {
				case state.Updated:
					spec := ev.Resource.(*pair).TypedSpec()
					if rate > 0 {
						hists[w].add(stamps.since(spec.A, time.Now()))
					}
					seen[w][spec.B].Store(int64(spec.A))
				case state.Errored:
					errored.Add(1)
				}
			}
		})
	}

	var interval time.Duration
	if rate > 0 {
		interval = time.Second / time.Duration(rate)
	}
	update := 0
	start := time.Now()
	next := start
	for b.Loop() {
		if interval > 0 {
			next = next.Add(interval)
			if now := time.Now(); now.Sub(next) > time.Millisecond {
				next = now // fell behind: do not burst to catch up
			}
			pace(next)
		}
		update++
		r := rs[update%n]
		r.TypedSpec().A = update
		if err := st.Update(ctx, r); err != nil {
			b.Fatal(err)
		}
		if interval > 0 {
			stamps.set(update, time.Now())
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()

	// Every watcher must end at the final state: none was cut off.
	deadline := time.Now().Add(time.Minute)
	cutOff := 0
	for w := range watchers {
		for i, r := range rs {
			for seen[w][i].Load() != int64(r.TypedSpec().A) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if seen[w][i].Load() != int64(r.TypedSpec().A) {
				cutOff++
				break
			}
		}
	}
	cancel()
	wg.Wait()
	cutOff += int(errored.Load())

	if rate > 0 {
		var all latencyHist
		for _, h := range hists {
			all.merge(h)
		}
		b.ReportMetric(all.percentile(0.50), "p50-µs")
		b.ReportMetric(all.percentile(0.99), "p99-µs")
	} else {
		b.ReportMetric(float64(update)/elapsed.Seconds(), "updates/s")
	}
	b.ReportMetric(float64(cutOff), "cut-off")
}

// pace waits until t. Go's timers wake an idle process about a
// millisecond late on this machine type, too coarse for 100µs steps, and
// spinning on runtime.Gosched disturbs the scheduler (the spinner goes
// through the global run queue at every turn and starves goroutines for
// milliseconds): so the writer sleeps in the kernel, whose timers are
// fine-grained. A goroutine in a system call keeps its P for a while, so
// it first lets the goroutines its last write made runnable on that P run.
func pace(t time.Time) {
	runtime.Gosched()
	if d := time.Until(t); d > 0 {
		ts := syscall.NsecToTimespec(int64(d))
		_ = syscall.Nanosleep(&ts, nil)
	}
}

// w5Setup fills a store with 100k resources.
func w5Setup(b *testing.B, st benchStore) []resource.Pointer {
	const n = 100_000
	ptrs := make([]resource.Pointer, n)
	for i := range n {
		r := benchPair(i, i)
		if err := st.create(r); err != nil {
			b.Fatal(err)
		}
		ptrs[i] = ptr(r.Metadata().ID())
	}
	return ptrs
}

// BenchmarkW5_List100k is W5's full List of 100k resources, on this
// state and on the floor.
func BenchmarkW5_List100k(b *testing.B) {
	for _, impl := range []struct {
		name string
		new  func() benchStore
	}{
		{"inmem", func() benchStore { return realStore{newBenchState()} }},
		{"inmem-readonly", func() benchStore { return readOnlyStore{realStore{newBenchState()}} }},
		{"floor", func() benchStore { return floorStore{newFloorState()} }},
	} {
		b.Run(impl.name, func(b *testing.B) {
			st := impl.new()
			w5Setup(b, st)
			b.ReportAllocs()
			for b.Loop() {
				items, err := st.list()
				if err != nil || len(items) != 100_000 {
					b.Fatal(len(items), err)
				}
			}
		})
	}
}

// BenchmarkW5_Get is W5's random Get among 100k resources, on this state
// and on the floor.
func BenchmarkW5_Get(b *testing.B) {
	for _, impl := range []struct {
		name string
		new  func() benchStore
	}{
		{"inmem", func() benchStore { return realStore{newBenchState()} }},
		{"inmem-readonly", func() benchStore { return readOnlyStore{realStore{newBenchState()}} }},
		{"floor", func() benchStore { return floorStore{newFloorState()} }},
	} {
		b.Run(impl.name, func(b *testing.B) {
			st := impl.new()
			ptrs := w5Setup(b, st)
			rng := rand.New(rand.NewPCG(5, 5))
			order := make([]resource.Pointer, 1<<14)
			for i := range order {
				order[i] = ptrs[rng.IntN(len(ptrs))]
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := st.get(order[i&(len(order)-1)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkW6_HeapPerResource is W6: heap bytes per stored resource after
// GC, for 100k resources, on this state and on the floor. The resources
// are built inside the measurement and only the store keeps them.
func BenchmarkW6_HeapPerResource(b *testing.B) {
	for _, impl := range []struct {
		name string
		new  func() benchStore
	}{
		{"inmem", func() benchStore { return realStore{newBenchState()} }},
		{"floor", func() benchStore { return floorStore{newFloorState()} }},
	} {
		b.Run(impl.name, func(b *testing.B) {
			const n = 100_000
			var perResource []float64
			for b.Loop() {
				before := heapAlloc()
				st := impl.new()
				for i := range n {
					if err := st.create(benchPair(i, i)); err != nil {
						b.Fatal(err)
					}
				}
				after := heapAlloc()
				runtime.KeepAlive(st)
				perResource = append(perResource, float64(after-before)/n)
			}
			slices.Sort(perResource)
			b.ReportMetric(perResource[len(perResource)/2], "heapB/resource")
		})
	}
}

// BenchmarkParallelKinds runs 8 writers updating their own resources, all
// in one kind or each in its own kind (of 8): writers of different kinds
// do not share a lock.
func BenchmarkParallelKinds(b *testing.B) {
	for _, kinds := range []int{1, 8} {
		b.Run(fmt.Sprintf("kinds=%d", kinds), func(b *testing.B) {
			const writers, perWriter = 8, 100
			st := newBenchState()
			ctx := context.Background()
			rs := make([][]*pair, writers)
			for w := range writers {
				typ := fmt.Sprintf("Kind%d.test.resgraph.dev", w%kinds)
				for i := range perWriter {
					r := typedNewPair(testNS, typ, fmt.Sprintf("w%d-%d", w, i))
					if err := st.Create(ctx, r); err != nil {
						b.Fatal(err)
					}
					rs[w] = append(rs[w], r)
				}
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(writers / runtime.GOMAXPROCS(0))
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				mine := rs[int(next.Add(1)-1)%writers]
				i := 0
				for pb.Next() {
					r := mine[i%len(mine)]
					r.TypedSpec().A++
					if err := st.Update(ctx, r); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
		})
	}
}

// BenchmarkKindLookup is the cost of finding a kind's store, which every
// operation does, through the map of kinds (hashing both strings), with 1
// and 8 kinds of realistic names.
func BenchmarkKindLookup(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("kinds=%d", n), func(b *testing.B) {
			c := newCore()
			var kinds []resource.KindKey
			for i := range n {
				k := resource.KindOf(resource.NewKind("network", fmt.Sprintf("LinkStatuses%d.net.resgraph.dev", i)))
				c.store(k)
				kinds = append(kinds, k)
			}
			i := 0
			for b.Loop() {
				k := kinds[i%n]
				if c.lookup(k) == nil {
					b.Fatal("no store")
				}
				i++
			}
		})
	}
}

// BenchmarkClock is the cost of a write's timestamp: the clock's reading
// (the monotonic clock added to a wall-clock reading kept for a second)
// against time.Now.
func BenchmarkClock(b *testing.B) {
	c := newClock()
	var sink int64
	b.Run("clock", func(b *testing.B) {
		for b.Loop() {
			_, at := c.now()
			sink += at
		}
	})
	b.Run("time.Now", func(b *testing.B) {
		for b.Loop() {
			sink += time.Now().UnixNano()
		}
	})
	runtime.KeepAlive(sink)
}

// BenchmarkListAfterWrites is a read-only List of 100k resources after
// k writes since the previous List, as a controller of a chain lists its
// inputs after the writes of the controller before it: k updates of
// random resources, or k creates of IDs after the others (created in
// order).
func BenchmarkListAfterWrites(b *testing.B) {
	ctx := context.Background()
	for _, write := range []string{"update", "create"} {
		for _, k := range []int{10, 1000} {
			b.Run(fmt.Sprintf("%s/k=%d", write, k), func(b *testing.B) {
				st := newBenchState()
				const n = 100_000
				for i := range n {
					if err := st.Create(ctx, benchPair(i, i)); err != nil {
						b.Fatal(err)
					}
				}
				rng := rand.New(rand.NewPCG(7, 7))
				next := n
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					for range k {
						if write == "create" {
							if err := st.Create(ctx, benchPair(next, next)); err != nil {
								b.Fatal(err)
							}
							next++
							continue
						}
						r, err := st.Get(ctx, ptr(benchPair(rng.IntN(n), 0).Metadata().ID()))
						if err != nil {
							b.Fatal(err)
						}
						r.(*pair).TypedSpec().B++
						if err := st.Update(ctx, r); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
					if _, err := st.List(ctx, testKind, state.WithReadOnlyList()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
