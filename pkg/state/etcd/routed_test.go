package etcd_test

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
	"github.com/resgraph/resgraph/pkg/state/etcd"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/routed"
)

// The conformance suites over a routed state whose namespaces are split
// between an in-memory state and etcd (rule P1).

// TestRoutedStateConformance runs S1–S14 over a routed state that keeps
// the tests' namespaces with an odd first digit in etcd and the others in
// memory.
func TestRoutedStateConformance(t *testing.T) {
	suite.Run(t, &conformance.StateSuite{
		NewState: func() state.State {
			shared := newState(t, etcd.WithHistoryCapacity(conformanceHistory), etcd.WithLogger(zaptest.NewLogger(t)))
			mem := inmem.NewState(inmem.WithHistoryCapacity(conformanceHistory))
			var rules []routed.Rule
			for d := 1; d <= 9; d++ {
				backend := shared
				if d%2 == 0 {
					backend = mem
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

// TestRoutedCrossBackendConformance runs the cross-backend checks (P1)
// with one namespace in memory and one in etcd.
func TestRoutedCrossBackendConformance(t *testing.T) {
	suite.Run(t, &conformance.CrossBackendSuite{NewState: func(t *testing.T) (st, a, b state.State) {
		a, b = inmem.NewState(), newState(t)
		st, err := routed.New([]routed.Rule{routed.Exact(conformance.CrossNamespaceA, a), routed.Exact(conformance.CrossNamespaceB, b)})
		require.NoError(t, err)
		return st, a, b
	}})
}

// TestRoutedRuntimeConformance runs the Runtime rules over a routed state
// split between memory and etcd, in real time (network I/O cannot run in
// a synctest bubble): the mapped, sum and elsewhere namespaces live in
// etcd, the others (the default one, dyn*, weak, other, hostile-*) in
// memory, so that the suite's controllers read and write across both.
func TestRoutedRuntimeConformance(t *testing.T) {
	suite.Run(t, &conformance.RuntimeSuite{
		NewEngine: func(t *testing.T) (controller.Engine, state.State) {
			shared := newState(t, etcd.WithLogger(zaptest.NewLogger(t)))
			st, err := routed.New([]routed.Rule{
				routed.Exact(conformance.MappedNamespace, shared),
				routed.Exact(conformance.SumNamespace, shared),
				routed.Exact("elsewhere", shared),
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
