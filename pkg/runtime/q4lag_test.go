package runtime_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/internal/lagwatch"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// lagging starts a Runtime, in the caller's synctest bubble, running
// lagwatch's Counter over an inmem state whose children's kind watch the
// test can hold (lagwatch.State).
func lagging(t *testing.T) (*runtimetest.Env, *lagwatch.State, *lagwatch.Counter) {
	st := lagwatch.New(inmem.NewState(), lagwatch.ChildKind)
	var c lagwatch.Counter
	e := start(t, runtimetest.WithState(st), runtimetest.WithQControllers(c.Controller()))
	return e, st, &c
}

// TestQ4Extended_RelabelBehindRouting (rule Q4, extended): a Reconcile
// reads a mapped input the Runtime has not routed yet (its kind watch
// lags); the input is then relabelled, and the lagging watch delivers
// both changes coalesced into one Created with the new label. The old
// owner is requeued all the same: the read waited until routing had seen
// the version it read, so the relabel reaches MapInput with it as the
// previous version.
func TestQ4Extended_RelabelBehindRouting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e, st, c := lagging(t)
		mustCreate(t, st, lagwatch.Parent("a1"))
		mustCreate(t, st, lagwatch.Parent("a2"))
		synctest.Wait()

		st.Hold()
		mustCreate(t, st, lagwatch.Child("b1", "a1"))
		// a1 is reconciled while routing has not seen b1.
		_, err := st.ModifyWithResult(ctx, lagwatch.Parent("a1"), func(r resource.Resource) error {
			r.(*conformance.IntResource).TypedSpec().Value++
			return nil
		})
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, map[resource.ID]int{"a1": 0}, c.Counts("a1"), "a1's read of b1 waits until routing has seen b1")
		_, err = st.ModifyWithResult(ctx, lagwatch.Child("b1", ""), func(r resource.Resource) error {
			r.Metadata().Labels().Set("parent", "a2")
			return nil
		})
		require.NoError(t, err)
		synctest.Wait()
		st.Release()
		runtimetest.Settle(t, e.Runtime)

		assert.Equal(t, map[resource.ID]int{"a1": 0, "a2": 1}, c.Counts("a1", "a2"),
			"a1, which b1 left, was requeued and counts nothing; a2 counts b1")
	})
}

// TestQ4Extended_ReadAheadOfAStuckWatchIsBounded: a read of a mapped
// input waits for routing at most 5 seconds in all; a watch that does not
// catch up in time (held here) leaves the read as it was taken.
func TestQ4Extended_ReadAheadOfAStuckWatchIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, st, c := lagging(t)
		st.Hold()
		mustCreate(t, st, lagwatch.Child("b1", "a1"))
		mustCreate(t, st, lagwatch.Parent("a1"))
		synctest.Wait()
		require.Empty(t, c.Counts("a1"), "a1's read waits for routing")

		time.Sleep(5*time.Second - time.Nanosecond)
		synctest.Wait()
		require.Empty(t, c.Counts("a1"), "still within the bound")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, map[resource.ID]int{"a1": 1}, c.Counts("a1"), "past the bound, the read returns what it read")

		st.Release()
		runtimetest.Settle(t, e.Runtime)
	})
}

// TestQ4Extended_RelabelBehindRoutingInRealTime is
// TestQ4Extended_RelabelBehindRouting on the wall clock over inmem, as the
// bbolt, etcd and remote modules run it over their states
// (lagwatch.RelabelBehindRouting).
func TestQ4Extended_RelabelBehindRoutingInRealTime(t *testing.T) {
	lagwatch.RelabelBehindRouting(t, inmem.NewState())
}
