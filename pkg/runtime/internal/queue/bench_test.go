package queue

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"

	"github.com/resgraph/resgraph/pkg/internal/retry"
)

// workQueue is what the benchmarks drive: the queue, or the naive reference.
type workQueue[K comparable] interface {
	Add(K)
	AddBatch([]K)
	Get(context.Context) (K, bool)
	Done(K, Result) time.Duration
	ShutDown()
}

// naiveQueue is the floor the queue is measured against: a mutex, a
// sync.Cond, a slice FIFO and two sets (dedup and in-flight exclusivity), no
// backoff, no delays, no context.
type naiveQueue[K comparable] struct {
	mu       sync.Mutex
	cond     sync.Cond
	fifo     []K
	waiting  map[K]bool
	inFlight map[K]bool
	shutdown bool
}

func newNaive[K comparable]() *naiveQueue[K] {
	q := &naiveQueue[K]{waiting: map[K]bool{}, inFlight: map[K]bool{}}
	q.cond.L = &q.mu
	return q
}

func (q *naiveQueue[K]) add(k K) {
	if q.waiting[k] {
		return
	}
	q.waiting[k] = true
	if !q.inFlight[k] {
		q.fifo = append(q.fifo, k)
		q.cond.Signal()
	}
}

func (q *naiveQueue[K]) Add(k K) { q.mu.Lock(); q.add(k); q.mu.Unlock() }

func (q *naiveQueue[K]) AddBatch(ks []K) {
	q.mu.Lock()
	for _, k := range ks {
		q.add(k)
	}
	q.mu.Unlock()
}

func (q *naiveQueue[K]) Get(context.Context) (K, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.fifo) == 0 && !q.shutdown {
		q.cond.Wait()
	}
	if q.shutdown {
		var zero K
		return zero, false
	}
	k := q.fifo[0]
	q.fifo = q.fifo[1:]
	delete(q.waiting, k)
	q.inFlight[k] = true
	return k, true
}

func (q *naiveQueue[K]) Done(k K, _ Result) time.Duration {
	q.mu.Lock()
	delete(q.inFlight, k)
	if q.waiting[k] {
		q.fifo = append(q.fifo, k)
		q.cond.Signal()
	}
	q.mu.Unlock()
	return 0
}

func (q *naiveQueue[K]) ShutDown() {
	q.mu.Lock()
	q.shutdown = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// pointers returns n distinct resource pointers.
func pointers(n int) []resource.Pointer {
	ps := make([]resource.Pointer, n)
	for i := range ps {
		ps[i] = resource.NewPointer("default", "Links.net.resgraph.dev", "link-"+strconv.Itoa(i))
	}
	return ps
}

// drain runs workers that Get and Done (Success) until n keys were done,
// then shuts q down and returns after every worker exited.
func drain(q workQueue[resource.Pointer], workers, n int) {
	var done atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k, ok := q.Get(context.Background())
				if !ok {
					return
				}
				q.Done(k, Success())
				if done.Add(1) == int64(n) {
					q.ShutDown()
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkQueue measures add/get/done throughput, beside the naive
// reference (impl=naive) as the floor:
//
//   - fill: AddBatch of 1M pointers, then 8 workers drain them;
//   - stream: one producer Adds 1M pointers one by one while 8 workers drain;
//   - single: one goroutine doing Add, Get, Done per op over 1024 pointers.
func BenchmarkQueue(b *testing.B) {
	const items, workers = 1_000_000, 8
	keys := pointers(items)
	impls := []struct {
		name string
		new  func() workQueue[resource.Pointer]
	}{
		{"queue", func() workQueue[resource.Pointer] { return New[resource.Pointer, none](retry.Policy{}) }},
		{"naive", func() workQueue[resource.Pointer] { return newNaive[resource.Pointer]() }},
	}
	for _, impl := range impls {
		b.Run("fill/items=1M/workers=8/impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := impl.new()
				q.AddBatch(keys)
				drain(q, workers, items)
			}
			b.ReportMetric(float64(items)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
		b.Run("stream/items=1M/workers=8/impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := impl.new()
				var wg sync.WaitGroup
				wg.Go(func() {
					for _, k := range keys {
						q.Add(k)
					}
				})
				drain(q, workers, items)
				wg.Wait()
			}
			b.ReportMetric(float64(items)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
		b.Run("single/impl="+impl.name, func(b *testing.B) {
			q := impl.new()
			defer q.ShutDown()
			ks := keys[:1024]
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k := ks[i&1023]
				i++
				q.Add(k)
				got, _ := q.Get(ctx)
				q.Done(got, Success())
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
	}
}

// itemKey is a key like the Runtime's QController items: a pointer (here an
// int) and whether the item maps it (MapInput) or reconciles it.
type itemKey struct {
	id     int32
	mapped bool
}

// flip is the Runtime's partner relation: the reconcile and map items of one
// pointer.
func flip(k itemKey) (itemKey, bool) {
	k.mapped = !k.mapped
	return k, true
}

// BenchmarkQueuePartner measures the cost of partners (NewWithPartner) as
// the Runtime uses them, fill and drain with 8 workers, against the same
// queue without partners (partner=none):
//
//   - reconcile: 1M reconcile items, none with its map item queued (only
//     the partner checks cost);
//   - pairs: 500k pointers with both items queued next to each other, so
//     that half of them wait for their partner.
func BenchmarkQueuePartner(b *testing.B) {
	const items, workers = 1_000_000, 8
	reconcile := make([]itemKey, items)
	pairs := make([]itemKey, items)
	for i := range items {
		reconcile[i] = itemKey{id: int32(i)}
		pairs[i] = itemKey{id: int32(i / 2), mapped: i%2 == 1}
	}
	for _, load := range []struct {
		name string
		keys []itemKey
	}{{"reconcile", reconcile}, {"pairs", pairs}} {
		for _, partner := range []struct {
			name string
			fn   Partner[itemKey]
		}{{"none", nil}, {"flip", flip}} {
			b.Run("load="+load.name+"/partner="+partner.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					q := NewWithPartner[itemKey, none](retry.Policy{}, partner.fn)
					q.AddBatch(load.keys)
					var done atomic.Int64
					var wg sync.WaitGroup
					for range workers {
						wg.Go(func() {
							for {
								k, ok := q.Get(context.Background())
								if !ok {
									return
								}
								q.Done(k, Success())
								if done.Add(1) == items {
									q.ShutDown()
								}
							}
						})
					}
					wg.Wait()
				}
				b.ReportMetric(float64(items)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
			})
		}
	}
}
