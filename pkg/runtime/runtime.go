package runtime

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/internal/opt"
	"github.com/resgraph/resgraph/internal/usercode"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/runtime/internal/idle"
	"github.com/resgraph/resgraph/pkg/runtime/internal/route"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
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

// runner is a registered Controller or QController, as the engine sees it.
type runner interface {
	// run runs the controller until ctx is done; it is called once, on a
	// goroutine of its own, and returns after every goroutine it started
	// exited. existing lists the input kinds whose first bootstrap was
	// routed before the controller was registered, so that it was not in
	// it (a QController lists them itself, rules Q1 and E3).
	run(ctx context.Context, existing []resource.KindKey)
	// status reports the controller's state and counters.
	status() observe.ControllerStatus
	// activity reports what the controller is busy with.
	activity() observe.ControllerActivity
	// sink is its telemetry sink (nil with metrics and trace off).
	sink() *telemetry.Controller
}

// Runtime is the engine: it registers Controllers and QControllers, watches
// their inputs, routes changes to them and runs them. See the package doc
// for its guarantees.
//
// Its parts live in internal packages, each given only what it uses: the
// router (internal/route) watches the input kinds and delivers changes;
// a Controller's runner (internal/crunner) and a QController's
// (internal/qrunner) run the user code and judge its outcomes with one
// switch (internal/outcome); each controller's adapter (internal/adapter)
// checks and performs its reads and writes; the caches (internal/cache),
// the dependency database (internal/dependency) and the work queue
// (internal/queue) are leaves; statuses (internal/status) and metrics
// (internal/telemetry, a nil sink when metrics are off) are reported by
// the parts as they work. The Runtime itself only wires them together
// and owns the lifecycle.
type Runtime struct {
	st     state.State
	logger *zap.Logger
	opts   options
	db     *dependency.DB[*route.Subscriber]
	router *route.Router
	caches *cache.Set
	// tel is what the telemetry sinks share: clock, trace, metrics on.
	tel *telemetry.Engine
	// loops are the engine's hot-loop findings (see hotloop.go).
	loops loopState
	// idle wakes the callers of runtimetest.WaitIdle (see activity.go).
	idle idle.Notifier
	// group tracks every goroutine the engine starts.
	group group

	mu sync.Mutex
	// phase is the run phase; protected by mu.
	phase runPhase
	// runCtx is the context of Run, set in phaseRunning; protected by mu.
	runCtx context.Context
	// runners are the registered controllers by name; protected by mu.
	runners map[string]runner
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
	o := defaultOptions()
	opt.Apply(&o, opts)
	if err := o.validate(); err != nil {
		return nil, err
	}
	r := &Runtime{
		st:      st,
		logger:  logger,
		opts:    o,
		db:      dependency.New[*route.Subscriber](),
		caches:  cache.NewSet(o.cachedKinds),
		tel:     &telemetry.Engine{Clock: telemetry.NewClock(), Ring: trace.NewRing(o.traceSize), Metrics: o.metrics},
		runners: map[string]runner{},
	}
	r.addIndexes()
	r.router = route.New(route.Config{
		State:         st,
		Subscriptions: func(k resource.KindKey) []route.Subscription { return r.db.Snapshot().For(k) },
		Caches:        r.caches,
		Metrics:       o.metrics,
		Idle:          &r.idle,
		Logger:        logger,
		Go:            r.group.Go,
	})
	return r, nil
}

// Run starts every registered controller and the watches of their inputs,
// and runs until ctx is canceled (rule E1). It returns nil once every
// goroutine it started has exited — for controllers that honour their
// context, promptly after the cancel. Run may be called once per Runtime; a
// second call, during or after the first, fails at once.
func (r *Runtime) Run(ctx context.Context) error {
	var revs state.RevisionReporter
	if ctx != nil && len(r.caches.Keys()) > 0 {
		revs = revisionsOf(ctx, r.st) // the state's code: not under mu
	}
	r.mu.Lock()
	if r.phase != phaseIdle {
		r.mu.Unlock()
		return errors.New("runtime: Run called more than once")
	}
	r.phase = phaseRunning
	r.runCtx = ctx
	// Before any watch or controller starts: they read it.
	r.caches.WithRevisions(revs)

	// Watches first: a kind watch started now bootstraps with every
	// subscription registered so far, which is what fills QController
	// queues (rule Q1).
	r.router.Watch(ctx, r.db.Snapshot().Keys()...)
	r.router.Watch(ctx, r.caches.Keys()...)
	for _, rn := range r.runners {
		r.group.Go(func() { rn.run(ctx, nil) })
	}
	if r.tel.Ring != nil {
		r.group.Go(func() { r.pollTrace(ctx) })
	}
	r.mu.Unlock()

	<-ctx.Done()

	r.mu.Lock()
	r.phase = phaseStopped
	r.mu.Unlock()

	r.group.stopAndWait()
	return nil
}

// newTelemetry returns the telemetry sink of a controller (a QController
// with workers workers when qc is set): nil (every report a no-op) when
// metrics and the trace are off.
func (r *Runtime) newTelemetry(name string, qc bool, workers int) *telemetry.Controller {
	return telemetry.NewController(r.tel, name, qc, workers)
}

// group tracks the goroutines the engine starts (kind watches, controllers,
// deferred wake-ups): Run returns once every one of them exited. Go refuses
// to start one once the group stopped, so that every Add happens before
// the Wait.
type group struct {
	mu sync.Mutex
	// stopped is set by stopAndWait; protected by mu.
	stopped bool
	wg      sync.WaitGroup
}

// Go runs fn on a tracked goroutine and reports true, or reports false
// (running nothing) once the group stopped.
func (g *group) Go(fn func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return false
	}
	g.wg.Go(fn)
	return true
}

// stopAndWait refuses new goroutines and waits for the running ones.
func (g *group) stopAndWait() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
	g.wg.Wait()
}

// revisionsOf returns st's revision reporter when st numbers its changes
// (it answers Revision), nil otherwise; the cached reads are served by
// revision then (see "Read your writes and consistent reads" in the
// package doc). It asks once, when Run starts with cached kinds, within
// revisionProbeTimeout: a state that cannot answer then is served as one
// that does not number its changes. The state's method is user code: a
// panic is no answer.
func revisionsOf(ctx context.Context, st state.State) state.RevisionReporter {
	rr, ok := st.(state.RevisionReporter)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, revisionProbeTimeout)
	defer cancel()
	var err error
	if p := usercode.Call(func() { _, err = rr.Revision(ctx) }); p != nil || err != nil {
		return nil
	}
	return rr
}

// revisionProbeTimeout bounds revisionsOf's question to the state.
const revisionProbeTimeout = 10 * time.Second
