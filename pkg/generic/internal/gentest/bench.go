package gentest

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// ChainLength is the number of controllers of the benchmark chain
// A → B → C → D → E; each adds 1 to the spec.
const ChainLength = 4

// ChainKinds are the kinds of the benchmark chain, A to E.
var ChainKinds = []resource.Kind{Kind[ADef](), Kind[BDef](), Kind[CDef](), Kind[DDef](), Kind[EDef]()}

// ChainResult holds the figures of one run of the chain workload.
type ChainResult struct {
	Create, Update, Destroy time.Duration
	// PeakHeap is the largest live heap sampled during the run, in bytes.
	PeakHeap uint64
	// PeakRSS is the peak resident set size of the process during the run
	// (VmHWM, reset at the start), in bytes; 0 when unavailable.
	PeakRSS uint64
}

// RunChain runs the W3/W4 workload once on a fresh state and engine with
// the controllers of the chain: create n resources A (spec N = i) and wait
// until every E holds N = i+4; update every A and wait again; then remove
// every A (with finalizers: tear down, wait for the chain to let go, and
// destroy) and wait until no E is left.
func RunChain(ctx context.Context, n int, finalizers bool, ctrls ...any) (ChainResult, error) {
	var res ChainResult
	resetPeakRSS()
	stopSampler := sampleHeap(&res.PeakHeap)
	stopped := false
	defer func() {
		if !stopped {
			stopSampler()
		}
	}()

	st := inmem.NewState()
	rt, err := runtime.New(st, zap.NewNop())
	if err != nil {
		return res, err
	}
	for _, c := range ctrls {
		if err := Register(rt, c); err != nil {
			return res, err
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rt.Run(runCtx) }()
	defer func() {
		cancel()
		<-done
	}()

	id := func(i int) resource.ID { return fmt.Sprintf("r%07d", i) }
	ptr := func(i int) resource.Pointer { return Ptr[ADef](id(i)) }

	// Create.
	start := time.Now()
	waitE, err := watchFinal(ctx, st, n, func(i int) int { return i + ChainLength })
	if err != nil {
		return res, err
	}
	for i := range n {
		if err := st.Create(ctx, New[ADef](id(i), i)); err != nil {
			return res, err
		}
	}
	if err := waitE(); err != nil {
		return res, fmt.Errorf("create: %w", err)
	}
	res.Create = time.Since(start)

	// Update.
	const delta = 1_000_000
	start = time.Now()
	waitE, err = watchFinal(ctx, st, n, func(i int) int { return i + delta + ChainLength })
	if err != nil {
		return res, err
	}
	for i := range n {
		cur, err := st.Get(ctx, ptr(i))
		if err != nil {
			return res, err
		}
		a := cur.(*A)
		a.TypedSpec().N = i + delta
		if err := st.Update(ctx, a); err != nil {
			return res, err
		}
	}
	if err := waitE(); err != nil {
		return res, fmt.Errorf("update: %w", err)
	}
	res.Update = time.Since(start)

	// Destroy.
	start = time.Now()
	waitGone, err := watchGone(ctx, st, n)
	if err != nil {
		return res, err
	}
	if finalizers {
		waitReleased, err := watchReleased(ctx, st, n)
		if err != nil {
			return res, err
		}
		for i := range n {
			if _, err := st.Teardown(ctx, ptr(i)); err != nil {
				return res, err
			}
		}
		if err := waitReleased(); err != nil {
			return res, fmt.Errorf("teardown: %w", err)
		}
	}
	for i := range n {
		if err := st.Destroy(ctx, ptr(i)); err != nil {
			return res, err
		}
	}
	if err := waitGone(); err != nil {
		return res, fmt.Errorf("destroy: %w", err)
	}
	res.Destroy = time.Since(start)
	stopSampler()
	stopped = true
	res.PeakRSS = peakRSS()
	return res, nil
}

// chainTimeout bounds each phase of RunChain.
const chainTimeout = 5 * time.Minute

func indexOf(id resource.ID) int {
	i, _ := strconv.Atoi(strings.TrimPrefix(id, "r"))
	return i
}

// watchKind watches E (or A) and calls done on every batch until it
// returns true; the returned function waits for that.
func watchKind(ctx context.Context, st state.State, kind resource.Kind, done func(ev *state.Event) bool) (func() error, error) {
	ctx, cancel := context.WithTimeout(ctx, chainTimeout)
	ch := make(chan []state.Event, 64)
	if err := st.WatchKindAggregated(ctx, kind, ch); err != nil {
		cancel()
		return nil, err
	}
	return func() error {
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s not reached: %w", resource.KindString(kind), ctx.Err())
			case batch := <-ch:
				for i := range batch {
					if done(&batch[i]) {
						return nil
					}
				}
			}
		}
	}, nil
}

