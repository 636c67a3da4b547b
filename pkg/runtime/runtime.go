package runtime

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/internal/opt"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ controller.Engine = (*Runtime)(nil)

// runPhase is where a Runtime is in its one life: registered controllers
// wait in phaseIdle, run in phaseRunning, and nothing starts in phaseStopped.
type runPhase int

const (
	phaseIdle runPhase = iota
	phaseRunning
	phaseStopped
)

// runner is a registered Controller or QController.
type runner interface {
	// run runs the controller until ctx is done; it is called once, on a
	// goroutine of its own, and returns after every goroutine it started
	// exited. existing lists the input kinds whose first bootstrap was
	// routed before the controller was registered, so that it was not in
	// it (a QController lists them itself, rules Q1 and E3).
	run(ctx context.Context, existing []dependency.Key)
	// status reports the controller's state and counters.
	status() ControllerStatus
}

// Runtime is the engine: it registers Controllers and QControllers, watches
// their inputs, routes changes to them and runs them. See the package doc
// for its guarantees.
type Runtime struct {
	st      state.State
	logger  *zap.Logger
	opts    Options
	db      *dependency.DB[*subscriber]
	router  *router
	caches  *cacheSet
	epoch   time.Time // base of the monotonic clock of busy-time accounting
	metrics bool

	mu sync.Mutex
	// phase is the run phase; protected by mu.
	phase runPhase
	// runCtx is the context of Run, set in phaseRunning; protected by mu.
	runCtx context.Context
	// runners are the registered controllers by name; protected by mu.
	runners map[string]runner
	// wg counts every goroutine the engine started; Add is called only with
	// mu held and phase == phaseRunning, so that Run's Wait, which starts
	// after phase became phaseStopped, sees every Add.
	wg sync.WaitGroup

	// idleNotify wakes WaitIdle callers (see activity.go).
	idleNotify activityNotifier
}

// New returns an engine over st that logs to logger (zap.NewNop() when
// nil). It starts nothing: controllers run from [Runtime.Run] on. A bad
// option is reported as an invalid-class error ([state.IsInvalidError]); a
// nil option is skipped, as by every option-taking function of resgraph,
// including the controller runtime's read and write methods.
func New(st state.State, logger *zap.Logger, opts ...Option) (*Runtime, error) {
	if st == nil {
		return nil, state.NewInvalidError(nil, "runtime: nil state")
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	o := DefaultOptions()
	opt.Apply(&o, opts)
	if err := o.validate(); err != nil {
		return nil, err
	}
	r := &Runtime{
		st:      st,
		logger:  logger,
		opts:    o,
		db:      dependency.New[*subscriber](),
		epoch:   time.Now(),
		metrics: o.Metrics,
		runners: map[string]runner{},
	}
	r.caches = newCacheSet(o.CachedKinds)
	r.router = newRouter(r)
	return r, nil
}

// Run starts every registered controller and the watches of their inputs,
// and runs until ctx is canceled (rule E1). It returns nil once every
// goroutine it started has exited — for controllers that honour their
// context, promptly after the cancel. Run may be called once per Runtime; a
// second call, during or after the first, fails at once.
func (r *Runtime) Run(ctx context.Context) error {
	r.mu.Lock()
	if r.phase != phaseIdle {
		r.mu.Unlock()
		return errors.New("runtime: Run called more than once")
	}
	r.phase = phaseRunning
	r.runCtx = ctx

	// Watches first: a kind watch started now bootstraps with every
	// subscription registered so far, which is what fills QController
	// queues (rule Q1).
	for _, k := range r.db.Snapshot().Keys() {
		r.router.ensureWatchLocked(ctx, k)
	}
	for _, k := range r.caches.keys() {
		r.router.ensureWatchLocked(ctx, k)
	}
	for _, rn := range r.runners {
		r.goLocked(func() { rn.run(ctx, nil) })
	}
	r.mu.Unlock()

	<-ctx.Done()

	r.mu.Lock()
	r.phase = phaseStopped
	r.mu.Unlock()

	r.wg.Wait()
	return nil
}

// goLocked runs fn on a goroutine counted by r.wg. The caller holds r.mu and
// has checked that the phase is phaseRunning.
func (r *Runtime) goLocked(fn func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		fn()
	}()
}

// now returns the monotonic time since the engine was built, for cheap
// busy-time accounting.
func (r *Runtime) now() time.Duration { return time.Since(r.epoch) }
