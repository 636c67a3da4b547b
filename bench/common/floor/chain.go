package floor

import (
	"context"
	"fmt"
	"time"

	"github.com/resgraph/resgraph/bench/common/measure"
	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
)

// chainTypes are the kinds of the chain, A..E.
var chainTypes = [params.Hops + 1]string{params.AType, params.BType, params.CType, params.DType, params.EType}

// Chain is the floor of W3/W4: the least work a 4-hop pipeline can do with
// the same data and the same copy-on-write-and-read store — one goroutine
// per hop that takes the changed IDs of its input kind from a channel, reads
// the input (copy), writes the output (copy, create or update by version)
// and hands the ID to the next hop. No engine, no controller contract, no
// coalescing, no owners, no history: the physical limit the engines are read
// against. The writer and the tracker do exactly what the engines' runs do.
func Chain(ctx context.Context, p params.ChainParams, o runner.Options, r *runner.Report) error {
	if err := note(r, o); err != nil {
		return err
	}

	if p.Mode != params.ModeTransform {
		return runner.ErrNotApplicable
	}

	st := New()
	// each kind's change feed: every write of a kind sends its ID (2 phases × N)
	feeds := make([]chan int, params.Hops+1)
	for i := range feeds {
		feeds[i] = make(chan int, 2*p.N+16)
	}

	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()

	errc := make(chan error, params.Hops+1)

	for h := range params.Hops {
		in, out := chainTypes[h], chainTypes[h+1]
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case i := <-feeds[h]:
					src, err := st.Get(params.NS, in, params.ID(i))
					if err != nil {
						errc <- err
						return
					}
					spec := params.Spec{Value: src.Spec.Value + 1, Index: src.Spec.Index}
					dst, err := st.Get(params.NS, out, params.ID(i))
					switch {
					case err == ErrNotFound:
						err = st.Create(&Object{Namespace: params.NS, Type: out, ID: params.ID(i), Spec: spec})
					case err == nil:
						dst.Spec = spec
						err = st.Update(dst)
					}
					if err != nil {
						errc <- fmt.Errorf("hop %d: %w", h, err)
						return
					}
					feeds[h+1] <- i
				}
			}
		}()
	}

	tracker := measure.NewChainTracker(p.N, params.Hops, p.UpdateValue+params.Hops)

	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case i := <-feeds[params.Hops]:
				e, err := st.Get(params.NS, params.EType, params.ID(i))
				if err != nil {
					errc <- err
					return
				}
				tracker.Set(e.Spec.Index, e.Spec.Value)
			}
		}
	}()

	time.Sleep(p.Warmup)

	var out runner.ChainOutcome

	wait := func(reached <-chan time.Time) (time.Time, error) {
		select {
		case t := <-reached:
			return t, nil
		case err := <-errc:
			return time.Time{}, err
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("timeout after %v: %w", p.Timeout, ctx.Err())
		}
	}

	start := time.Now()
	objs := make([]*Object, p.N)

	for i := range p.N {
		objs[i] = newA(i, 0)
		if err := st.Create(objs[i]); err != nil {
			return err
		}
		feeds[0] <- i
	}

	out.CreateIssued = time.Since(start)

	t, err := wait(tracker.Reached[0])
	if err != nil {
		return err
	}

	out.CreateDone = t.Sub(start)
	start = time.Now()

	for i := range p.N {
		// read-modify-write, as the engines' UpdateWithConflicts does
		cur, err := st.Get(params.NS, params.AType, params.ID(i))
		if err != nil {
			return err
		}
		cur.Spec.Value = p.UpdateValue
		if err = st.Update(cur); err != nil {
			return err
		}
		feeds[0] <- i
	}

	out.UpdateIssued = time.Since(start)

	if t, err = wait(tracker.Reached[1]); err != nil {
		return err
	}

	out.UpdateDone = t.Sub(start)
	runner.ReportChain(r, p, out)

	return nil
}
