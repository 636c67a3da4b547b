package task_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
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
