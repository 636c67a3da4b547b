package etcd_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// conformanceHistory is small, so that the conformance workloads overflow
// it: bookmarks past the history and coalescing of stalled watchers are
// then exercised.
const conformanceHistory = 64

// TestStateConformance runs the state contract (S1–S15) against the etcd
// state on a real etcd server.
func TestStateConformance(t *testing.T) {
	suite.Run(t, &conformance.StateSuite{
		NewState: func() state.State {
			return newState(t, etcd.WithHistoryCapacity(conformanceHistory), etcd.WithLogger(zaptest.NewLogger(t)))
		},
		HistoryCapacity: conformanceHistory,
	})
}

// runtimeBackoff is the initial restart and item backoff of the Runtimes of
// the real-time RuntimeSuite: short, since it is spent for real, and long
// enough to be told apart from scheduling delays (see conformance.RealTime).
// Both backoffs may grow to 16 times it (800 ms): the checks of C6 and
// Q3 that a backoff grows compare the first and fifth gaps, which then
// differ by 750 ms, not 150 ms — more than a loaded machine's scheduling
// delay (with 4 times, they failed now and then at load 15–17).
const runtimeBackoff = 50 * time.Millisecond

// TestRuntimeConformance runs the Runtime rules (C, Q, E) with the Runtime
// on the etcd state, in the suite's real-time mode (network I/O cannot run
// in a synctest bubble), settling with the Runtime's exact quiescence check
// (the etcd state reports kind heads).
func TestRuntimeConformance(t *testing.T) {
	suite.Run(t, &conformance.RuntimeSuite{
		NewEngine: func(t *testing.T) (controller.Engine, state.State) {
			st := newState(t, etcd.WithLogger(zaptest.NewLogger(t)))
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
