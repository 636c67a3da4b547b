package boltdb_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
	"github.com/resgraph/resgraph/pkg/state/routed"
)

// The conformance suites over a routed state whose namespaces are split
// between an in-memory state and a bbolt file (rule P1).

// openFast opens a bbolt state in dir (a memory file system when there is
// one: the suites check behavior, not the disk) and closes and removes it
// at the end of t.
func openFast(t *testing.T, dir string, opts ...boltdb.Option) *boltdb.State {
	t.Helper()
	f, err := os.CreateTemp(dir, "*.db")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	st, err := boltdb.Open(f.Name(), registry(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, st.Close())
		assert.NoError(t, os.Remove(st.Path()))
	})
	return st
}

// TestRoutedStateConformance runs S1–S14 over a routed state that keeps
// the tests' namespaces with an odd first digit in a bbolt file and the
// others in memory.
func TestRoutedStateConformance(t *testing.T) {
	dir := fastDir(t)
	suite.Run(t, &conformance.StateSuite{
		NewState: func() state.State {
			mem := inmem.NewState(inmem.WithHistoryCapacity(conformanceHistory))
			// The suite's NewState has no t of its own: the file of each
			// test lives until the end of the suite's run.
			file := openFast(t, dir, boltdb.WithStateOptions(inmem.WithHistoryCapacity(conformanceHistory)))
			var rules []routed.Rule
			for d := 1; d <= 9; d++ {
				backend := state.State(file)
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
// with one namespace in memory and one in a bbolt file.
func TestRoutedCrossBackendConformance(t *testing.T) {
	suite.Run(t, &conformance.CrossBackendSuite{NewState: func(t *testing.T) (st, a, b state.State) {
		a, b = inmem.NewState(), openFast(t, fastDir(t))
		st, err := routed.New([]routed.Rule{routed.Exact(conformance.CrossNamespaceA, a), routed.Exact(conformance.CrossNamespaceB, b)})
		require.NoError(t, err)
		return st, a, b
	}})
}

// TestRoutedRuntimeConformance runs the Runtime rules over a routed state
// split between memory and a bbolt file: every controller of the suite
// has inputs or outputs on both sides.
func TestRoutedRuntimeConformance(t *testing.T) {
	opts := []runtime.Option{
		runtime.WithRestartBackoff(10*time.Millisecond, 100*time.Millisecond),
		runtime.WithQueueBackoff(10*time.Millisecond, 100*time.Millisecond),
	}
	newState := func(t *testing.T) state.State {
		file := openFast(t, fastDir(t))
		st, err := routed.New([]routed.Rule{
			routed.Exact(conformance.DefaultNamespace, file),
			routed.Exact(conformance.MappedNamespace, file),
			routed.Exact("weak", file),
			routed.Prefix("dyn", file),
			routed.Prefix("hostile-", file),
		}, routed.WithDefault(inmem.NewState()))
		require.NoError(t, err)
		return st
	}
	suite.Run(t, &conformance.RuntimeSuite{
		NewEngine: func(t *testing.T) (controller.Engine, state.State) {
			st := newState(t)
			rt, err := runtime.New(st, zaptest.NewLogger(t), opts...)
			require.NoError(t, err)
			return rt, st
		},
		NewEngineOver: func(t *testing.T, st state.State) controller.Engine {
			rt, err := runtime.New(st, zaptest.NewLogger(t), opts...)
			require.NoError(t, err)
			return rt
		},
	})
}
