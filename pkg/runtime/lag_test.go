package runtime_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// lagControllers returns a QController "q" with primary input typeA and a
// Controller "c" reading typeA, both reconciling at once.
func lagControllers() (*funcQController, *funcController) {
	return &funcQController{name: "q", settings: primaryOf(typeA)},
		&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: newEventCounter(false).run}
}

// TestMetrics_LagIsFromWhenTheEngineCouldSeeTheChange: end-to-end lag is
// measured from the later of the commit and the Runtime's first listing of
// the kind; what existed when the Runtime started is startup work, counted
// in the Startup histogram and not as lag — also after a restart over a
// state whose resources were committed long before.
func TestMetrics_LagIsFromWhenTheEngineCouldSeeTheChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		mustCreate(t, st, newPair(typeA, "1", 1))
		time.Sleep(1500 * time.Millisecond)

		q, c := lagControllers()
		e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(c), runtimetest.WithQControllers(q))
		qs := statusOf(t, e.Runtime, "q").Metrics
		assert.Zero(t, qs.Lag.Count, "A/1 existed before the start: not lag (%v)", qs.Lag.Quantile(0.99))
		assert.EqualValues(t, 1, qs.Startup.Count, "its reconcile at the start is startup work")
		assert.Zero(t, qs.Startup.Max, "reconciled at once after the listing")
		cs := statusOf(t, e.Runtime, "c").Metrics
		assert.Zero(t, cs.Lag.Count)
		assert.EqualValues(t, 1, cs.Startup.Count, "the start pass")
		require.Len(t, e.Runtime.Observe().Metrics().Kinds, 1)
		assert.Zero(t, e.Runtime.Observe().Metrics().Kinds[0].DeliveryLag.Count, "a listing is no delivery of a commit")

		// A change after the start is lag, from its commit.
		time.Sleep(time.Second)
		mustCreate(t, st, newPair(typeA, "2", 1))
		synctest.Wait()
		qs = statusOf(t, e.Runtime, "q").Metrics
		assert.EqualValues(t, 1, qs.Lag.Count)
		assert.Zero(t, qs.Lag.Max)
		assert.EqualValues(t, 1, qs.Startup.Count)
		assert.EqualValues(t, 1, statusOf(t, e.Runtime, "c").Metrics.Lag.Count)

		// The trace says the listed resource existed; it does not claim
		// it was created at the start, nor a delivery lag.
		var listed []trace.Record
		for _, ev := range eventsOf(e.Runtime.Observe().Trace().Snapshot(), trace.Route, trace.Ref{Namespace: testNS, Type: typeA, ID: "1"}) {
			listed = append(listed, ev)
			assert.Equal(t, "existing", ev.Op)
			assert.Zero(t, ev.Duration)
		}
		assert.Len(t, listed, 1, "routed to q at the start")
		require.NoError(t, e.Stop())

		// A restart, days later: nothing reads as days of lag.
		time.Sleep(200 * time.Hour)
		q, c = lagControllers()
		e = start(t, runtimetest.WithState(st), runtimetest.WithControllers(c), runtimetest.WithQControllers(q))
		qs = statusOf(t, e.Runtime, "q").Metrics
		assert.Zero(t, qs.Lag.Count)
		assert.Zero(t, qs.Lag.Quantile(0.99))
		assert.EqualValues(t, 2, qs.Startup.Count)
		assert.Zero(t, qs.Startup.Quantile(0.99))
		x, err := e.Runtime.Observe().ExplainController(t.Context(), "q")
		require.NoError(t, err)
		assert.Zero(t, x.Latencies["lag"].P99)
		assert.EqualValues(t, 2, x.Latencies["startup"].Count)

		// Explain names the listed version as found, not as a change.
		rx, err := e.Runtime.Observe().Explain(t.Context(), ptr(typeA, "1"))
		require.NoError(t, err)
		require.Len(t, rx.Changes, 1)
		assert.Equal(t, "existing", rx.Changes[0].Op)
		var text strings.Builder
		require.NoError(t, explain.WriteText(&text, rx))
		assert.Contains(t, text.String(), ": existing when the Runtime listed its kind\n    -> q reconcile")
	})
}

// TestMetrics_LagStartsWhenTheKindIsFirstListed: a change committed while
// the Runtime's first listing of its kind was still on its way reaches the
// Runtime with that listing; its lag is counted from then, not from the
// commit the Runtime could not see.
func TestMetrics_LagStartsWhenTheKindIsFirstListed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedState(typeA)
		mustCreate(t, g, newPair(typeA, "1", 1))
		g.hold()
		var calls callLog
		q := &funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				calls.add(p.ID())
				return nil
			}}
		e := start(t, runtimetest.WithState(g), runtimetest.WithQControllers(q))
		time.Sleep(500 * time.Millisecond)
		mustCreate(t, g, newPair(typeA, "2", 1)) // after the listing, before it arrives
		time.Sleep(time.Second)
		g.unhold()
		synctest.Wait()

		require.ElementsMatch(t, []string{"1", "2"}, ids(calls.take()))
		m := statusOf(t, e.Runtime, "q").Metrics
		assert.EqualValues(t, 1, m.Startup.Count, "A/1: listed")
		assert.EqualValues(t, 1, m.Lag.Count, "A/2: a change after the listing")
		assert.Zero(t, m.Lag.Max, "counted from the listing's arrival, not from its commit 1 s before")
		k := e.Runtime.Observe().Metrics().Kinds
		require.Len(t, k, 1)
		assert.EqualValues(t, 1, k[0].DeliveryLag.Count)
		assert.Zero(t, k[0].DeliveryLag.Max)
	})
}
