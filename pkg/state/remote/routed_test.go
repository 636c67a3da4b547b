package remote_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/routed"
)

// The conformance suites over a routed state whose namespaces are split
// between a local in-memory state and a remote client (rule P1 with the
// remote state as a backend).

// TestP1_RoutedStateConformanceOverTheClient runs S1–S14 over a routed
// state that serves the tests' namespaces with an odd first digit from a
// client (over a unix socket) and the others from memory.
func TestP1_RoutedStateConformanceOverTheClient(t *testing.T) {
	suite.Run(t, &conformance.StateSuite{
		NewState: func() state.State {
			remote, _ := served(t, "unix", inmem.WithHistoryCapacity(conformanceHistory))
			local := inmem.NewState(inmem.WithHistoryCapacity(conformanceHistory))
			var rules []routed.Rule
			for d := 1; d <= 9; d++ {
				backend := remote
				if d%2 == 0 {
					backend = local
				}
				rules = append(rules, routed.Prefix(fmt.Sprintf("conformance-%d", d), backend))
			}
			st, err := routed.New(rules)
			require.NoError(t, err)
			return st
		},
		HistoryCapacity: conformanceHistory,
	})
}

// TestP1_RoutedCrossBackendConformanceOverTheClient runs the
// cross-backend checks with one namespace in memory and one behind a
// client.
func TestP1_RoutedCrossBackendConformanceOverTheClient(t *testing.T) {
	suite.Run(t, &conformance.CrossBackendSuite{NewState: func(t *testing.T) (st, a, b state.State) {
		a = inmem.NewState()
		b, _ = served(t, "tcp")
		st, err := routed.New([]routed.Rule{routed.Exact(conformance.CrossNamespaceA, a), routed.Exact(conformance.CrossNamespaceB, b)})
		require.NoError(t, err)
		return st, a, b
	}})
}

// TestP1_RoutedRuntimeConformanceOverTheClient runs the Runtime rules over
// a routed state split between memory and a client, in real time: the
// mapped, sum and elsewhere namespaces are behind the client, the others
// in memory.
func TestP1_RoutedRuntimeConformanceOverTheClient(t *testing.T) {
	suite.Run(t, &conformance.RuntimeSuite{
		NewEngine: func(t *testing.T) (controller.Engine, state.State) {
			remote, _ := served(t, "unix")
			st, err := routed.New([]routed.Rule{
				routed.Exact(conformance.MappedNamespace, remote),
				routed.Exact(conformance.SumNamespace, remote),
				routed.Exact("elsewhere", remote),
			}, routed.WithDefault(inmem.NewState()))
			require.NoError(t, err)
			rt, err := runtime.New(st, zaptest.NewLogger(t),
				runtime.WithRestartBackoff(runtimeBackoff, 16*runtimeBackoff),
				runtime.WithQueueBackoff(runtimeBackoff, 16*runtimeBackoff))
			require.NoError(t, err)
			return rt, st
		},
		RealTime: &conformance.RealTime{
			WaitIdle:   runtimetest.RealTimeWaitIdle,
			Backoff:    runtimeBackoff,
			MaxBackoff: 16 * runtimeBackoff,
		},
	})
}
