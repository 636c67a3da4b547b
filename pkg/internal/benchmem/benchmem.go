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
//   - allocations: the objects and bytes allocated while the meter runs;
//   - scanned: the heap the collector scans (objects that may hold
//     pointers) after a full collection, minus the same at the start:
//     what of the retained heap every collection marks through, rather
//     than skipping as pointer-free;
//   - collection CPU: the process's CPU time (user and system) of one of
//     the full collections that measure the retained heap: what marking
//     what the workload keeps costs each collection.
//
// The figures are process-wide: nothing else may run meanwhile (a
// benchmark runs alone).
package benchmem

import (
	goruntime "runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// sampleEvery is the period of the peak heap sampler.
const sampleEvery = time.Millisecond

// Meter measures one run of a workload; see the package documentation.
type Meter struct {
	base uint64 // live heap at the start
	// baseScan is the scannable heap at the start.
	baseScan uint64
	start    goruntime.MemStats
	peak     atomic.Uint64
	stop     chan struct{}
	wg       sync.WaitGroup
}

// Result is what a [Meter] measured, in bytes and objects.
type Result struct {
	Retained, Peak     uint64
	Allocs, AllocBytes uint64
	Scanned            uint64
	// CollectionCPU is the CPU time of one full collection at the end.
	CollectionCPU time.Duration
}

// Start collects the garbage, takes the baseline and starts the peak
// sampler; [Meter.Stop] must be called.
func Start() *Meter {
	m := &Meter{stop: make(chan struct{})}
	m.base = liveHeap()
	m.baseScan = scannableHeap()
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
	cpu := processCPU()
	r.Retained = sub(liveHeap(), m.base)
	r.CollectionCPU = (processCPU() - cpu) / 2 // liveHeap collects twice
	r.Scanned = sub(scannableHeap(), m.baseScan)
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
	b.ReportMetric(float64(r.Scanned)/n, "scanned-B/res")
	b.ReportMetric(float64(r.CollectionCPU.Nanoseconds())/n, "gc-cpu-ns/res")
}

// processCPU returns the CPU time (user and system) the process used so
// far; 0 where it cannot be read.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// scannableHeap returns the heap that the last collection found scannable
// (see runtime/metrics, /gc/scan/heap:bytes); called after liveHeap.
func scannableHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
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
