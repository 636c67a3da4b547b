package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"

	"github.com/resgraph/resgraph/bench/common/measure"
	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/resgraph/res"
)

func populate(ctx context.Context, st state.State, n int) (time.Duration, error) {
	start := time.Now()

	for i := range n {
		if err := st.Create(ctx, res.NewA(i, i)); err != nil {
			return 0, err
		}
	}

	return time.Since(start), nil
}

// W5: full-kind Lists and random Gets over N resources.
func W5(ctx context.Context, p params.W5Params, o runner.Options, r *runner.Report) error {
	st, err := NewState(o, r)
	if err != nil {
		return err
	}

	return W5On(ctx, st, st, p, r)
}

// W5On is W5 with the resources created in local and read through reader
// (the same state, or a remote client of it: W7).
func W5On(ctx context.Context, local, reader state.State, p params.W5Params, r *runner.Report) error {
	var (
		out runner.W5Outcome
		err error
	)

	if out.Populate, err = populate(ctx, local, p.N); err != nil {
		return err
	}

	kind := res.Kind(params.AType)
	out.ListBefore = measure.Snapshot(true)

	for range p.Lists {
		start := time.Now()

		l, err := reader.List(ctx, kind)
		if err != nil {
			return err
		}

		out.Lists = append(out.Lists, time.Since(start))

		if len(l.Items) != p.N {
			return fmt.Errorf("the List returned %d of %d", len(l.Items), p.N)
		}
	}

	out.ListAft = measure.Snapshot(false)

	rng := rand.New(rand.NewPCG(p.Seed, p.Seed)) //nolint:gosec // benchmark data
	ptrs := make([]resource.Pointer, p.Gets)

	for i := range ptrs {
		ptrs[i] = res.Pointer(params.AType, rng.IntN(p.N))
	}

	out.GetBefore = measure.Snapshot(true)
	start := time.Now()

	for _, ptr := range ptrs {
		if _, err := reader.Get(ctx, ptr); err != nil {
			return err
		}
	}

	out.Gets = time.Since(start)
	out.GetAfter = measure.Snapshot(false)

	runner.ReportW5(r, p, out)

	return nil
}

// W6: heap held per stored resource (callers' objects dropped, after GC).
func W6(ctx context.Context, p params.W6Params, o runner.Options, r *runner.Report) error {
	before := measure.Snapshot(true)

	st, err := NewState(o, r)
	if err != nil {
		return err
	}

	took, err := populate(ctx, st, p.N)
	if err != nil {
		return err
	}

	after := measure.Snapshot(true)

	runtime.KeepAlive(st)
	runner.ReportW6(r, p, took, before, after)

	return nil
}
