package inmem

import (
	"context"
	"fmt"
	goruntime "runtime"
	"testing"

	"github.com/resgraph/resgraph/pkg/internal/benchmem"
)

// BenchmarkMemory is the memory the state holds and allocates per stored
// resource (see internal/benchmem): N resources created, then each updated
// once, no watcher; retained is measured with the state alive. With the
// history at its defaults, the last 4,096 replaced versions are retained
// too (S11's reach).
func BenchmarkMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("inmem/N=%d", n), func(b *testing.B) {
			rs := make([]*pair, n)
			ctx := context.Background()
			var res benchmem.Result
			for b.Loop() {
				for i := range rs {
					rs[i] = nil
				}
				m := benchmem.Start()
				st := newBenchState()
				for i := range rs {
					rs[i] = benchPair(i, 0)
					if err := st.Create(ctx, rs[i]); err != nil {
						b.Fatal(err)
					}
				}
				for _, r := range rs {
					r.TypedSpec().A = 1
					if err := st.Update(ctx, r); err != nil {
						b.Fatal(err)
					}
				}
				clear(rs) // the caller's copies are not the state's
				res = m.Stop()
				goruntime.KeepAlive(st)
			}
			res.Report(b, n)
		})
	}
}
