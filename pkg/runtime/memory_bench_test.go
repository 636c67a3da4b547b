package runtime_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/benchmem"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// drainController declares one input and does nothing on its wake-ups:
// the Runtime watches the kind for it.
type drainController struct{ in string }

func (c *drainController) Name() string { return "drain" }
func (c *drainController) Inputs() []controller.Input {
	return []controller.Input{in(c.in, controller.InputWeak)}
}
func (c *drainController) Outputs() []controller.Output { return nil }
func (c *drainController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
	}
}

// BenchmarkMemory is the memory a kind that a controller declares as its
// input costs per resource (see internal/benchmem), with the state's:
// watched (the Runtime remembers what it routed, rule Q4 and exact
// re-lists) and cached (WithCachedResource: the cache is that memory).
// N resources are created, then each updated once, while the Runtime runs;
// retained is measured once the Runtime is idle, with the Runtime running.
// The state alone is inmem's BenchmarkMemory.
func BenchmarkMemory(b *testing.B) {
	for _, cached := range []bool{false, true} {
		name := "watched"
		if cached {
			name = "cached"
		}
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/N=%d", name, n), func(b *testing.B) {
				var res benchmem.Result
				for b.Loop() {
					res = memoryRun(b, n, cached)
				}
				res.Report(b, n)
			})
		}
	}
}

func memoryRun(b *testing.B, n int, cached bool) benchmem.Result {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := benchmem.Start()
	st := inmem.NewState() // make bench turns the mutation detector off
	var opts []runtime.Option
	if cached {
		opts = append(opts, runtime.WithCachedResource(testNS, typeA))
	}
	rt, err := runtime.New(st, zap.NewNop(), opts...)
	require.NoError(b, err)
	require.NoError(b, rt.RegisterController(&drainController{in: typeA}))
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(b, <-done)
	}()
	for i := range n {
		require.NoError(b, st.Create(ctx, newPair(typeA, strconv.Itoa(i), 0)))
	}
	for i := range n {
		r := newPair(typeA, strconv.Itoa(i), 1)
		r.Metadata().SetVersion(r.Metadata().Version().Next())
		require.NoError(b, st.Update(ctx, r))
	}
	runtimetest.Settle(b, rt)
	res := m.Stop()
	goruntime.KeepAlive(st)
	return res
}
