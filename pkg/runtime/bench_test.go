package runtime_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// chainTypes is the W3/W4 chain A→B→C→D→E.
var chainTypes = []resource.Type{typeA, typeB, typeC, typeD, typeE}

// chainController is the hand-written W3 Controller: on every event it
// lists its inputs and outputs and writes each output whose value is not
// its input's value + 1.
type chainController struct {
	in, out resource.Type
}

func (c *chainController) Name() string { return "chain-" + c.in[:1] }
func (c *chainController) Inputs() []controller.Input {
	return []controller.Input{in(c.in, controller.InputWeak)}
}

func (c *chainController) Outputs() []controller.Output {
	return []controller.Output{out(c.out, controller.OutputExclusive)}
}

func (c *chainController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		inputs, err := r.List(ctx, kind(c.in))
		if err != nil {
			return err
		}
		outputs, err := r.List(ctx, kind(c.out))
		if err != nil {
			return err
		}
		byID := make(map[resource.ID]*Pair, len(outputs.Items))
		for _, o := range outputs.Items {
			byID[o.Metadata().ID()] = o.(*Pair)
		}
		for _, item := range inputs.Items {
			want := item.(*Pair).TypedSpec().A + 1
			id := item.Metadata().ID()
			o, ok := byID[id]
			switch {
			case !ok:
				err = r.Create(ctx, newPair(c.out, id, want))
			case o.TypedSpec().A != want:
				o.TypedSpec().A = want
				err = r.Update(ctx, o)
			}
			if err != nil {
				return err
			}
		}
	}
}

// chainQController is the hand-written W4 QController: it reconciles one
// output from its input.
type chainQController struct {
	in, out     resource.Type
	concurrency uint
}

func (c *chainQController) Name() string { return "qchain-" + c.in[:1] }
func (c *chainQController) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs:      []controller.Input{in(c.in, controller.InputQPrimary)},
		Outputs:     []controller.Output{out(c.out, controller.OutputExclusive)},
		Concurrency: optional.Some(c.concurrency),
	}
}

func (c *chainQController) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
	item, err := r.Get(ctx, p)
	if err != nil {
		if state.IsNotFoundError(err) {
			return nil
		}
		return err
	}
	want := item.(*Pair).TypedSpec().A + 1
	return r.Modify(ctx, newPair(c.out, p.ID(), 0), func(o resource.Resource) error {
		o.(*Pair).TypedSpec().A = want
		return nil
	})
}

func (c *chainQController) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// finalWatcher waits until n resources of the last chain type hold a value.
type finalWatcher struct {
	reached chan struct{}
	target  chan int
}

