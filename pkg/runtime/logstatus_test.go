package runtime_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// failingThenPanicking registers, on rt, a QController whose items "f"
// fail once, "p" panics once and "m" (mapped) fails once, and a Controller
// whose first Run fails and second panics; runs and counters are in the
// returned counters.
func failingThenPanicking(t *testing.T, rt *runtime.Runtime) {
	t.Helper()
	var fails, panics, maps atomic.Int32
	require.NoError(t, rt.RegisterQController(&funcQController{name: "q",
		settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)}},
		reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
			switch {
			case p.ID() == "f" && fails.Add(1) == 1:
				return errors.New("disk full")
			case p.ID() == "p" && panics.Add(1) == 1:
				panic("reconcile bug")
			}
			return nil
		},
		mapInput: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
			if maps.Add(1) == 1 {
				return nil, errors.New("map failed")
			}
			return nil, nil
		}}))
	cc := &crashingController{starts: make(chan time.Time, 16), fail: []string{"link busy", "panic"}}
	require.NoError(t, rt.RegisterController(&funcController{name: "c", run: cc.run}))
}

// TestLogs_RetriesAtWarnPanicsAtError: issue 9 — a retried failure (a
// QController item, a MapInput, a Controller restart) is logged at WARN
// with its backoff delay and without a stack; a panic at ERROR with the
// stack of the panicking goroutine. The error field carries the error's
// text only: the item is a field of its own, named once.
func TestLogs_RetriesAtWarnPanicsAtError(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zapcore.DebugLevel)
		st := inmem.NewState()
		rt, err := runtime.New(st, zap.New(core), runtime.WithQueueBackoff(time.Second, time.Minute), runtime.WithRestartBackoff(2*time.Second, time.Minute))
		require.NoError(t, err)
		failingThenPanicking(t, rt)
		mustCreate(t, st, newPair(typeA, "f", 0))
		mustCreate(t, st, newPair(typeA, "p", 0))
		mustCreate(t, st, newPair(typeC, "m", 0))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)

		for _, want := range []struct {
			msg    string
			level  zapcore.Level
			fields map[string]any
			stack  bool
		}{
			{"reconcile failed; retrying after backoff", zapcore.WarnLevel,
				map[string]any{"controller": "q", "item": "As.test.resgraph.dev(test/f)", "error": "disk full", "backoff": time.Second}, false},
			{"MapInput failed; retrying after backoff", zapcore.WarnLevel,
				map[string]any{"controller": "q", "item": "map Cs.test.resgraph.dev(test/m)", "error": "map failed", "backoff": time.Second}, false},
			{"Reconcile panicked; retrying after backoff", zapcore.ErrorLevel,
				map[string]any{"controller": "q", "item": "As.test.resgraph.dev(test/p)", "panic": "reconcile bug", "backoff": time.Second}, true},
			{"controller failed; restarting after backoff", zapcore.WarnLevel,
				map[string]any{"controller": "c", "error": "link busy", "backoff": 2 * time.Second}, false},
			{"controller panicked; restarting after backoff", zapcore.ErrorLevel,
				map[string]any{"controller": "c", "panic": "boom", "backoff": 4 * time.Second}, true},
		} {
			entries := logs.FilterMessage(want.msg).All()
			require.Len(t, entries, 1, "%s: %v", want.msg, logs.All())
			e := entries[0]
			assert.Equal(t, want.level, e.Level, want.msg)
			fields := e.ContextMap()
			for k, v := range want.fields {
				assert.Equal(t, v, fields[k], "%s: field %s", want.msg, k)
			}
			if want.stack {
				assert.Contains(t, fields["stack"], "pkg/runtime_test.", want.msg) // the user code that panicked
			} else {
				assert.NotContains(t, fields, "stack", want.msg)
			}
			assert.Empty(t, e.Stack, "%s: the Runtime attaches no stack trace of zap's", want.msg)
		}
	})
}

// TestLogs_NoStackTraceOnRetriesInZapPresets: with zap's development
// preset (stack traces from WARN up) and production preset (from ERROR
// up), a retried failure carries no stack trace, and a panic carries one
// stack, the panicking goroutine's, as the "stack" field.
func TestLogs_NoStackTraceOnRetriesInZapPresets(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]zap.Config{"development": zap.NewDevelopmentConfig(), "production": zap.NewProductionConfig()} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.json")
			cfg.Encoding = "json"
			cfg.OutputPaths = []string{path}
			cfg.Sampling = nil
			cfg.Level = zap.NewAtomicLevelAt(zapcore.InfoLevel)
			logger, err := cfg.Build()
			require.NoError(t, err)
			synctest.Test(t, func(t *testing.T) {
				st := inmem.NewState()
				rt, err := runtime.New(st, logger, runtime.WithQueueBackoff(time.Second, time.Minute), runtime.WithRestartBackoff(2*time.Second, time.Minute))
				require.NoError(t, err)
				failingThenPanicking(t, rt)
				mustCreate(t, st, newPair(typeA, "f", 0))
				mustCreate(t, st, newPair(typeA, "p", 0))
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- rt.Run(ctx) }()
				time.Sleep(10 * time.Second)
				synctest.Wait()
				cancel()
				require.NoError(t, <-done)
			})
			_ = logger.Sync()

			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			// The presets name the keys differently ("msg" or "M"...).
			msgKey, levelKey, stackKey := cfg.EncoderConfig.MessageKey, cfg.EncoderConfig.LevelKey, cfg.EncoderConfig.StacktraceKey
			seen := map[string]bool{}
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var line map[string]any
				require.NoError(t, json.Unmarshal(sc.Bytes(), &line), sc.Text())
				msg, _ := line[msgKey].(string)
				level, _ := line[levelKey].(string)
				seen[msg] = true
				assert.NotContains(t, line, stackKey, "zap's own stack trace on %q", msg)
				switch msg {
				case "reconcile failed; retrying after backoff", "controller failed; restarting after backoff":
					assert.True(t, strings.EqualFold("warn", level), "%s: level %s", msg, level)
					assert.NotContains(t, line, "stack", msg)
				case "Reconcile panicked; retrying after backoff", "controller panicked; restarting after backoff":
					assert.True(t, strings.EqualFold("error", level), "%s: level %s", msg, level)
					assert.Contains(t, line["stack"], "panic", msg)
				}
			}
			require.NoError(t, sc.Err())
			for _, msg := range []string{"reconcile failed; retrying after backoff", "controller failed; restarting after backoff",
				"Reconcile panicked; retrying after backoff", "controller panicked; restarting after backoff"} {
				assert.True(t, seen[msg], "logged: %s", msg)
			}
		})
	}
}