// watchFinal waits until every E i holds N = want(i).
func watchFinal(ctx context.Context, st state.State, n int, want func(int) int) (func() error, error) {
	reached := make([]bool, n)
	count := 0
	return watchKind(ctx, st, Kind[EDef](), func(ev *state.Event) bool {
		if ev.Type != state.Created && ev.Type != state.Updated {
			return false
		}
		i := indexOf(ev.Resource.Metadata().ID())
		if !reached[i] && ev.Resource.(*E).TypedSpec().N == want(i) {
			reached[i] = true
			count++
		}
		return count == n
	})
}

// watchGone waits until n resources E were destroyed.
func watchGone(ctx context.Context, st state.State, n int) (func() error, error) {
	count := 0
	return watchKind(ctx, st, Kind[EDef](), func(ev *state.Event) bool {
		if ev.Type == state.Destroyed {
			count++
		}
		return count == n
	})
}

// watchReleased waits until n resources A are tearing down without
// finalizers.
func watchReleased(ctx context.Context, st state.State, n int) (func() error, error) {
	released := make([]bool, n)
	count := 0
	return watchKind(ctx, st, Kind[ADef](), func(ev *state.Event) bool {
		if ev.Type != state.Updated {
			return false
		}
		md := ev.Resource.Metadata()
		if i := indexOf(md.ID()); !released[i] && md.Phase() == resource.PhaseTearingDown && md.Finalizers().Empty() {
			released[i] = true
			count++
		}
		return count == n
	})
}

// sampleHeap records the peak of the live heap until the returned function
// is called.
func sampleHeap(peak *uint64) func() {
	var max atomic.Uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > max.Load() {
			max.Store(v)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				read()
			}
		}
	})
	return func() {
		close(stop)
		wg.Wait()
		read()
		*peak = max.Load()
	}
}

// resetPeakRSS resets the process's peak RSS (VmHWM) where Linux allows.
func resetPeakRSS() {
	goruntime.GC()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS returns VmHWM in bytes, 0 when unavailable.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// BenchChain runs [RunChain] in a benchmark loop and reports resources per
// second for each phase, the peak live heap and the peak RSS (max over
// iterations).
func BenchChain(b *testing.B, n int, finalizers bool, build func() []any) {
	b.ReportAllocs()
	var total ChainResult
	iters := 0
	for b.Loop() {
		res, err := RunChain(context.Background(), n, finalizers, build()...)
		if err != nil {
			b.Fatal(err)
		}
		total.Create += res.Create
		total.Update += res.Update
		total.Destroy += res.Destroy
		total.PeakHeap = max(total.PeakHeap, res.PeakHeap)
		total.PeakRSS = max(total.PeakRSS, res.PeakRSS)
		iters++
	}
	perSec := func(d time.Duration) float64 { return float64(n*iters) / d.Seconds() }
	b.ReportMetric(perSec(total.Create), "create-res/s")
	b.ReportMetric(perSec(total.Update), "update-res/s")
	b.ReportMetric(perSec(total.Destroy), "destroy-res/s")
	b.ReportMetric(float64(total.PeakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(total.PeakRSS)/(1<<20), "peak-rss-MiB")
}
