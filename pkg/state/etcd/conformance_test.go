package etcd_test

import (
	"testing"

	"github.com/stretchr/testify/suite"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// conformanceHistory is small, so that the conformance workloads overflow
// it: bookmarks past the history and coalescing of stalled watchers are
// then exercised.
const conformanceHistory = 64

// TestStateConformance runs the state contract (S1–S14) against the etcd
// state on a real etcd server.
func TestStateConformance(t *testing.T) {
	suite.Run(t, &conformance.StateSuite{
		NewState: func() state.State {
			return newState(t, etcd.WithHistoryCapacity(conformanceHistory), etcd.WithLogger(zaptest.NewLogger(t)))
		},
		HistoryCapacity: conformanceHistory,
	})
}
