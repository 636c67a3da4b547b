package remote

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// BenchmarkSnapshots_HeapPerResource reports the heap a lone watch's
// snapshots hold per resource (heapB/resource), the decoded objects aside:
// 10,000 resources, each stored at version 1 then 2, as W7's watchers do.
func BenchmarkSnapshots_HeapPerResource(b *testing.B) {
	const n = 10_000
	ids := make([]resource.ID, n)
	objs := make([]resource.Resource, n)
	for i := range ids {
		ids[i] = "r" + strconv.Itoa(i)
		objs[i] = backend.PointerOnly(resource.NewPointer("ns", "T", ids[i]))
	}
	kind := resource.KindOf(resource.NewKind("ns", "T"))
	var held float64
	for b.Loop() {
		s := newSnapshots()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ks := s.acquire(kind)
		for v := uint64(1); v <= 2; v++ {
			for i, id := range ids {
				ks.store(id, snapKey{version: v}, objs[i])
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(ks)
		s.release(kind, ks)
	}
	b.ReportMetric(held, "heapB/resource")
}