// TestStatus_QControllerRecoversWhenItsFailedItemsSucceed: issue 9 — the
// last error stays with its time, and Recovered tells whether every item
// that failed has since succeeded (FailingItems counts the others); a new
// failure clears it.
func TestStatus_QControllerRecoversWhenItsFailedItemsSucceed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		opts := []runtimetest.Option{runtimetest.WithState(st), runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, time.Second))}
		failures := map[string]*atomic.Int32{"a": {}, "b": {}}
		failures["a"].Store(1)
		failures["b"].Store(2)
		opts = append(opts, runtimetest.WithQControllers(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				if n := failures[p.ID()]; n != nil && n.Add(-1) >= 0 {
					return errors.New("not yet " + p.ID())
				}
				return nil
			}}))
		e := start(t, opts...)
		cs := statusOf(t, e.Runtime, "q")
		assert.False(t, cs.Recovered, "no failure: nothing to recover from")
		assert.Empty(t, cs.LastError)

		mustCreate(t, st, newPair(typeA, "a", 0))
		mustCreate(t, st, newPair(typeA, "b", 0))
		synctest.Wait()
		failedAt := time.Now()
		cs = statusOf(t, e.Runtime, "q")
		assert.Equal(t, 2, cs.FailingItems)
		assert.False(t, cs.Recovered)
		assert.True(t, cs.RecoveredAt.IsZero())
		assert.Equal(t, failedAt, cs.LastErrorAt)

		time.Sleep(time.Second) // a succeeds, b fails again
		synctest.Wait()
		cs = statusOf(t, e.Runtime, "q")
		assert.Equal(t, 1, cs.FailingItems)
		assert.False(t, cs.Recovered, "b still fails")
		assert.Equal(t, "Reconcile As.test.resgraph.dev(test/b): not yet b", cs.LastError)

		time.Sleep(time.Second) // b succeeds
		synctest.Wait()
		cs = statusOf(t, e.Runtime, "q")
		assert.Zero(t, cs.FailingItems)
		assert.True(t, cs.Recovered)
		assert.Equal(t, time.Now(), cs.RecoveredAt)
		assert.Equal(t, "Reconcile As.test.resgraph.dev(test/b): not yet b", cs.LastError, "the last error stays, with its time")
		assert.Equal(t, failedAt.Add(time.Second), cs.LastErrorAt)

		failures["a"].Store(1)
		require.NoError(t, st.Modify(context.Background(), newPair(typeA, "a", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 1; return nil }))
		synctest.Wait()
		cs = statusOf(t, e.Runtime, "q")
		assert.False(t, cs.Recovered, "a new failure")
		assert.True(t, cs.RecoveredAt.IsZero())

		raw, err := json.Marshal(e.Runtime.Observe().Metrics())
		require.NoError(t, err)
		assert.Contains(t, string(raw), `"failingItems":1`)
	})
}

// TestStatus_ControllerRecoversAfterACleanPass: a Controller recovers
// once its restarted Run completed a reconcile pass (came back to EventCh
// after an event) with no failure reported in it, or called
// ResetRestartBackoff; a failure reported during a pass
// (controller.ErrorReporter) delays the recovery to the next clean pass.
func TestStatus_ControllerRecoversAfterACleanPass(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		opts := []runtimetest.Option{runtimetest.WithState(st), runtimetest.WithRuntimeOptions(runtime.WithRestartBackoff(time.Second, time.Second))}
		var runs atomic.Int32
		reportIn := make(chan bool, 4) // per pass: report a failure?
		opts = append(opts, runtimetest.WithControllers(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				if runs.Add(1) == 1 {
					<-r.EventCh()
					return errors.New("first run fails")
				}
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					select {
					case report := <-reportIn:
						if report {
							r.(controller.ErrorReporter).ReportError(errors.New("input x failed"))
						}
					default:
					}
				}
			}}))
		e := start(t, opts...)
		cs := statusOf(t, e.Runtime, "c")
		assert.Equal(t, "first run fails", cs.LastError)
		assert.False(t, cs.Recovered)

		time.Sleep(time.Second) // restarted: the start event's pass ends
		synctest.Wait()
		cs = statusOf(t, e.Runtime, "c")
		assert.True(t, cs.Recovered, "the restarted Run completed a pass")
		assert.Equal(t, time.Now(), cs.RecoveredAt)

		reportIn <- true
		mustCreate(t, st, newPair(typeA, "1", 0))
		synctest.Wait()
		cs = statusOf(t, e.Runtime, "c")
		assert.Equal(t, "input x failed", cs.LastError)
		assert.False(t, cs.Recovered, "the pass reported a failure")

		reportIn <- false
		mustCreate(t, st, newPair(typeA, "2", 0))
		synctest.Wait()
		assert.True(t, statusOf(t, e.Runtime, "c").Recovered, "a clean pass")
	})
}
