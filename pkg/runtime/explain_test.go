package runtime_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestExplain_FromTheEnginesFacts: the explanations of a resource and of a
// controller are built from what the Runtime knows — the declared edges,
// the trace's changes and reconciles with their causes, each controller's
// state: idle, backing off after an error (attempt n), blocked on a
// missing input.
func TestExplain_FromTheEnginesFacts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		q := &funcQController{name: "q", settings: controller.QSettings{
			Inputs:  []controller.Input{in(typeA, controller.InputQPrimary)},
			Outputs: []controller.Output{out(typeB, controller.OutputExclusive)},
		}, reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
			if p.ID() == "bad" {
				return errors.New("cannot do bad")
			}
			return r.Create(ctx, newPair(typeB, p.ID(), 1))
		}}
		c := &funcController{name: "c", inputs: []controller.Input{in(typeB, controller.InputWeak)}, run: newEventCounter(false).run}
		e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(c), runtimetest.WithQControllers(q),
			runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Minute, time.Hour)))
		mustCreate(t, st, newPair(typeA, "1", 1))
		mustCreate(t, st, newPair(typeA, "bad", 1))
		synctest.Wait()
		ctx := t.Context()

		x, err := e.Runtime.Observe().Explain(ctx, ptr(typeB, "1"))
		require.NoError(t, err)
		assert.True(t, x.Exists)
		assert.EqualValues(t, 1, x.Version)
		assert.Equal(t, "q", x.Owner)
		require.Len(t, x.Writers, 1)
		assert.Equal(t, "q", x.Writers[0].Controller)
		require.Len(t, x.Readers, 1)
		assert.Equal(t, "c", x.Readers[0].Controller)
		require.NotEmpty(t, x.Changes)
		assert.Equal(t, "q", x.Changes[0].Writer, "the commit names its writer")
		assert.Equal(t, "create", x.Changes[0].Op)
		require.Len(t, x.Changes[0].Reconciles, 1, "the reconcile it caused")
		assert.Equal(t, "c", x.Changes[0].Reconciles[0].Controller)
		require.Len(t, x.Controllers, 2)
		assert.Equal(t, "c", x.Controllers[0].Controller)
		assert.Equal(t, explain.WorkIdle, x.Controllers[0].Doing.Work, "c is up to date")
		assert.Equal(t, explain.WorkBackoff, x.Controllers[1].Doing.Work, "q, as a whole: its other item backs off")

		bad, err := e.Runtime.Observe().Explain(ctx, ptr(typeA, "bad"))
		require.NoError(t, err)
		require.Len(t, bad.Controllers, 1)
		d := bad.Controllers[0].Doing
		assert.Equal(t, explain.WorkBackoff, d.Work)
		assert.Equal(t, "cannot do bad", d.Error)
		assert.Equal(t, time.Now().Add(time.Minute), d.Due)
		assert.Equal(t, 1, d.Attempt)

		missing, err := e.Runtime.Observe().Explain(ctx, ptr(typeB, "none"))
		require.NoError(t, err)
		assert.False(t, missing.Exists)
		var blocked *explain.ControllerDoing
		for i := range missing.Controllers {
			if missing.Controllers[i].Controller == "q" {
				blocked = &missing.Controllers[i]
			}
		}
		require.NotNil(t, blocked)
		assert.Equal(t, explain.WorkBlocked, blocked.Doing.Work)
		assert.Equal(t, &trace.Ref{Namespace: testNS, Type: typeA, ID: "none"}, blocked.Doing.Resource)

		qx, err := e.Runtime.Observe().ExplainController(ctx, "q")
		require.NoError(t, err)
		assert.Equal(t, observe.FamilyQController.String(), qx.Family)
		require.NotEmpty(t, qx.Recent)
		assert.NotNil(t, qx.Recent[0].Cause, "a reconcile names its cause")
		assert.EqualValues(t, 2, qx.Counters.Reconciles)
		assert.EqualValues(t, 2, qx.Latencies["duration"].Count)

		_, err = e.Runtime.Observe().ExplainController(ctx, "nobody")
		assert.True(t, state.IsNotFoundError(err), "%v", err)
		_, err = e.Runtime.Observe().Explain(ctx, resource.NewPointer(testNS, typeA, ""))
		assert.True(t, state.IsInvalidError(err), "%v", err)
	})
}
