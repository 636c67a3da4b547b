package runtime_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// modifyOnEvery returns a Controller that, on every pass, sets the spec of
// the output typeB/"1" to A=7 with Modify: the first pass creates it, every
// later pass leaves it equal (a no-op write, rule S6).
func modifyOnEvery(name string) *funcController {
	return &funcController{
		name:    name,
		inputs:  []controller.Input{in(typeA, controller.InputWeak)},
		outputs: []controller.Output{out(typeB, controller.OutputExclusive)},
		run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-r.EventCh():
				}
				if err := r.Modify(ctx, newPair(typeB, "1", 0), func(res resource.Resource) error {
					res.(*Pair).TypedSpec().A = 7
					return nil
				}); err != nil {
					return err
				}
			}
		},
	}
}

// eventsOf returns the events of evs of type typ about the resource ref.
func eventsOf(evs []trace.Record, typ trace.Type, ref trace.Ref) []trace.Record {
	var out []trace.Record
	for _, e := range evs {
		if e.Type == typ && e.Resource.SameResource(ref) {
			out = append(out, e)
		}
	}
	return out
}

// TestTrace_NoOpWriteIsNoCommit: a Modify that leaves its output equal
// writes nothing (S6); the trace records it as a Noop event, never as a
// Commit, and explain lists only the versions that were committed — also
// after a restart over the kept state, where the controller's start pass
// rewrites its unchanged output.
func TestTrace_NoOpWriteIsNoCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		b1 := trace.Ref{Namespace: testNS, Type: typeB, ID: "1"}
		e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(modifyOnEvery("w")))
		mustCreate(t, st, newPair(typeA, "1", 1))
		synctest.Wait()
		changeInputTwice(t, st)
		cur, err := st.Get(t.Context(), ptr(typeB, "1"))
		require.NoError(t, err)
		require.EqualValues(t, 1, cur.Metadata().Version().Value(), "the later Modify calls wrote nothing")

		evs := e.Runtime.Observe().Trace().Snapshot()
		commits := eventsOf(evs, trace.Commit, b1)
		require.Len(t, commits, 1, "one commit: the create (%v)", commits)
		assert.EqualValues(t, 1, commits[0].Resource.Version)
		noops := eventsOf(evs, trace.Noop, b1)
		require.GreaterOrEqual(t, len(noops), 2, "each pass after the first left it equal")
		for _, n := range noops {
			assert.Equal(t, "w", n.Controller)
			assert.Equal(t, "modify", n.Op)
			assert.EqualValues(t, 1, n.Resource.Version, "the version it left as is")
		}

		x, err := e.Runtime.Observe().Explain(t.Context(), ptr(typeB, "1"))
		require.NoError(t, err)
		require.Len(t, x.Changes, 1, "only the version that exists: %+v", x.Changes)
		assert.EqualValues(t, 1, x.Changes[0].Version)
		require.NoError(t, e.Stop())

		// A restart over the same state: the start pass's Modify changes
		// nothing, and nothing says "modify" at restart time.
		time.Sleep(time.Minute)
		e2 := start(t, runtimetest.WithState(st), runtimetest.WithControllers(modifyOnEvery("w")))
		evs = e2.Runtime.Observe().Trace().Snapshot()
		assert.Empty(t, eventsOf(evs, trace.Commit, b1))
		assert.NotEmpty(t, eventsOf(evs, trace.Noop, b1), "the start pass's Modify")
		x, err = e2.Runtime.Observe().Explain(t.Context(), ptr(typeB, "1"))
		require.NoError(t, err)
		assert.Empty(t, x.Changes, "no change since the restart")
		assert.EqualValues(t, 1, x.Version)
	})
}

// TestTrace_ModifyThatChangesIsACommit: a Modify that changes its output
// is traced as a Commit of the version it wrote, pass after pass (the
// state may store the resource the function changed as is; its version is
// then the stored one's).
func TestTrace_ModifyThatChangesIsACommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		b1 := trace.Ref{Namespace: testNS, Type: typeB, ID: "1"}
		n := 0
		c := modifyOnEvery("w")
		c.run = func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-r.EventCh():
				}
				n++
				if err := r.Modify(ctx, newPair(typeB, "1", 0), func(res resource.Resource) error {
					res.(*Pair).TypedSpec().A = n
					return nil
				}); err != nil {
					return err
				}
			}
		}
		e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(c))
		mustCreate(t, st, newPair(typeA, "1", 1))
		synctest.Wait()
		changeInputTwice(t, st)
		cur, err := st.Get(t.Context(), ptr(typeB, "1"))
		require.NoError(t, err)
		last := cur.Metadata().Version().Value()
		require.GreaterOrEqual(t, last, uint64(3))

		evs := e.Runtime.Observe().Trace().Snapshot()
		assert.Empty(t, eventsOf(evs, trace.Noop, b1))
		commits := eventsOf(evs, trace.Commit, b1)
		require.Len(t, commits, int(last))
		for i, c := range commits {
			assert.EqualValues(t, i+1, c.Resource.Version)
			assert.Equal(t, "w", c.Controller)
		}
	})
}

// changeInputTwice sets input A/1 to 2, then to 3, a second apart, and
// lets the Runtime settle after each (in a synctest bubble).
func changeInputTwice(t *testing.T, st state.State) {
	t.Helper()
	for i := 2; i <= 3; i++ {
		time.Sleep(time.Second)
		_, err := st.UpdateWithConflicts(t.Context(), ptr(typeA, "1"), func(r resource.Resource) error {
			r.(*Pair).TypedSpec().A = i
			return nil
		})
		require.NoError(t, err)
		synctest.Wait()
	}
}
