package runtime_test

import (
	"bytes"
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// writeUndeclared writes typeC/id, which no test controller declares as an
// output: the Runtime denies it (rule C3).
func writeUndeclared(ctx context.Context, r controller.Writer, id resource.ID) error {
	return r.Modify(ctx, newPair(typeC, id, 0), func(resource.Resource) error { return nil })
}

// TestC3_DenialParksTheItem: a QController item whose Reconcile is denied
// access (a write to an undeclared output) is a programming error, never
// retried with a backoff (issue 27: it was retried up to every 25.6 s for
// ever): the item is parked at once with its error — in the status, the
// metrics, the trace and explain, logged at ERROR — until it changes.
func TestC3_DenialParksTheItem(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		log := &callLog{}
		q := &funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				return writeUndeclared(ctx, r, p.ID())
			}}
		e := start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.New(core)), runtimetest.WithQControllers(q))
		mustCreate(t, st, newPair(typeA, "x", 0))
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Len(t, log.take(), 1, "denied once, then parked: no retry in an hour")

		cs := statusOf(t, e.Runtime, "q")
		require.Equal(t, 1, cs.ParkedItems)
		assert.Equal(t, "Reconcile As.test.resgraph.dev(test/x)", cs.Parked[0].Item)
		assert.EqualValues(t, 1, cs.Parked[0].Attempts)
		assert.Contains(t, cs.Parked[0].LastError, "denied")
		assert.Contains(t, cs.Parked[0].LastError, "not a declared output")
		assert.Contains(t, cs.LastError, "not a declared output")
		assert.Zero(t, cs.Metrics.Requeues, "parked, not requeued")
		parked := logs.FilterMessage("reconcile was denied access; parked until the item changes").All()
		require.Len(t, parked, 1)
		assert.Equal(t, zapcore.ErrorLevel, parked[0].Level)
		evs := e.Runtime.Observe().Trace().Snapshot()
		require.Len(t, eventsOf(evs, trace.Parked, refOfPointer(ptr(typeA, "x"))), 1)

		x, err := e.Runtime.Observe().ExplainController(t.Context(), "q")
		require.NoError(t, err)
		require.Len(t, x.Items, 1)
		assert.Equal(t, explain.WorkParked, x.Items[0].Work)
		assert.Contains(t, x.Items[0].Error, "not a declared output")
		var b bytes.Buffer
		require.NoError(t, explain.WriteText(&b, x))
		assert.Contains(t, b.String(), "reconcile As.test.resgraph.dev(test/x): parked until it changes after error")

		// Its next change runs it again, once.
		touchA(t, st, "x", 1)
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Len(t, log.take(), 1)
		assert.Equal(t, 1, statusOf(t, e.Runtime, "q").ParkedItems)
	})
}

// TestC3_DenialParksTheController: a Controller whose Run returns an access
// denial is not restarted with a backoff: it is parked (its state
// "parked", its last error the denial, explain says so) until one of its
// inputs changes, which restarts it.
func TestC3_DenialParksTheController(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		log := &callLog{}
		c := &funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				log.add("run")
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					if err := writeUndeclared(ctx, r, "1"); err != nil {
						return err
					}
				}
			}}
		e := start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.New(core)), runtimetest.WithControllers(c))
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Len(t, log.take(), 1, "parked after its first Run: not restarted in an hour")

		cs := statusOf(t, e.Runtime, "c")
		assert.Equal(t, observe.LifecycleParked, cs.Lifecycle)
		assert.Contains(t, cs.LastError, "not a declared output")
		assert.True(t, cs.BackoffUntil.IsZero())
		require.Len(t, logs.FilterMessage("controller was denied access; parked until an input changes").All(), 1)
		x, err := e.Runtime.Observe().ExplainController(t.Context(), "c")
		require.NoError(t, err)
		assert.Equal(t, explain.WorkParked, x.Doing.Work)
		assert.Contains(t, x.Doing.Sentence(time.Now()), "parked until an input changes after error")
		require.Len(t, eventsOf(e.Runtime.Observe().Trace().Snapshot(), trace.Parked, trace.Ref{}), 1)
		require.NoError(t, runtimetest.RealTimeWaitIdle(t.Context(), e.Runtime), "a parked controller is idle")

		// An input changes: Run starts again (and is denied again).
		mustCreate(t, st, newPair(typeA, "1", 0))
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Len(t, log.take(), 1)
		assert.Equal(t, observe.LifecycleParked, statusOf(t, e.Runtime, "c").Lifecycle)
	})
}
