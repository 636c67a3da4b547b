package workloads

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"

	"github.com/resgraph/resgraph/bench/common/floor"
	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/resgraph/res"
)

// BenchmarkW5Get is the harness's W5 Get in a Go benchmark: an iteration
// is as many Gets of random IDs (PCG seeded as W5's) among as many
// resources as W5 times, through pointers (IDs for the floor) built
// beforehand, on resgraph's default in-memory state and on the floor
// (bench/common/floor); ns/get is the figure W5 reports. The Gets of an
// iteration are getAll and floorGetAll, for callgrind's --toggle-collect.
func BenchmarkW5Get(b *testing.B) {
	p := params.DefaultW5
	rng := rand.New(rand.NewPCG(p.Seed, p.Seed)) //nolint:gosec // benchmark data
	idx := make([]int, p.Gets)
	for i := range idx {
		idx[i] = rng.IntN(p.N)
	}
	b.Run("resgraph", func(b *testing.B) {
		st := inmem.NewState()
		if _, err := populate(context.Background(), st, p.N); err != nil {
			b.Fatal(err)
		}
		ptrs := make([]resource.Pointer, len(idx))
		for i, n := range idx {
			ptrs[i] = res.Pointer(params.AType, n)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := getAll(st, ptrs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ptrs)), "ns/get")
	})
	b.Run("floor", func(b *testing.B) {
		st := floor.New()
		for i := range p.N {
			o := &floor.Object{Namespace: params.NS, Type: params.AType, ID: params.ID(i), Spec: params.Spec{Value: i, Index: i}}
			if err := st.Create(o); err != nil {
				b.Fatal(err)
			}
		}
		ids := make([]string, len(idx))
		for i, n := range idx {
			ids[i] = params.ID(n)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := floorGetAll(st, ids); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/get")
	})
}

//go:noinline
func getAll(st state.State, ptrs []resource.Pointer) error {
	ctx := context.Background()
	for _, p := range ptrs {
		if _, err := st.Get(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

//go:noinline
func floorGetAll(st *floor.Store, ids []string) error {
	for _, id := range ids {
		if _, err := st.Get(params.NS, params.AType, id); err != nil {
			return err
		}
	}
	return nil
}
