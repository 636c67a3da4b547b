package runtime_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// newConformanceEngine returns a RuntimeSuite factory for a Runtime with
// the given options over a fresh in-memory state.
func newConformanceEngine(opts ...runtime.Option) func(t *testing.T) (controller.Engine, state.State) {
	return func(t *testing.T) (controller.Engine, state.State) {
		st := inmem.NewState()
		rt, err := runtime.New(st, zaptest.NewLogger(t), opts...)
		require.NoError(t, err)
		return rt, st
	}
}

// newConformanceEngineOver is newConformanceEngine over a given State.
func newConformanceEngineOver(opts ...runtime.Option) func(t *testing.T, st state.State) controller.Engine {
	return func(t *testing.T, st state.State) controller.Engine {
		rt, err := runtime.New(st, zaptest.NewLogger(t), opts...)
		require.NoError(t, err)
		return rt
	}
}

// TestRuntimeConformance runs the C, Q and E rules of the contract against
// the Runtime with default options (but a short restart backoff).
func TestRuntimeConformance(t *testing.T) {
	opts := []runtime.Option{runtime.WithRestartBackoff(10*time.Millisecond, 100*time.Millisecond)}
	suite.Run(t, &conformance.RuntimeSuite{
		NewEngine:     newConformanceEngine(opts...),
		NewEngineOver: newConformanceEngineOver(opts...),
	})
}

// TestRuntimeConformanceCachedNoMetrics runs the rules again with every
// example kind the suite reads served from the Runtime's cache and metrics
// off, so that both read paths and both metric settings obey the contract.
func TestRuntimeConformanceCachedNoMetrics(t *testing.T) {
	var opts []runtime.Option
	for _, ns := range []resource.Namespace{conformance.DefaultNamespace, conformance.SumNamespace, conformance.MappedNamespace, "elsewhere", "weak", "other", "dyn", "dyn1", "dyn2", "hostile-watch", "hostile-calls"} {
		for _, typ := range []resource.Type{conformance.IntResourceType, conformance.StrResourceType} {
			opts = append(opts, runtime.WithCachedResource(ns, typ))
		}
	}
	opts = append(opts,
		runtime.WithRestartBackoff(10*time.Millisecond, 100*time.Millisecond),
		runtime.WithQueueBackoff(10*time.Millisecond, 100*time.Millisecond),
		runtime.WithMetrics(false))
	suite.Run(t, &conformance.RuntimeSuite{NewEngine: newConformanceEngine(opts...), NewEngineOver: newConformanceEngineOver(opts...)})
}

// TestConformanceRefusalsAreAccessDenied: the errors the conformance probe
// gets for accesses outside its scope are told apart by
// controller.IsAccessDeniedError; its allowed accesses' errors are not.
func TestConformanceRefusalsAreAccessDenied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		rt, err := runtime.New(st, zaptest.NewLogger(t))
		require.NoError(t, err)
		require.NoError(t, st.Create(t.Context(), conformance.NewIntResource("elsewhere", "x", 1)))

		undeclared := resource.NewPointer(conformance.DefaultNamespace, conformance.UndeclaredResourceType, "u")
		probe := &conformance.AccessProbeController{
			ControllerName: "probe",
			ControllerInputs: []controller.Input{{
				Namespace: conformance.DefaultNamespace, Type: conformance.IntResourceType, Kind: controller.InputWeak,
			}},
			ControllerOutputs: []controller.Output{{Type: conformance.StrResourceType, Kind: controller.OutputExclusive}},
			Accesses: []conformance.Access{
				{Name: "read undeclared", Do: func(ctx context.Context, rw controller.ReaderWriter) error {
					_, err := rw.Get(ctx, resource.NewPointer("elsewhere", conformance.IntResourceType, "x"))
					return err
				}},
				{Name: "write undeclared", Do: func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.Create(ctx, conformance.NewUndeclaredResource(conformance.DefaultNamespace, "u", 1))
				}},
				{Name: "finalizer on undeclared", Do: func(ctx context.Context, rw controller.ReaderWriter) error {
					return rw.AddFinalizer(ctx, undeclared, "f")
				}},
				{Name: "read missing input", Do: func(ctx context.Context, rw controller.ReaderWriter) error {
					_, err := rw.Get(ctx, resource.NewPointer(conformance.DefaultNamespace, conformance.IntResourceType, "missing"))
					return err
				}},
			},
		}
		require.NoError(t, rt.RegisterController(probe))

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		require.Eventually(t, func() bool { _, ok := probe.Results(); return ok }, 10*time.Second, 5*time.Millisecond)
		cancel()
		require.NoError(t, <-done)

		results, _ := probe.Results()
		require.Len(t, results, 4)
		for _, r := range results[:3] {
			assert.True(t, controller.IsAccessDeniedError(r.Err), "%s: %v", r.Name, r.Err)
			assert.True(t, controller.IsAccessDeniedError(r.Err), "%s: %v", r.Name, r.Err)
		}
		assert.True(t, state.IsNotFoundError(results[3].Err), "read missing input: %v", results[3].Err)
		assert.False(t, controller.IsAccessDeniedError(results[3].Err), "read missing input: %v", results[3].Err)
		assert.False(t, controller.IsAccessDeniedError(results[3].Err), "read missing input: %v", results[3].Err)
	})
}

// TestRuntimeConformanceRealTime runs the rules on the wall clock over the
// in-memory state, as a user running the suite's real-time mode over their
// own state would.
func TestRuntimeConformanceRealTime(t *testing.T) {
	const backoff = 20 * time.Millisecond
	opts := []runtime.Option{
		runtime.WithRestartBackoff(backoff, 16*backoff),
		runtime.WithQueueBackoff(backoff, 16*backoff),
	}
	suite.Run(t, &conformance.RuntimeSuite{
		NewEngine:     newConformanceEngine(opts...),
		NewEngineOver: newConformanceEngineOver(opts...),
		RealTime: &conformance.RealTime{
			WaitIdle:   runtimetest.RealTimeWaitIdle,
			Backoff:    backoff,
			MaxBackoff: 16 * backoff,
		},
	})
}
