package resource_test

import (
	"fmt"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
)

// BenchmarkNewMetadata is the cost of a new metadata, which interns its
// kind, cycling over 1 and 8 kinds of realistic names (names of one
// length that differ only in a middle letter, as a graph's kinds often
// do).
func BenchmarkNewMetadata(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("kinds=%d", n), func(b *testing.B) {
			types := make([]resource.Type, n)
			for i := range types {
				types[i] = fmt.Sprintf("LinkStatuses%d.net.resgraph.dev", i)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				md := resource.NewMetadata("network", types[i%n], "eth0", resource.VersionUndefined)
				if md.Type() != types[i%n] {
					b.Fatal("wrong type")
				}
				i++
			}
		})
	}
}
