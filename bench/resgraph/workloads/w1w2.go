package workloads

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resgraph/resgraph/pkg/state"

	"github.com/resgraph/resgraph/bench/common/measure"
	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/resgraph/res"
)

// W1: create N resources, then update each once, with K kind-watchers.
func W1(ctx context.Context, p params.W1Params, o runner.Options, r *runner.Report) error {
	objs := make([]*res.A, p.N)
	for i := range objs {
		objs[i] = res.NewA(i, 0)
	}

	st, err := NewState(o, r)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		wg   sync.WaitGroup
		cut  atomic.Int64
		out  runner.W1Outcome
		kind = res.Kind(params.AType)
	)

	for range p.Watchers {
		ch := make(chan state.Event, p.ChanBuf)

		if err := st.WatchKind(ctx, kind, ch); err != nil {
			return err
		}

		t := measure.NewFinalTracker(p.N, 1)
		out.Trackers = append(out.Trackers, t)

		wg.Go(func() {
			for !t.Done() {
				select {
				case <-ctx.Done():
					return
				case ev := <-ch:
					switch ev.Type { //nolint:exhaustive
					case state.Created, state.Updated:
						t.Observe(res.SpecOf(ev.Resource))
					case state.Errored:
						cut.Add(1)

						return
					}
				}
			}
		})
	}

	out.Before = measure.Snapshot(true)
	start := time.Now()

	for _, obj := range objs {
		if err := st.Create(ctx, obj); err != nil {
			return err
		}
	}

	for _, obj := range objs {
		obj.TypedSpec().Value++

		if err := st.Update(ctx, obj); err != nil {
			return err
		}
	}

	out.Write = time.Since(start)

	done := make(chan struct{})

	go func() { wg.Wait(); close(done) }()

	out.TimedOut = !measure.WaitTimeout(done, p.Timeout)
	out.Drain = time.Since(start)
	out.After = measure.Snapshot(false)

	cancel()
	<-done

	out.Cut = int(cut.Load())
	runner.ReportW1(r, p, out)

	return nil
}

// W2: one writer, S kind-watchers, paced or unpaced updates; delivery delay.
func W2(ctx context.Context, p params.W2Params, o runner.Options, r *runner.Report) error {
	st, err := NewState(o, r)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	objs := make([]*res.A, p.Resources)

	for i := range objs {
		objs[i] = res.NewA(i, -1)

		if err := st.Create(ctx, objs[i]); err != nil {
			return err
		}
	}

	var (
		wg   sync.WaitGroup
		fan  = measure.NewFanOut(p)
		kind = res.Kind(params.AType)
	)

	for s := range p.Subscribers {
		ch := make(chan state.Event, p.ChanBuf)

		if err := st.WatchKind(ctx, kind, ch); err != nil {
			return err
		}

		sub := fan.Sub(s)

		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-ch:
					switch ev.Type { //nolint:exhaustive
					case state.Created, state.Updated:
						if sub.Observe(res.SpecOf(ev.Resource)) {
							return
						}
					case state.Errored:
						fan.Cut()

						return
					}
				}
			}
		})
	}

	var interval time.Duration
	if p.Rate > 0 {
		interval = time.Duration(float64(time.Second) / p.Rate)
	}

	start := time.Now()

	for seq := range p.Updates {
		if interval > 0 {
			if d := time.Until(start.Add(time.Duration(seq) * interval)); d > 0 {
				time.Sleep(d)
			}
		}

		obj := objs[seq%len(objs)]
		obj.TypedSpec().Value = seq

		fan.Call(seq)

		if err := st.Update(ctx, obj); err != nil {
			return err
		}

		fan.Returned(seq)
	}

	write := time.Since(start)

	done := make(chan struct{})

	go func() { wg.Wait(); close(done) }()

	timedOut := !measure.WaitTimeout(done, p.Timeout)
	drain := time.Since(start)

	cancel()
	<-done

	runner.ReportW2(r, p, write, drain, timedOut, fan.Stats())

	return nil
}
