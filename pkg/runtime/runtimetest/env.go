package runtimetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
)

// Env is a Runtime running for one test. Its fields are set by [Start]
// and must not be changed.
type Env struct {
	// Runtime is the Runtime.
	Runtime *runtime.Runtime
	// State is the state it runs over: a fresh inmem state unless
	// [WithState] gave one.
	State state.State

	tb      testing.TB
	cancel  context.CancelFunc
	done    chan error
	stopErr error
	stopped bool
}

// config is what the options set.
type config struct {
	ctrls    []controller.Controller
	qctrls   []controller.QController
	rtOpts   []runtime.Option
	st       state.State
	logger   *zap.Logger
	noLeaks  bool
	leakOpts []goleak.Option
}

// Option configures [Start].
type Option func(*config)

// WithControllers registers Controllers before the Runtime starts.
func WithControllers(ctrls ...controller.Controller) Option {
	return func(c *config) { c.ctrls = append(c.ctrls, ctrls...) }
}

// WithQControllers registers QControllers before the Runtime starts.
func WithQControllers(ctrls ...controller.QController) Option {
	return func(c *config) { c.qctrls = append(c.qctrls, ctrls...) }
}

// WithRuntimeOptions passes options to runtime.New (short backoffs, cached
// kinds, ...).
func WithRuntimeOptions(opts ...runtime.Option) Option {
	return func(c *config) { c.rtOpts = append(c.rtOpts, opts...) }
}

// WithState runs the Runtime over st instead of a fresh inmem state (make
// it with [NewState] so that a shared snapshot changed in place fails the
// test rather than the test binary).
func WithState(st state.State) Option {
	return func(c *config) { c.st = st }
}

// WithLogger gives the Runtime a logger; the default logs to the test at
// info level and above (zaptest).
func WithLogger(l *zap.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithoutLeakCheck skips the goroutine leak check after the Runtime
// stopped (for a test that runs in parallel with others).
func WithoutLeakCheck() Option {
	return func(c *config) { c.noLeaks = true }
}

// WithLeakOptions passes options to the leak check (goleak.IgnoreTopFunction
// for a goroutine the test leaves on purpose, ...).
func WithLeakOptions(opts ...goleak.Option) Option {
	return func(c *config) { c.leakOpts = append(c.leakOpts, opts...) }
}

// Start builds a Runtime over a fresh inmem state (or the [WithState]
// one), registers the controllers of [WithControllers] and
// [WithQControllers], and runs it until the test ends. A failed
// registration fails the test at once. In t.Cleanup it stops the Runtime,
// fails the test if Run does not return nil within the timeout, and then
// checks that no goroutine started since Start is left (see the package
// doc; [WithoutLeakCheck] skips that).
func Start(tb testing.TB, opts ...Option) *Env {
	tb.Helper()
	c := config{}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.st == nil {
		c.st = NewState(tb)
	}
	if c.logger == nil {
		c.logger = zaptest.NewLogger(tb, zaptest.Level(zap.InfoLevel))
	}
	var leakOpts []goleak.Option
	if !c.noLeaks {
		leakOpts = append([]goleak.Option{goleak.IgnoreCurrent()}, c.leakOpts...)
	}

	rt, err := runtime.New(c.st, c.logger, c.rtOpts...)
	if err != nil {
		tb.Fatalf("runtimetest: runtime.New: %v", err)
	}
	for _, ctrl := range c.ctrls {
		if err := rt.RegisterController(ctrl); err != nil {
			tb.Fatalf("runtimetest: %v", err) // the Runtime's error says "register controller ..."
		}
	}
	for _, ctrl := range c.qctrls {
		if err := rt.RegisterQController(ctrl); err != nil {
			tb.Fatalf("runtimetest: %v", err)
		}
	}

	track(tb, rt)
	ctx, cancel := context.WithCancel(context.Background())
	e := &Env{Runtime: rt, State: c.st, tb: tb, cancel: cancel, done: make(chan error, 1)}
	go func() { e.done <- rt.Run(ctx) }()
	tb.Cleanup(func() {
		if err := e.Stop(); err != nil {
			tb.Errorf("runtimetest: Runtime Run: %v", err)
		}
		if leakOpts != nil {
			if err := goleak.Find(leakOpts...); err != nil {
				tb.Errorf("runtimetest: goroutines left after the Runtime stopped: %v", err)
			}
		}
	})
	return e
}

// Stop stops the Runtime and returns what Run returned, or an error when
// Run did not return within the test's timeout ([SetTimeout]). Later
// calls return the same. The test's cleanup calls it; a test calls it to
// check what happens after the Runtime stopped.
func (e *Env) Stop() error {
	if e.stopped {
		return e.stopErr
	}
	e.stopped = true
	e.cancel()
	timeout := timeoutOf(e.tb)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case e.stopErr = <-e.done:
	case <-t.C:
		e.stopErr = errors.New("Run did not return within " + timeout.String() + " of its context being canceled")
	}
	return e.stopErr
}
