package workloads

import (
	"context"
	"fmt"
	"os"
	"runtime/trace"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"

	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/resgraph/res"
)

// BenchmarkChainUpdate is W4's update phase alone (N = 1000, concurrency
// 1 and 4): one chain is created first, outside the measurement; an
// iteration then updates every A and waits until every E holds the new
// value. Besides time and allocations it reports the process's CPU time
// per iteration (user-us/op, sys-us/op, from getrusage), which a loaded
// machine disturbs less than time; its voluntary and involuntary context
// switches (vcsw/op, ivcsw/op: a thread that slept, a thread the kernel
// preempted); and the time its threads waited for a CPU while runnable
// (rqwait-us/op, summed over the threads alive at the end, from
// /proc/self/task/*/schedstat; 0 where the kernel does not keep it).
// Each iteration is a "update phase" region of a -test.trace. Run it with
// RESGRAPH_MUTATION_DETECTOR=guard for the production default.
func BenchmarkChainUpdate(b *testing.B) {
	for _, conc := range []uint{1, 4} {
		b.Run(fmt.Sprintf("conc=%d/N=1000", conc), func(b *testing.B) { benchChainUpdate(b, 1000, conc) })
	}
}

func benchChainUpdate(b *testing.B, n int, conc uint) {
	st := inmem.NewState()
	rt, err := runtime.New(st, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	p := params.DefaultChain
	p.Mode, p.Concurrency = params.ModeQTransform, conc
	if err = registerChain(rt, p); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	done := make(chan struct{})
	go func() { _ = rt.Run(ctx); close(done) }() // ends with cancel, waited below
	defer func() { cancel(); <-done }()
	last := make(chan state.Event, 4096)
	if err = st.WatchKind(ctx, res.Kind(params.EType), last); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err = st.Create(ctx, res.NewA(i, 0)); err != nil {
			b.Fatal(err)
		}
	}
	if err = waitValue(ctx, last, n, params.Hops); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	waitBefore := runQueueWait()
	v := 0
	for b.Loop() {
		v++
		region := trace.StartRegion(ctx, "update phase") // for -test.trace
		for i := range n {
			if _, err = st.UpdateWithConflicts(ctx, res.Pointer(params.AType, i), func(r resource.Resource) error {
				r.(*res.A).TypedSpec().Value = v
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
		if err = waitValue(ctx, last, n, v+params.Hops); err != nil {
			b.Fatal(err)
		}
		region.End()
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	b.ReportMetric(float64(runQueueWait()-waitBefore)/1e3/float64(b.N), "rqwait-us/op")
	b.ReportMetric(float64(after.Utime.Nano()-before.Utime.Nano())/1e3/float64(b.N), "user-us/op")
	b.ReportMetric(float64(after.Stime.Nano()-before.Stime.Nano())/1e3/float64(b.N), "sys-us/op")
	b.ReportMetric(float64(after.Nvcsw-before.Nvcsw)/float64(b.N), "vcsw/op")
	b.ReportMetric(float64(after.Nivcsw-before.Nivcsw)/float64(b.N), "ivcsw/op")
}

// waitValue reads events of kind E from last until n of them carry value,
// or ctx ends.
func waitValue(ctx context.Context, last <-chan state.Event, n, value int) error {
	for seen := 0; seen < n; {
		select {
		case ev := <-last:
			if (ev.Type == state.Created || ev.Type == state.Updated) && res.SpecOf(ev.Resource).Value == value {
				seen++
			}
		case <-ctx.Done():
			return fmt.Errorf("%d of %d E resources reached %d: %w", seen, n, value, ctx.Err())
		}
	}
	return nil
}

// runQueueWait returns the time the process's threads spent runnable but
// waiting for a CPU (run_delay of /proc/self/task/*/schedstat, in ns);
// 0 where the file is not there.
func runQueueWait() int64 {
	tasks, _ := os.ReadDir("/proc/self/task")
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		var run, wait, slices int64
		if _, err = fmt.Sscan(string(b), &run, &wait, &slices); err == nil {
			sum += wait
		}
	}
	return sum
}