func startFinalWatcher(ctx context.Context, b *testing.B, st state.State, n int) *finalWatcher {
	ch := make(chan []state.Event, 64)
	require.NoError(b, st.WatchKindAggregated(ctx, kind(typeE), ch))
	fw := &finalWatcher{reached: make(chan struct{}), target: make(chan int)}
	go func() {
		values := map[resource.ID]int{}
		target, count := -1, 0
		for {
			select {
			case <-ctx.Done():
				return
			case t := <-fw.target:
				target, count = t, 0
				for _, v := range values {
					if v == target {
						count++
					}
				}
			case batch := <-ch:
				for _, ev := range batch {
					if ev.Type != state.Created && ev.Type != state.Updated {
						continue
					}
					id := ev.Resource.Metadata().ID()
					v := ev.Resource.(*Pair).TypedSpec().A
					if values[id] != target && v == target {
						count++
					} else if values[id] == target && v != target {
						count--
					}
					values[id] = v
				}
			}
			if target >= 0 && count == n {
				target = -1
				select {
				case fw.reached <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return fw
}

// runChain runs W3 or W4 once: the time to create n inputs until every
// final output holds its value, then the same for an update of every input.
func runChain(b *testing.B, n int, register func(rt *runtime.Runtime), opts ...runtime.Option) (create, update time.Duration) {
	st := inmem.NewState()
	rt, err := runtime.New(st, zap.NewNop(), opts...)
	require.NoError(b, err)
	register(rt)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(b, <-done)
	}()
	fw := startFinalWatcher(ctx, b, st, n)

	fw.target <- 4
	start := time.Now()
	for i := range n {
		require.NoError(b, st.Create(ctx, newPair(typeA, strconv.Itoa(i), 0)))
	}
	<-fw.reached
	create = time.Since(start)

	list, err := st.List(ctx, kind(typeA))
	require.NoError(b, err)
	fw.target <- 5
	start = time.Now()
	for _, r := range list.Items {
		r.(*Pair).TypedSpec().A = 1
		require.NoError(b, st.Update(ctx, r))
	}
	<-fw.reached
	update = time.Since(start)
	require.Empty(b, rt.Observe().HotLoops(), "a chain is no hot loop")
	return create, update
}

func benchChain(b *testing.B, register func(rt *runtime.Runtime), opts ...runtime.Option) {
	benchChainN(b, []int{1000, 10000}, register, opts...)
}

func benchChainN(b *testing.B, sizes []int, register func(rt *runtime.Runtime), opts ...runtime.Option) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var create, update time.Duration
			iters := 0
			for b.Loop() {
				c, u := runChain(b, n, register, opts...)
				create += c
				update += u
				iters++
			}
			b.ReportMetric(float64(n*iters)/create.Seconds(), "create-res/s")
			b.ReportMetric(float64(n*iters)/update.Seconds(), "update-res/s")
		})
	}
}

// BenchmarkW3 is workload W3 with hand-written Controllers.
func BenchmarkW3(b *testing.B) {
	benchChain(b, func(rt *runtime.Runtime) {
		for i := range 4 {
			require.NoError(b, rt.RegisterController(&chainController{in: chainTypes[i], out: chainTypes[i+1]}))
		}
	})
}

// BenchmarkW4 is workload W4 with hand-written QControllers.
func BenchmarkW4(b *testing.B) {
	for _, conc := range []uint{1, 4} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			benchChain(b, func(rt *runtime.Runtime) {
				for i := range 4 {
					require.NoError(b, rt.RegisterQController(&chainQController{in: chainTypes[i], out: chainTypes[i+1], concurrency: conc}))
				}
			})
		})
	}
}

// BenchmarkTraceOverhead is W3 and W4 (concurrency 1) at N = 10k with the
// causal trace on (the default) and off (WithTrace(0)), the two
// interleaved in one run (-count runs each sub-benchmark in turn): the
// trace's cost is the ratio of their throughputs.
func BenchmarkTraceOverhead(b *testing.B) {
	workloads := []struct {
		name     string
		register func(b *testing.B) func(rt *runtime.Runtime)
	}{
		{"W3", func(b *testing.B) func(rt *runtime.Runtime) {
			return func(rt *runtime.Runtime) {
				for i := range 4 {
					require.NoError(b, rt.RegisterController(&chainController{in: chainTypes[i], out: chainTypes[i+1]}))
				}
			}
		}},
		{"W4", func(b *testing.B) func(rt *runtime.Runtime) {
			return func(rt *runtime.Runtime) {
				for i := range 4 {
					require.NoError(b, rt.RegisterQController(&chainQController{in: chainTypes[i], out: chainTypes[i+1], concurrency: 1}))
				}
			}
		}},
	}
	for _, w := range workloads {
		b.Run(w.name, func(b *testing.B) {
			for _, on := range []bool{true, false} {
				name, opts := "trace=on", []runtime.Option(nil)
				if !on {
					name, opts = "trace=off", []runtime.Option{runtime.WithTrace(0)}
				}
				b.Run(name, func(b *testing.B) { benchChainN(b, []int{10000}, w.register(b), opts...) })
			}
		})
	}
}
