package workloads

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
)

// BenchmarkChain is the harness's W3 and W4 (N = 1000) in a Go benchmark:
// an iteration is one run of Chain (a fresh state and Runtime, the create
// and update phases) without the warm-up wait; create-ms and update-ms
// are the harness's figures. Run it with RESGRAPH_MUTATION_DETECTOR=guard
// for the production default (a test binary turns the detector on).
func BenchmarkChain(b *testing.B) {
	for _, c := range []struct {
		mode string
		conc uint
	}{{params.ModeTransform, 0}, {params.ModeQTransform, 1}, {params.ModeQTransform, 4}} {
		b.Run(fmt.Sprintf("%s/conc=%d/N=1000", c.mode, c.conc), func(b *testing.B) {
			p := params.DefaultChain
			p.Mode, p.Concurrency, p.Warmup = c.mode, c.conc, time.Millisecond
			var create, update float64
			b.ReportAllocs()
			for b.Loop() {
				r := &runner.Report{Metrics: map[string]float64{}, Config: map[string]string{}}
				if err := Chain(context.Background(), p, runner.Options{}, r); err != nil {
					b.Fatal(err)
				}
				create += r.Metrics["create_ms"]
				update += r.Metrics["update_ms"]
			}
			b.ReportMetric(create/float64(b.N), "create-ms")
			b.ReportMetric(update/float64(b.N), "update-ms")
		})
	}
}
