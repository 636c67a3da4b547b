package workloads

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"

	"github.com/resgraph/resgraph/bench/common/measure"
	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/resgraph/res"
)

// hopTransform builds one transform controller of the chain: In -> Out,
// same ID, Value+1.
//
// The output is mapped from the input's metadata (its ID) only: a generic
// controller may map a resource whose spec it has not read.
func hopTransform[In, Out res.Valued](name string, outByID func(resource.ID, params.Spec) Out) *transform.Controller[In, Out] {
	return transform.NewController(transform.Settings[In, Out]{
		Name: name,
		MapMetadataFunc: func(in In) Out {
			return outByID(in.Metadata().ID(), params.Spec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in In, out Out) error {
			*out.TypedSpec() = params.Spec{Value: in.TypedSpec().Value + 1, Index: in.TypedSpec().Index}

			return nil
		},
	})
}

// hopQTransform is hopTransform as a qtransform controller with the given
// concurrency (0: the library's default).
func hopQTransform[In, Out res.Valued](name string, inByID func(resource.ID, params.Spec) In, outByID func(resource.ID, params.Spec) Out, conc uint) *qtransform.QController[In, Out] {
	var opts []qtransform.ControllerOption
	if conc > 0 {
		opts = append(opts, qtransform.WithConcurrency(conc))
	}

	return qtransform.NewQController(qtransform.Settings[In, Out]{
		Name: name,
		MapMetadataFunc: func(in In) Out {
			return outByID(in.Metadata().ID(), params.Spec{})
		},
		UnmapMetadataFunc: func(out Out) In {
			return inByID(out.Metadata().ID(), params.Spec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in In, out Out) error {
			*out.TypedSpec() = params.Spec{Value: in.TypedSpec().Value + 1, Index: in.TypedSpec().Index}

			return nil
		},
	}, opts...)
}

func registerChain(rt *runtime.Runtime, p params.ChainParams) error {
	switch p.Mode {
	case params.ModeTransform:
		for _, c := range []controller.Controller{
			hopTransform[*res.A]("AtoB", res.BByID),
			hopTransform[*res.B]("BtoC", res.CByID),
			hopTransform[*res.C]("CtoD", res.DByID),
			hopTransform[*res.D]("DtoE", res.EByID),
		} {
			if err := rt.RegisterController(c); err != nil {
				return err
			}
		}
	case params.ModeQTransform:
		for _, c := range []controller.QController{
			hopQTransform("AtoB", res.AByID, res.BByID, p.Concurrency),
			hopQTransform("BtoC", res.BByID, res.CByID, p.Concurrency),
			hopQTransform("CtoD", res.CByID, res.DByID, p.Concurrency),
			hopQTransform("DtoE", res.DByID, res.EByID, p.Concurrency),
		} {
			if err := rt.RegisterQController(c); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown chain mode %q", p.Mode)
	}

	return nil
}

// watchLast starts following kind E into t: it registers the watch before
// it returns, so that every change of kind E made afterwards reaches t
// (the first watch has no bootstrap contents: a change made before
// watchLast returns may be missed, and the run would never finish). The
// returned follow delivers the events until ctx ends; the caller runs it
// on a goroutine of its own. After an Errored event (a buffer overrun)
// follow watches again from a snapshot (bootstrap contents) and counts the
// re-watch in rewatches, which the caller reads once follow has returned.
func watchLast(ctx context.Context, st state.State, t *measure.ChainTracker, rewatches *int) (follow func() error, err error) {
	ch, wcancel, err := watchE(ctx, st)
	if err != nil {
		return nil, err
	}

	return func() error {
		for {
			errored := deliverLast(ctx, ch, t)

			wcancel()

			if !errored {
				return nil
			}

			*rewatches++
			t.Reset()

			var werr error
			if ch, wcancel, werr = watchE(ctx, st, state.WithBootstrapContents(true)); werr != nil {
				return werr
			}
		}
	}, nil
}

// watchE registers a watch of kind E with opts; cancel ends it.
func watchE(ctx context.Context, st state.State, opts ...state.WatchKindOption) (ch chan state.Event, cancel context.CancelFunc, err error) {
	ch = make(chan state.Event, 1024)
	wctx, cancel := context.WithCancel(ctx)

	if err = st.WatchKind(wctx, res.Kind(params.EType), ch, opts...); err != nil {
		cancel()

		return nil, nil, err
	}

	return ch, cancel, nil
}

// deliverLast hands the events of ch to t until ctx ends (false) or the
// watch reports an Errored event (true).
func deliverLast(ctx context.Context, ch <-chan state.Event, t *measure.ChainTracker) (errored bool) {
	for {
		select {
		case <-ctx.Done():
			return false
		case ev := <-ch:
			switch ev.Type {
			case state.Created, state.Updated:
				s := res.SpecOf(ev.Resource)
				t.Set(s.Index, s.Value)
			case state.Destroyed:
				t.Remove(res.SpecOf(ev.Resource).Index)
			case state.Bootstrapped, state.Noop:
				t.Check()
			case state.Errored:
				return true
			}
		}
	}
}

// Chain runs W3 (transform) or W4 (qtransform) once on a fresh state and runtime.
func Chain(ctx context.Context, p params.ChainParams, o runner.Options, r *runner.Report) error {
	st, err := NewState(o, r)
	if err != nil {
		return err
	}

	return ChainOn(ctx, st, p, r)
}

// ChainOn runs W3 (transform) or W4 (qtransform) once on st with a fresh
// runtime: Chain on the in-memory state, E3 on an etcd state.
func ChainOn(ctx context.Context, st state.State, p params.ChainParams, r *runner.Report) error {
	r.Note("runtime", "runtime.New(st, zap.NewNop()), default options")

	rt, err := runtime.New(st, zap.NewNop())
	if err != nil {
		return err
	}

	if err = registerChain(rt, p); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()

	var (
		out       runner.ChainOutcome
		rewatches int
		tracker   = measure.NewChainTracker(p.N, params.Hops, p.UpdateValue+params.Hops)

		rtDone, wDone = make(chan struct{}), make(chan struct{})
		rtErr, wErr   error // read only after rtDone / wDone is closed
	)

	// The watch of the last kind is registered before anything is written:
	// a change it missed would never reach the tracker.
	follow, err := watchLast(ctx, st, tracker, &rewatches)
	if err != nil {
		return fmt.Errorf("watch kind E: %w", err)
	}

	go func() { rtErr = rt.Run(ctx); close(rtDone) }()
	go func() { wErr = follow(); close(wDone) }()

	time.Sleep(p.Warmup)

	wait := func(reached <-chan time.Time) (time.Time, error) {
		var err error

		select {
		case t := <-reached:
			return t, nil
		case <-rtDone:
			err = fmt.Errorf("runtime exited: %v", rtErr)
		case <-wDone:
			err = fmt.Errorf("watcher exited: %v", wErr)
		case <-ctx.Done():
		}

		if ctx.Err() != nil { // the runtime and the watcher also stop on the deadline
			err = fmt.Errorf("timeout after %v: %w", p.Timeout, ctx.Err())
		}

		return time.Time{}, err
	}

	finish := func(err error) error {
		cancel()
		<-wDone

		if wErr != nil && err == nil {
			err = wErr
		}

		out.Rewatches = rewatches
		runner.ReportChain(r, p, out)

		return err
	}

	// Create phase.
	start := time.Now()

	for i := range p.N {
		if err = st.Create(ctx, res.NewA(i, 0)); err != nil {
			return finish(err)
		}
	}

	out.CreateIssued = time.Since(start)

	t, err := wait(tracker.Reached[0])
	if err != nil {
		return finish(err)
	}

	out.CreateDone = t.Sub(start)

	// Update phase.
	start = time.Now()

	for i := range p.N {
		if _, err = st.UpdateWithConflicts(ctx, res.Pointer(params.AType, i), func(r resource.Resource) error {
			a, ok := r.(*res.A)
			if !ok {
				return fmt.Errorf("unexpected type %T", r)
			}

			a.TypedSpec().Value = p.UpdateValue

			return nil
		}); err != nil {
			return finish(err)
		}
	}

	out.UpdateIssued = time.Since(start)

	if t, err = wait(tracker.Reached[1]); err != nil {
		return finish(err)
	}

	out.UpdateDone = t.Sub(start)

	// E1-style check: Run returns soon after its context is canceled.
	cancel()

	select {
	case <-rtDone:
		if rtErr != nil && !errors.Is(rtErr, context.Canceled) {
			return finish(fmt.Errorf("runtime: %w", rtErr))
		}
	case <-time.After(stopTimeout):
		r.Note("stop", fmt.Sprintf("Run did not return within %v of its context's cancel", stopTimeout))
	}

	return finish(nil)
}

// stopTimeout bounds the wait for Run to return after the measurement.
const stopTimeout = 5 * time.Second
