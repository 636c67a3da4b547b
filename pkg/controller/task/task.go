// Package task runs long-running work per input: one task per key,
// started when the key appears, replaced when its spec changes, stopped
// when it goes — the way a daemon polls each machine it knows, or keeps
// a connection per configured peer, beside its controllers' items.
//
// A controller keeps a [Runner] and tells it what should run, from its
// reconcile (Reconcile, a TransformFunc):
//
//	runner.Set(machine.Metadata().ID(), pollSpec{Address: addr})  // start, or replace if the spec changed
//	runner.Remove(id)                                             // when the machine goes
//
// and stops it when the controller stops (a QController's ShutdownHook,
// qtransform.WithShutdownHook(runner.Stop) — controller.QShutdownHook).
// A task writes what it learns through the controller's writer (a
// status output), whose change wakes the controller up as any output's.
//
// Rules of a Runner: at most one task runs per key; Set with a spec equal
// to the running task's (==, S is comparable) changes nothing; Set with
// another spec cancels the running task, waits for it to return, and
// starts the new one; Remove cancels the task and waits for it; a task
// that returns an error (or panics) is started again with the same spec
// after a backoff (100 ms doubling to 30 s by default, [WithBackoff]),
// one that returns nil is done until its spec changes; Stop cancels every
// task, waits for them all, and makes later calls no-ops. Every goroutine
// a Runner starts is stopped by Remove, a replacing Set or Stop: none
// outlives Stop.
//
// The waits happen without the Runner's lock: a task may call its Runner
// (Keys, Set and Remove of other keys), also while it is being canceled,
// and other keys' calls go on while one waits. A call that waits for the
// calling task itself — Remove or a replacing Set of its own key, or Stop
// — never returns: a task ends itself by returning.
package task

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Func is a task: it runs until ctx ends (the task is replaced, removed
// or stopped) or its work is done. key and spec are the ones it was
// started with.
type Func[K comparable, S comparable] func(ctx context.Context, logger *zap.Logger, key K, spec S) error

// Option configures a [Runner].
type Option func(*options)

type options struct {
	initial, max time.Duration
}

// WithBackoff sets the delay before a failed task is started again: the
// first delay initial, doubling up to max.
func WithBackoff(initial, max time.Duration) Option {
	return func(o *options) { o.initial, o.max = initial, max }
}

// Runner runs one task per key. It is safe for concurrent use.
type Runner[K comparable, S comparable] struct {
	run    Func[K, S]
	logger *zap.Logger
	opts   options

	mu      sync.Mutex
	tasks   map[K]*running[S]
	stopped bool
}

// running is one started task.
type running[S comparable] struct {
	spec   S
	cancel context.CancelFunc
	// done is closed when the task has returned for good, and after the
	// task it replaced (after) has.
	done chan struct{}
	// after is the done of the task this one replaced (nil when none):
	// the task starts once it is closed.
	after <-chan struct{}
}

// NewRunner returns a Runner of run; logger logs the failures of tasks.
// A nil run panics.
func NewRunner[K comparable, S comparable](logger *zap.Logger, run Func[K, S], opts ...Option) *Runner[K, S] {
	if run == nil {
		panic("task.NewRunner: nil Func")
	}
	o := options{initial: 100 * time.Millisecond, max: 30 * time.Second}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Runner[K, S]{run: run, logger: logger, opts: o, tasks: map[K]*running[S]{}}
}

// Set makes the task of key run with spec: it is started if none runs,
// replaced (the old one canceled and waited for) if it runs with another
// spec, and left alone if it runs with spec. It reports whether it
// started a task. The new task starts once the old one has returned.
func (r *Runner[K, S]) Set(key K, spec S) bool {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return false
	}
	prev, ok := r.tasks[key]
	if ok && prev.spec == spec {
		r.mu.Unlock()
		return false
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &running[S]{spec: spec, cancel: cancel, done: make(chan struct{})}
	r.tasks[key] = t
	if ok {
		prev.cancel()
		t.after = prev.done
	}
	go r.loop(ctx, key, t)
	r.mu.Unlock()
	if ok {
		<-prev.done
	}
	return true
}

// Remove stops the task of key, if any, and waits for it.
func (r *Runner[K, S]) Remove(key K) {
	r.mu.Lock()
	t, ok := r.tasks[key]
	if ok {
		t.cancel()
		delete(r.tasks, key)
	}
	r.mu.Unlock()
	if ok {
		<-t.done
	}
}

// Keys returns the keys set and not removed (their task runs, waits to
// be started again, or is done).
func (r *Runner[K, S]) Keys() []K {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]K, 0, len(r.tasks))
	for k := range r.tasks {
		keys = append(keys, k)
	}
	return keys
}

// Stop stops every task, waits for them all, and makes later calls
// no-ops. Its logger argument is ignored: Stop has the signature of a
// QShutdownHook (qtransform.WithShutdownHook(runner.Stop)).
func (r *Runner[K, S]) Stop(*zap.Logger) {
	r.mu.Lock()
	r.stopped = true
	stopping := make([]*running[S], 0, len(r.tasks))
	for k, t := range r.tasks {
		t.cancel()
		stopping = append(stopping, t)
		delete(r.tasks, k)
	}
	r.mu.Unlock()
	for _, t := range stopping {
		<-t.done // also after the tasks it replaced: see loop
	}
}

// loop runs the task until it is done or ctx ends, starting it again
// after a backoff when it fails.
func (r *Runner[K, S]) loop(ctx context.Context, key K, t *running[S]) {
	defer close(t.done)
	if t.after != nil {
		<-t.after // canceled already: one task per key at a time
		if ctx.Err() != nil {
			return // replaced or removed before it started
		}
	}
	delay := r.opts.initial
	for {
		err := r.call(ctx, key, t.spec)
		if ctx.Err() != nil || err == nil {
			return
		}
		r.logger.Warn("task failed; starting it again after backoff", zap.Any("key", key), zap.Error(err), zap.Duration("backoff", delay))
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		delay = min(2*delay, r.opts.max)
	}
}

// call runs the task once; a panic is its error.
func (r *Runner[K, S]) call(ctx context.Context, key K, spec S) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("task panicked: %v", p)
		}
	}()
	return r.run(ctx, r.logger, key, spec)
}
