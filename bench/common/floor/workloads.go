package floor

import (
	"context"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/resgraph/resgraph/bench/common/measure"
	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
)

// Backend is the floor as a runner backend (W1 without watchers, W5, W6).
var Backend = runner.Backend{Name: "floor", W1: W1, Chain: Chain, W5: W5, W6: W6}

func newA(i, v int) *Object {
	return &Object{Namespace: params.NS, Type: params.AType, ID: params.ID(i), Spec: params.Spec{Value: v, Index: i}}
}

func note(r *runner.Report, o runner.Options) error {
	if o.HistCap != 0 {
		return errHistCap
	}

	r.Note("store", "mutex-guarded map per kind, copy on write and read, sorted ID slice for List")

	return nil
}

// W1 creates N objects in ID order, then updates each once (no watchers: the
// floor has no watch).
func W1(_ context.Context, p params.W1Params, o runner.Options, r *runner.Report) error {
	if err := note(r, o); err != nil {
		return err
	}

	if p.Watchers != 0 {
		return runner.ErrNotApplicable
	}

	objs := make([]*Object, p.N)
	for i := range objs {
		objs[i] = newA(i, 0)
	}

	st := New()
	before := measure.Snapshot(true)
	start := time.Now()

	for _, obj := range objs {
		if err := st.Create(obj); err != nil {
			return err
		}
	}

	for _, obj := range objs {
		obj.Spec.Value++

		if err := st.Update(obj); err != nil {
			return err
		}
	}

	write := time.Since(start)
	after := measure.Snapshot(false)

	runtime.KeepAlive(st)
	runner.ReportW1(r, p, runner.W1Outcome{Write: write, Drain: write, Before: before, After: after})

	return nil
}

// W5 times full-kind Lists and random Gets over N objects.
func W5(_ context.Context, p params.W5Params, o runner.Options, r *runner.Report) error {
	if err := note(r, o); err != nil {
		return err
	}

	var out runner.W5Outcome

	st := New()
	start := time.Now()

	for i := range p.N {
		if err := st.Create(newA(i, i)); err != nil {
			return err
		}
	}

	out.Populate = time.Since(start)
	out.ListBefore = measure.Snapshot(true)

	for range p.Lists {
		start = time.Now()
		l := st.List(params.NS, params.AType)
		out.Lists = append(out.Lists, time.Since(start))

		if len(l) != p.N {
			return errListLen
		}
	}

	out.ListAft = measure.Snapshot(false)

	rng := rand.New(rand.NewPCG(p.Seed, p.Seed)) //nolint:gosec // benchmark data
	ids := make([]string, p.Gets)

	for i := range ids {
		ids[i] = params.ID(rng.IntN(p.N))
	}

	out.GetBefore = measure.Snapshot(true)
	start = time.Now()

	for _, id := range ids {
		if _, err := st.Get(params.NS, params.AType, id); err != nil {
			return err
		}
	}

	out.Gets = time.Since(start)
	out.GetAfter = measure.Snapshot(false)

	runner.ReportW5(r, p, out)

	return nil
}

// W6 measures the heap held per stored object.
func W6(_ context.Context, p params.W6Params, o runner.Options, r *runner.Report) error {
	if err := note(r, o); err != nil {
		return err
	}

	before := measure.Snapshot(true)
	st := New()
	start := time.Now()

	for i := range p.N {
		if err := st.Create(newA(i, i)); err != nil {
			return err
		}
	}

	populate := time.Since(start)
	after := measure.Snapshot(true)

	runtime.KeepAlive(st)
	runner.ReportW6(r, p, populate, before, after)

	return nil
}
