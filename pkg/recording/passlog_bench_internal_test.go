package recording

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
)

// BenchmarkPassLog is the pass log's cost a commit and a read (rules RC9
// and RC13) on the controllers' goroutines: each of GOMAXPROCS goroutines
// logs as a controller of its own (RunParallel), alone in the cache
// (hot) or touching a line of 32 MiB between entries, as a pass that
// reads and writes the state does (cold).
func BenchmarkPassLog(b *testing.B) {
	ptrs := make([]resource.PointerKey, 4096)
	for i := range ptrs {
		ptrs[i] = resource.PointerOf(resource.NewPointer("ns", "Notes.test", fmt.Sprintf("note-%05d", i)))
	}
	kind := resource.KindOf(resource.NewKind("ns", "Notes.test"))
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	mem := make([]uint64, 32<<20/8)
	for _, cold := range []bool{false, true} {
		b.Run(map[bool]string{false: "hot", true: "cold"}[cold], func(b *testing.B) {
			l := newPassLog()
			var next atomic.Uint32
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				name := names[next.Add(1)%uint32(len(names))]
				x := uint64(len(name))
				for i := uint64(1); pb.Next(); i++ {
					if cold {
						x = x*0x9e3779b97f4a7c15 + i
						mem[(x>>20)%uint64(len(mem))]++
					}
					if i%4 == 0 {
						l.Read(name, i/4, 0, i, kind, nil)
					}
					l.Committed(name, ptrs[i%uint64(len(ptrs))], i, i, i/4, nil)
				}
			})
		})
	}
}
