package routed_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/routed"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// conformanceHistory is small, so that the suite's workloads overflow it.
const conformanceHistory = 64

// splitConformance returns the rules that split the StateSuite's
// namespaces ("conformance-<n>") between a (odd first digit) and b (even
// first digit).
func splitConformance(a, b state.State) []routed.Rule {
	var rules []routed.Rule
	for d := 1; d <= 9; d++ {
		backend := a
		if d%2 == 0 {
			backend = b
		}
		rules = append(rules, routed.Prefix(fmt.Sprintf("conformance-%d", d), backend))
	}
	return rules
}

// TestStateConformance runs the state contract (S1–S14) over a routed
// state whose tests' namespaces are split between two in-memory states.
func TestStateConformance(t *testing.T) {
	suite.Run(t, &conformance.StateSuite{
		NewState: func() state.State {
			a := inmem.NewState(inmem.WithHistoryCapacity(conformanceHistory))
			b := inmem.NewState(inmem.WithHistoryCapacity(conformanceHistory))
			st, err := routed.New(splitConformance(a, b))
			require.NoError(t, err)
			return st
		},
		HistoryCapacity: conformanceHistory,
	})
}

// TestCrossBackendConformance runs the cross-backend checks (P1) over two
// in-memory states.
func TestCrossBackendConformance(t *testing.T) {
	suite.Run(t, &conformance.CrossBackendSuite{NewState: func(t *testing.T) (st, a, b state.State) {
		a, b = inmem.NewState(), inmem.NewState()
		st, err := routed.New([]routed.Rule{routed.Exact(conformance.CrossNamespaceA, a), routed.Exact(conformance.CrossNamespaceB, b)})
		require.NoError(t, err)
		return st, a, b
	}})
}

// runtimeNamespaces are the namespaces the RuntimeSuite uses.
var runtimeNamespaces = []resource.Namespace{
	conformance.DefaultNamespace, conformance.SumNamespace, conformance.MappedNamespace,
	"elsewhere", "weak", "other", "dyn", "dyn1", "dyn2", "hostile-watch", "hostile-calls",
}

// splitRuntime routes the RuntimeSuite's namespaces to a and b, each
// controller's inputs and outputs across both: the default namespace and
// "elsewhere" (TestP1_ControllerReadsItsOwnWritesAcrossNamespaces) apart.
func splitRuntime(a, b state.State) (*routed.State, error) {
	return routed.New([]routed.Rule{
		routed.Exact(conformance.DefaultNamespace, a),
		routed.Exact(conformance.SumNamespace, b),
		routed.Exact(conformance.MappedNamespace, a),
		routed.Exact("weak", a),
		routed.Prefix("dyn", a),
		routed.Prefix("hostile-", a),
	}, routed.WithDefault(b), routed.WithNamespaces(runtimeNamespaces...))
}

// newRoutedEngine returns a RuntimeSuite factory for a Runtime with opts
// over a routed state split between two in-memory states.
func newRoutedEngine(opts ...runtime.Option) func(t *testing.T) (controller.Engine, state.State) {
	return func(t *testing.T) (controller.Engine, state.State) {
		st, err := splitRuntime(inmem.NewState(), inmem.NewState())
		require.NoError(t, err)
		rt, err := runtime.New(st, zaptest.NewLogger(t), opts...)
		require.NoError(t, err)
		return rt, st
	}
}

// newRoutedEngineOver is the factory of NewEngineOver.
func newRoutedEngineOver(opts ...runtime.Option) func(t *testing.T, st state.State) controller.Engine {
	return func(t *testing.T, st state.State) controller.Engine {
		rt, err := runtime.New(st, zaptest.NewLogger(t), opts...)
		require.NoError(t, err)
		return rt
	}
}

// TestRuntimeConformance runs the controller and Runtime rules over a routed state split
// between two in-memory states, with uncached and with cached reads.
func TestRuntimeConformance(t *testing.T) {
	backoff := []runtime.Option{
		runtime.WithRestartBackoff(10*time.Millisecond, 100*time.Millisecond),
		runtime.WithQueueBackoff(10*time.Millisecond, 100*time.Millisecond),
	}
	t.Run("uncached", func(t *testing.T) {
		suite.Run(t, &conformance.RuntimeSuite{NewEngine: newRoutedEngine(backoff...), NewEngineOver: newRoutedEngineOver(backoff...)})
	})
	t.Run("cached", func(t *testing.T) {
		opts := append(cachedKinds(), backoff...)
		suite.Run(t, &conformance.RuntimeSuite{NewEngine: newRoutedEngine(opts...), NewEngineOver: newRoutedEngineOver(opts...)})
	})
}

// cachedKinds caches every example kind the RuntimeSuite reads.
func cachedKinds() []runtime.Option {
	var opts []runtime.Option
	for _, ns := range runtimeNamespaces {
		for _, typ := range []resource.Type{conformance.IntResourceType, conformance.StrResourceType} {
			opts = append(opts, runtime.WithCachedResource(ns, typ))
		}
	}
	return opts
}
