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

// W1DelaysOn is W1's writer on st (N creates, then N updates) with a
// kind-watcher on each of watchers (the same state, or remote clients of it:
// W7), measuring the delay from each write's return to each watcher's
// receipt (as E1 does). The caller reports the outcome.
func W1DelaysOn(ctx context.Context, st state.State, watchers []state.State, p params.W1Params) (runner.W1Outcome, measure.OpDelayStats, error) {
	objs := make([]*res.A, p.N)
	for i := range objs {
		objs[i] = res.NewA(i, 0)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		wg     sync.WaitGroup
		cut    atomic.Int64
		out    runner.W1Outcome
		kind   = res.Kind(params.AType)
		delays = measure.NewOpDelays(p.N, len(watchers))
	)

	for w, ws := range watchers {
		ch := make(chan state.Event, p.ChanBuf)

		if err := ws.WatchKind(ctx, kind, ch); err != nil {
			return out, measure.OpDelayStats{}, err
		}

		t := measure.NewFinalTracker(p.N, 1)
		out.Trackers = append(out.Trackers, t)
		sub := delays.Sub(w)

		wg.Go(func() {
			for !t.Done() {
				select {
				case <-ctx.Done():
					return
				case ev := <-ch:
					switch ev.Type { //nolint:exhaustive
					case state.Created, state.Updated:
						s := res.SpecOf(ev.Resource)
						sub.Observe(s.Value, s.Index)
						t.Observe(s)
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

	for i, obj := range objs {
		delays.Called(0, i)

		if err := st.Create(ctx, obj); err != nil {
			return out, measure.OpDelayStats{}, err
		}

		delays.Returned(0, i)
	}

	for i, obj := range objs {
		obj.TypedSpec().Value++
		delays.Called(1, i)

		if err := st.Update(ctx, obj); err != nil {
			return out, measure.OpDelayStats{}, err
		}

		delays.Returned(1, i)
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

	return out, delays.Stats(), nil
}
