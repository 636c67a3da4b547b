package atrest_test

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/state/atrest"
)

// benchSpec is an encoding-sized stand-in of n bytes for a resource whose
// spec is JSON of a daemon's kind (interfaces, addresses, numbers), so
// that zstd sees what it would see in a store.
func benchSpec(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	b := []byte("rgr\x01")
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, `{"name":"eth%d","address":"10.%d.%d.%d/24","mtu":%d,"up":%t,"gateway":"10.%d.0.1"},`,
			i, rng.IntN(256), rng.IntN(256), rng.IntN(256), 1280+rng.IntN(8000), rng.IntN(2) == 0, rng.IntN(256))
	}
	return b[:n]
}

// benchConfigs are the configurations the benchmarks compare.
func benchConfigs(b *testing.B) map[string]*atrest.Sealer {
	k := newKey("k1")
	return map[string]*atrest.Sealer{
		"plain":    newSealer(b, atrest.Config{}),
		"zstd":     newSealer(b, atrest.Config{CompressAbove: atrest.DefaultCompressAbove}),
		"aes":      newSealer(b, atrest.Config{}, k),
		"zstd+aes": newSealer(b, atrest.Config{CompressAbove: atrest.DefaultCompressAbove}, k),
	}
}

// benchSizes are a small resource's encoding (the demo's are 150–400
// bytes) and one with a 4 KiB spec.
var benchSizes = []int{256, 4096}

// BenchmarkSeal measures what a write pays to make its record, and the
// record's size (B/record).
func BenchmarkSeal(b *testing.B) {
	for _, n := range benchSizes {
		plain := benchSpec(n)
		for name, s := range benchConfigs(b) {
			b.Run(fmt.Sprintf("size=%d/%s", n, name), func(b *testing.B) {
				var rec []byte
				b.SetBytes(int64(n))
				b.ReportAllocs()
				cpu := cpuTime()
				for b.Loop() {
					var err error
					if rec, err = s.Seal(rec[:0], "ns", "T", "id", plain); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
				b.ReportMetric(float64(len(rec)), "B/record")
			})
		}
	}
}

// BenchmarkOpen measures what reading a record back costs (a store reads
// every record when it opens).
func BenchmarkOpen(b *testing.B) {
	for _, n := range benchSizes {
		plain := benchSpec(n)
		for name, s := range benchConfigs(b) {
			rec, err := s.Seal(nil, "ns", "T", "id", plain)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("size=%d/%s", n, name), func(b *testing.B) {
				var out []byte
				b.SetBytes(int64(n))
				b.ReportAllocs()
				cpu := cpuTime()
				for b.Loop() {
					if out, err = s.Open(out[:0], "ns", "T", "id", rec); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// cpuTime returns the CPU time (user and system) the process has used.
// On a machine that others load, it tells a benchmark's cost better than
// the wall clock, which counts the time the process waited for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time per operation since start
// (cpu-ns/op); run with -cpu 1, so that it is the benchmark's.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
