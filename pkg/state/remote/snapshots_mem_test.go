package remote

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
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

// BenchmarkSnapshots_Event is a lone watch's work per event on the
// snapshots: the version's key, a lookup that misses, and the store.
func BenchmarkSnapshots_Event(b *testing.B) {
	const n = 10_000
	msgs := make([]*pb.Resource, n)
	objs := make([]resource.Resource, n)
	for i := range msgs {
		id := "r" + strconv.Itoa(i)
		msgs[i] = &pb.Resource{Metadata: &pb.Metadata{Namespace: "ns", Type: "T", Id: id, CreatedSeconds: 1_700_000_000, CreatedNanos: int32(i),
			UpdatedSeconds: 1_700_000_000, UpdatedNanos: int32(i)}, Spec: []byte(`{"value":1,"index":` + strconv.Itoa(i) + `}`)}
		objs[i] = backend.PointerOnly(resource.NewPointer("ns", "T", id))
	}
	s := newSnapshots()
	ks := s.acquire(resource.KindOf(resource.NewKind("ns", "T")))
	var v uint64
	for i := 0; b.Loop(); i++ {
		j := i % n
		if j == 0 {
			v++
		}
		m := msgs[j]
		m.Metadata.Version = v
		key := s.keyOf(m)
		if ks.lookup(m.Metadata.Id, key) == nil {
			ks.store(m.Metadata.Id, key, objs[j])
		}
	}
}
