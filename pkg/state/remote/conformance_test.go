package remote_test

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
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// conformanceHistory is the served state's history: small, so that the
// conformance workloads overflow it (bookmarks past it, coalescing of
// stalled watchers over the wire).
const conformanceHistory = 128

// TestN1_StateConformanceOverTCP runs the state contract (S1–S14) against
// a client of an inmem state served over loopback TCP (rule N1).
func TestN1_StateConformanceOverTCP(t *testing.T) { stateConformance(t, "tcp") }

// TestN1_StateConformanceOverUnixSocket is the same over a unix socket.
func TestN1_StateConformanceOverUnixSocket(t *testing.T) { stateConformance(t, "unix") }

func stateConformance(t *testing.T, network string) {
	var stop func() // ends the previous test's server and connection
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	suite.Run(t, &conformance.StateSuite{
		NewState: func() state.State {
			if stop != nil {
				stop()
			}
			lis := listen(t, network)
			d := serveUntil(lis, inmem.NewState(inmem.WithHistoryCapacity(conformanceHistory)))
			conn := dial(t, d.Addr)
			st, err := remote.NewClient(conn, registry())
			require.NoError(t, err)
			stop = func() {
				_ = conn.Close()
				d.stop()
			}
			return st
		},
		HistoryCapacity: conformanceHistory,
	})
}

// runtimeBackoff is the initial restart and item backoff of the Runtimes
// of the real-time RuntimeSuite (see the etcd state's test of the same).
const runtimeBackoff = 50 * time.Millisecond

// TestN1_RuntimeConformanceOverTCP runs the Runtime rules (C, Q, E) with
// the Runtime on a client of an inmem state served over loopback TCP.
func TestN1_RuntimeConformanceOverTCP(t *testing.T) { runtimeConformance(t, "tcp") }

// TestN1_RuntimeConformanceOverUnixSocket is the same over a unix socket.
func TestN1_RuntimeConformanceOverUnixSocket(t *testing.T) { runtimeConformance(t, "unix") }

func runtimeConformance(t *testing.T, network string) {
	suite.Run(t, &conformance.RuntimeSuite{
		NewEngine: func(t *testing.T) (controller.Engine, state.State) {
			st, _ := served(t, network)
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
