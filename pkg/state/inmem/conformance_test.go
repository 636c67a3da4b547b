package inmem_test

import (
	"testing"

	"github.com/stretchr/testify/suite"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// conformanceHistory is small, so that the conformance workloads overflow
// it: bookmarks past the history and coalescing of stalled watchers are
// then exercised.
const conformanceHistory = 64

func TestStateConformance(t *testing.T) {
	suite.Run(t, &conformance.StateSuite{
		NewState:        func() state.State { return inmem.NewState(inmem.WithHistoryCapacity(conformanceHistory)) },
		HistoryCapacity: conformanceHistory,
	})
}

// TestStateConformanceDefaultCapacity runs the suite on a state with the
// default history; the bookmark-overrun and coalescing bounds are not
// checked then (the workloads are smaller than the default history).
func TestStateConformanceDefaultCapacity(t *testing.T) {
	suite.Run(t, &conformance.StateSuite{
		NewState: func() state.State { return inmem.NewState() },
	})
}

// TestWrapCoreConformance wraps a full State as a plain CoreState: WrapCore
// builds the State helpers over any core.
func TestWrapCoreConformance(t *testing.T) {
	suite.Run(t, &conformance.StateSuite{
		NewState: func() state.State {
			return state.WrapCore(inmem.NewState(inmem.WithHistoryCapacity(conformanceHistory)))
		},
		HistoryCapacity: conformanceHistory,
	})
}

// TestStateConformanceSharedState runs the suite on one State for every
// test: each test works in its own namespace.
func TestStateConformanceSharedState(t *testing.T) {
	suite.Run(t, &conformance.StateSuite{
		State:           inmem.NewState(inmem.WithHistoryCapacity(conformanceHistory)),
		HistoryCapacity: conformanceHistory,
	})
}
