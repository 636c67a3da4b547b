package task_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller/task"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// log records what the tasks did, in order.
type log struct {
	mu  sync.Mutex
	got []string
}

func (l *log) add(s string) {
	l.mu.Lock()
	l.got = append(l.got, s)
	l.mu.Unlock()
}

func (l *log) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// TestRunner_StartReplaceRemoveStop: the rules of a Runner — one task per
// key; the same spec changes nothing; another spec replaces the task (the
// old one returns before the new one starts); Remove stops it; Stop stops
// them all and makes later calls no-ops.
func TestRunner_StartReplaceRemoveStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l log
		r := task.NewRunner(zap.NewNop(), func(ctx context.Context, _ *zap.Logger, key string, spec int) error {
			l.add("start " + key + " " + string(rune('0'+spec)))
			<-ctx.Done()
			l.add("stop " + key + " " + string(rune('0'+spec)))
			return nil
		})
		assert.True(t, r.Set("a", 1))
		synctest.Wait()
		assert.False(t, r.Set("a", 1), "the same spec changes nothing")
		assert.True(t, r.Set("a", 2))
		synctest.Wait()
		assert.True(t, r.Set("b", 1))
		synctest.Wait()
		r.Remove("a")
		assert.Equal(t, []string{"b"}, r.Keys())
		r.Stop(nil)
		assert.False(t, r.Set("c", 1), "stopped")
		assert.Equal(t, []string{"start a 1", "stop a 1", "start a 2", "start b 1", "stop a 2", "stop b 1"}, l.all())
	})
}

// TestRunner_FailedTaskStartsAgainAfterBackoff: a task that fails (an
// error, a panic) is started again after the backoff, doubling; one that
// returns nil is done.
func TestRunner_FailedTaskStartsAgainAfterBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l log
		calls := 0
		start := time.Now()
		r := task.NewRunner(zap.NewNop(), func(context.Context, *zap.Logger, string, int) error {
			calls++
			l.add(time.Since(start).String())
			switch calls {
			case 1:
				return errors.New("boom")
			case 2:
				panic("boom")
			}
			return nil
		}, task.WithBackoff(time.Second, time.Minute))
		r.Set("a", 1)
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, []string{"0s", "1s", "3s"}, l.all(), "started again after 1 s, then 2 s; done after a nil")
		r.Stop(nil)
	})
}

// returnsWithin runs call on a goroutine and reports whether it returned
// before a generous deadline: the tests of calls that deadlocked when a
// Runner waited for a task under its lock.
func returnsWithin(call func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		call()
	}()
	select {
	case <-done:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// TestRunner_TaskCallsItsRunnerWhileReplaced: a task being replaced (or
// removed) may call its Runner while it returns — Keys, a Set of another
// key — because the replacing call waits for it without the Runner's lock.
func TestRunner_TaskCallsItsRunnerWhileReplaced(t *testing.T) {
	var r *task.Runner[string, int]
	r = task.NewRunner(zap.NewNop(), func(ctx context.Context, _ *zap.Logger, key string, spec int) error {
		<-ctx.Done()
		if key == "a" {
			_ = r.Keys()
			r.Set("from-a", spec)
		}
		return nil
	})
	r.Set("a", 1)
	// No deferred Stop: after a deadlock it would wait forever.
	require.True(t, returnsWithin(func() { r.Set("a", 2) }), "a replacing Set returns while the old task calls its Runner")
	assert.ElementsMatch(t, []string{"a", "from-a"}, r.Keys())
	require.True(t, returnsWithin(func() { r.Remove("a") }), "Remove returns while the task calls its Runner")
	assert.Equal(t, []string{"from-a"}, r.Keys())
	r.Stop(nil)
}

// TestRunner_OtherKeysGoOnWhileOneWaits: while a replacing Set waits for
// a slow task to return, calls for other keys do not wait for it.
func TestRunner_OtherKeysGoOnWhileOneWaits(t *testing.T) {
	canceled, release := make(chan struct{}), make(chan struct{})
	r := task.NewRunner(zap.NewNop(), func(ctx context.Context, _ *zap.Logger, key string, spec int) error {
		<-ctx.Done()
		if key == "slow" && spec == 1 {
			close(canceled)
			<-release
		}
		return nil
	})
	r.Set("slow", 1)
	replaced := make(chan struct{})
	go func() {
		defer close(replaced)
		r.Set("slow", 2)
	}()
	<-canceled
	ok := returnsWithin(func() {
		r.Set("other", 1)
		r.Remove("other")
		_ = r.Keys()
	})
	close(release)
	<-replaced
	r.Stop(nil)
	assert.True(t, ok, "calls for another key do not wait for the slow task")
}

// TestRunner_ReplacementsOfAKeyRunOneAtATime: replacing Sets of one key
// from many goroutines at once never run two of its tasks together, the
// last spec set is the one that runs, and Stop waits for every task.
func TestRunner_ReplacementsOfAKeyRunOneAtATime(t *testing.T) {
	var running, overlaps, started atomic.Int32
	r := task.NewRunner(zap.NewNop(), func(ctx context.Context, _ *zap.Logger, _ string, _ int) error {
		if running.Add(1) > 1 {
			overlaps.Add(1)
		}
		started.Add(1)
		<-ctx.Done()
		running.Add(-1)
		return nil
	})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { r.Set("a", i+1) })
	}
	wg.Wait()
	r.Set("a", 100) // the last: it runs once every earlier one has returned
	require.Eventually(t, func() bool { return running.Load() == 1 }, 10*time.Second, time.Millisecond, "the last spec's task runs")
	r.Stop(nil)
	assert.Zero(t, running.Load(), "Stop waited for every task")
	assert.Zero(t, overlaps.Load(), "never two tasks of one key at once")
	assert.Positive(t, started.Load())
}
