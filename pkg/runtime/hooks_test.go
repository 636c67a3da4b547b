package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// hooked is a QController with a run hook and a shutdown hook that record
// their calls.
type hooked struct {
	funcQController
	mu    sync.Mutex
	calls []string
	run   func(n int, ctx context.Context) error
	runs  int
}

func (h *hooked) note(s string) {
	h.mu.Lock()
	h.calls = append(h.calls, s)
	h.mu.Unlock()
}

func (h *hooked) RunHook(ctx context.Context, _ *zap.Logger, r controller.QRuntime) error {
	h.mu.Lock()
	h.runs++
	n := h.runs
	h.mu.Unlock()
	h.note("run")
	if r == nil {
		panic("no QRuntime")
	}
	return h.run(n, ctx)
}

func (h *hooked) ShutdownHook(*zap.Logger) { h.note("shutdown") }

func (h *hooked) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// TestHooks_RunHookRestartsAfterFailureShutdownHookLast: a QController's
// RunHook runs when it starts, is called again after a panic (logged, and
// after the item backoff), ends its goroutine when the controller stops;
// ShutdownHook is called once, after every worker and the run hook
// returned.
func TestHooks_RunHookRestartsAfterFailureShutdownHookLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zapcore.WarnLevel)
		h := &hooked{funcQController: funcQController{name: "hooked", settings: primaryOf(typeA)}}
		began := time.Now()
		var second time.Duration
		h.run = func(n int, ctx context.Context) error {
			if n == 1 {
				panic("first run")
			}
			second = time.Since(began)
			<-ctx.Done()
			h.note("run ended")
			return nil
		}
		e := start(t, runtimetest.WithLogger(zap.New(core)), runtimetest.WithQControllers(h),
			runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, time.Minute)))
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.Equal(t, time.Second, second.Round(100*time.Millisecond), "called again after the item backoff")
		require.Len(t, logs.FilterMessage("RunHook panicked; calling it again after backoff").All(), 1)
		require.NoError(t, e.Stop())
		assert.Equal(t, []string{"run", "run", "run ended", "shutdown"}, h.all())
	})
}

// TestSchedule_RunHookWaitsForTheScheduler: with a scheduler attached (a
// simulator), every call of a QController's RunHook — the first, and the
// one after a failure — waits at a gate of its own until the scheduler
// lets it through, so that a simulated run orders it as any other step.
func TestSchedule_RunHookWaitsForTheScheduler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newRecordingScheduler()
		rt := scheduled(t, inmem.NewState(), s, runtime.WithQueueBackoff(time.Second, time.Minute))
		h := &hooked{funcQController: funcQController{name: "hooked", settings: primaryOf(typeA)}}
		h.run = func(n int, ctx context.Context) error {
			if n == 1 {
				return errors.New("first call fails")
			}
			<-ctx.Done()
			return nil
		}
		require.NoError(t, rt.RegisterQController(h))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		synctest.Wait()

		hook := sched.Gate{Kind: sched.GateHook, Controller: "hooked"}
		assert.Equal(t, []sched.Gate{hook}, s.waiting(), "the RunHook waits to be called")
		assert.Empty(t, h.all())
		s.open(t, hook)
		synctest.Wait()
		assert.Equal(t, []string{"run"}, h.all(), "called once let through")

		time.Sleep(time.Minute) // virtual: past the item backoff after the failure
		synctest.Wait()
		assert.Equal(t, []sched.Gate{hook}, s.waiting(), "the call after the failure waits too")
		assert.Equal(t, []string{"run"}, h.all())
		s.open(t, hook)
		synctest.Wait()
		assert.Equal(t, []string{"run", "run"}, h.all())
		cancel()
		require.NoError(t, <-done)
	})
}
