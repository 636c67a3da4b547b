// Package benchmem measures what a workload holds and allocates, for the
// memory benchmarks of the state, the Runtime and the generic controllers
// (BenchmarkMemory in each; docs/performance.md has the figures).
//
// A [Meter] is started before the workload builds anything. It reports:
//
//   - retained: the live heap after a full collection, minus the live
//     heap when the meter started: what the workload keeps;
//   - peak: the largest heap of objects (live or not yet collected)
//     sampled every millisecond while the meter runs, minus the same
//     baseline: what the process needs at its worst, which the garbage
//     collector's pacing roughly doubles into resident memory;
//   - allocations: the objects and bytes allocated while the meter runs.
//
// The figures are process-wide: nothing else may run meanwhile (a
// benchmark runs alone).
package benchmem

import (
	goruntime "runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sampleEvery is the period of the peak heap sampler.
const sampleEvery = time.Millisecond

// Meter measures one run of a workload; see the package documentation.
type Meter struct {
	base  uint64 // live heap at the start
	start goruntime.MemStats
	peak  atomic.Uint64
	stop  chan struct{}
	wg    sync.WaitGroup
}

// Result is what a [Meter] measured, in bytes and objects.
type Result struct {
	Retained, Peak     uint64
	Allocs, AllocBytes uint64
}

// Start collects the garbage, takes the baseline and starts the peak
// sampler; [Meter.Stop] must be called.
func Start() *Meter {
	m := &Meter{stop: make(chan struct{})}
	m.base = liveHeap()
	goruntime.ReadMemStats(&m.start)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > m.peak.Load() {
			m.peak.Store(v)
		}
	}
	read()
	m.wg.Go(func() {
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				read()
				return
			case <-t.C:
				read()
			}
		}
	})
	return m
}

// Stop ends the run: the peak and the allocations are those up to now,
// and the retained heap is measured after a full collection. Whatever the
// workload keeps must still be reachable when Stop is called (keep it
// alive after the call with runtime.KeepAlive).
func (m *Meter) Stop() Result {
	close(m.stop)
	m.wg.Wait()
	var end goruntime.MemStats
	goruntime.ReadMemStats(&end)
	r := Result{
		Allocs:     end.Mallocs - m.start.Mallocs,
		AllocBytes: end.TotalAlloc - m.start.TotalAlloc,
		Peak:       sub(m.peak.Load(), m.base),
	}
	r.Retained = sub(liveHeap(), m.base)
	return r
}

// Report reports r per resource, for perResource resources: retained and
// peak bytes, allocations and allocated bytes. Over several iterations it
// reports the last one's.
func (r Result) Report(b *testing.B, perResource int) {
	n := float64(perResource)
	b.ReportMetric(float64(r.Retained)/n, "retained-B/res")
	b.ReportMetric(float64(r.Peak)/n, "peak-B/res")
	b.ReportMetric(float64(r.Allocs)/n, "allocs/res")
	b.ReportMetric(float64(r.AllocBytes)/n, "alloc-B/res")
}

// liveHeap returns the live heap after a full collection (two: the first
// may leave objects that finalizers or the sweeper free only then).
func liveHeap() uint64 {
	goruntime.GC()
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
