package runtime

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/runtime/internal/idle"
	"github.com/resgraph/resgraph/pkg/runtime/internal/route"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
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

// runner is a registered Controller or QController, as the Runtime sees it.
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
	// health says why the controller is not ready and why it is not live
	// at now ("" when it is), with bound the Runtime's health bound (see
	// observe.Health).
	health(now time.Time, bound time.Duration) (notReady, notLive string)
}

// Runtime is the Runtime: it registers Controllers and QControllers, watches
// their inputs, routes changes to them and runs them. What a registered
// controller receives is stated on [Runtime.RegisterController] and
// [Runtime.RegisterQController], the lifecycle on [Runtime.Run]; what the
// Runtime guarantees to every controller follows.
//
// Routing (rules C2, C9, Q1, Q4). Every change of a declared input kind
// reaches every controller that declared it, in the order the state applied
// the changes:
//
//   - a Controller input wakes the controller (wake-ups coalesce);
//   - an input with an ID only fires for that ID;
//   - InputDestroyReady and InputQMappedDestroyReady fire only for the
//     controller's own outputs (owner = controller name) that are tearing
//     down with no finalizers; the destruction itself does not fire them;
//   - InputQPrimary queues the changed pointer; InputQMapped queues a map
//     item that calls MapInput and queues the pointers it returns.
//
// A mapped input (InputQMapped, or an InputQMappedDestroyReady output that
// goes before its map item runs) that was destroyed reaches MapInput as a
// [controller.DestroyedInput] carrying its last stored version (rule Q4),
// however the destruction was seen: a live event, changes coalesced into
// one map item (or into one event of a slow watch), or a re-list after a
// watch failure (the last version the Runtime routed). The Runtime keeps
// that version for the map item until the item is done (succeeded, or
// parked); an input created again before its item runs is passed as a
// plain pointer, carrying the destroyed version as its previous one.
//
// A change of an InputQMapped input that changed its metadata (labels,
// annotations, owner, phase, finalizers) keeps the version before it for
// the map item (rule Q4, extended): MapInput receives a
// [controller.ChangedInput] (or a DestroyedInput) carrying the version
// before the first such change not yet mapped, kept until the item is
// done. A change found by a re-list carries the version last routed as
// its previous one.
//
// A QController's Reconcile never goes on with a version of an
// InputQMapped input that routing skips (rule Q4, extended): over a state
// that numbers its changes, a read of such a kind that goes to the state
// (the kind is not cached, or the read is uncached) is taken again, once
// routing has caught up, while the kind changed after the revision routing
// had reached when the read started. Routing has then seen every version
// read, and the next change of each reaches MapInput with it as the
// previous version — even when a lagging watch coalesces an input's
// creation and relabel into one Created, or a re-list finds only the last
// of them. One read waits for routing at most 5 seconds in all (a watch
// that is down or far behind), then returns what it read last. Reads of a
// cached kind are of versions routing delivers.
//
// A QController's queue starts with every existing resource of each primary
// input (of its ID, for an input with an ID), and a map item for every
// existing resource of each mapped input (for a mapped destroy-ready input,
// every own output that is already tearing down with no finalizers, so that
// none is left behind when the Runtime restarts) — each existing resource
// once, whether the QController was registered before Run or during it.
// Each input kind is watched once, from the start of the first controller
// that declares it until Run ends, whoever else declares it later; a large
// kind delays only the controllers that declare it.
//
// Access control (rules C3, C4, C5). Controllers reach the state only
// through their runtime, which checks every call:
//
//   - reads (Get, ContextWithTeardown) on declared inputs (an input with
//     an ID covers that ID only) and on the controller's output types in
//     any namespace; List on input kinds declared without an ID and on
//     output types;
//   - writes (Create, Update, Modify, ModifyWithResult, Teardown, Destroy)
//     on declared output types only, always as the controller: the owner is
//     the controller's name (none with WithCreateNoOwner or
//     WithModifyNoOwner; the owner given with controller.WithOwner for
//     Teardown and Destroy), so writing a shared output another controller
//     owns is the state's owner conflict (a Create of a resource that exists
//     with another owner is reported as an owner conflict too, which is
//     still a conflict);
//   - finalizers (AddFinalizer, RemoveFinalizer) on strong inputs,
//     QController primary inputs, and outputs the controller owns.
//
// A refused call writes nothing and returns an error that names the
// controller, the operation and the resource;
// [controller.IsAccessDeniedError] tells it apart. Bad arguments (nil or empty pointers) are
// invalid-class errors.
//
// Read your writes and consistent reads. A controller always reads its own
// writes. With [WithCachedResource] a kind's reads are served from an
// in-memory copy fed by the kind's watch (before the watch bootstrapped,
// from the state).
//
// Over a state that numbers its changes ([state.RevisionReporter], as
// inmem does), every read through a controller's runtime, cached or not,
// obeys this, for every kind:
//
//   - Floor. A read reflects the state at a revision R (the resources of the
//     kind read are those of the state at R: every change of the kind up to
//     R, none after) with R at or after the controller's floor: the
//     revision of its own last write (of any kind, by any of its
//     goroutines, that returned before the read started) and of every
//     change routed to it before the read started — in particular the
//     change that woke the Controller or queued the QController item being
//     reconciled. So a resource destroyed before the change that woke a
//     controller is never read as existing, and a controller never reads a
//     kind older than its own last write.
//   - Told revision. [state.WithGetRevision] / [state.WithListRevision] on a
//     read store R. Reads of several kinds are not taken at one revision
//     (each is at its own R, each at or after the floor); a controller that
//     needs one cut compares their revisions and reads again.
//
// A cached read is served from the cache when the cache is at the floor or
// later, or when the state confirms (its KindRevision) that the kind has no
// change the cache lacks; otherwise it goes to the state. A cache never
// makes a read wait for its watch.
//
// Over a state that does not number its changes, reads report revision 0,
// and the cache guarantees less: a controller reads its own writes at once,
// and a cached resource never goes back to an older version; a cached read
// may lag changes made by others.
//
// A cached kind may have custom indexes ([WithIndex]: a function from a
// resource to keys): a controller lists the resources under one key with
// [controller.IndexReader] (safe.ReaderListByIndex), reading only those.
// A List by index returns exactly what a List of the kind filtered by the
// index function would, under every change (label changes and destructions
// included) and the controller's own writes.
//
// Watch robustness. A kind watch that fails — the call fails or panics, an
// Errored event (such as a buffer overrun from a foreign State) arrives, an
// event cannot be routed (see "User code"), or the stream is closed — never
// stops the Runtime: a warning is logged, the re-list is counted, and the
// watch is re-established with a fresh bootstrap after a short backoff. What
// changed while it was down is routed then, exactly: the resources that
// changed meanwhile, and those that disappeared, as destroyed; an unchanged
// resource is not routed again.
//
// [Runtime.Relist] does the same on demand (a daemon that suspects its
// view, after something outside it happened): it re-lists a watched kind, routes what
// differs, and returns once every controller affected has been woken or
// has its items queued; the re-list is counted with the others.
//
// User code. Everything the Runtime calls that it did not write is user code:
// a controller's methods, the error it returns (Error, Unwrap, As; a
// RequeueError's Interval), the pointers MapInput returns, the resources and
// errors a State delivers (Metadata, DeepCopy; the State's own methods, for
// a foreign State). The Runtime never calls user code while it holds a lock
// of its own, and always inside a recovery: a panic fails only what called
// it — a Controller's Run (restarted), a QController item (retried), a kind
// watch (re-established with a re-list), a QController's initial list
// (retried) — and is logged with the stack of the panicking goroutine. An
// error is rendered to its text once; logs and statuses carry the text, so a
// panicking Error method is a failure like any other ("error of type T:
// Error panicked: ...").
//
// A typed-nil error — a nil pointer in a non-nil error interface, such as
// `var err *MyError; return err` — is a failure, never a success: it is
// almost always a bug, and treating it as nil would hide it. Its message
// names the type: "Run returned a typed-nil error (*pkg.MyError)",
// "Reconcile T(ns/id): returned a typed-nil error (*controller.RequeueError)".
// An error chain holding a typed-nil *controller.RequeueError is a failure
// too.
//
// A watch event that cannot be routed — a change without a resource, a
// resource whose Metadata panics or returns nil, a resource of another kind
// or with an empty ID — fails the kind's watch like an Errored event (see
// "Watch robustness"): routing around it could lose the change it stood
// for.
//
// Logs. The Runtime logs its own messages through the logger given to [New],
// with a "controller" (or "kind") field, and never attaches zap's automatic
// stack traces to them, whatever the logger's configuration (zap's
// development preset adds one from WARN up): a failure the Runtime retries is
// logged at WARN with the error's text and the delay of the retry —
// "reconcile failed; retrying after backoff" (fields item, error, backoff),
// "MapInput failed; ...", "...; requeued after the interval" (interval),
// "controller failed; restarting after backoff", "initial list of an input
// failed; ...", "kind watch failed; re-listing" (retry_in). A panic is a
// bug, not a transient failure: it is logged at ERROR with the panic's value
// and the stack of the panicking goroutine as the "stack" field. A MapInput
// returning a pointer of an undeclared kind is logged at ERROR once per
// kind. By default the Runtime has no retry budget: it never gives up on an
// item or a controller; only a QController's RetryPolicy.MaxAttempts parks
// an item until its next change — and an access denial (rule C3), which
// is a programming error no retry can fix: an item denied access (a
// QController's, or an input of the generic Controllers) is parked at once
// until it changes ("reconcile was denied access; parked until the item
// changes", at ERROR), and a Controller whose Run returns one is not
// restarted until one of its inputs changes (its state "parked",
// "controller was denied access; parked until an input changes", at
// ERROR). Either shows its error in the status, explain and the debug
// pages, and as a trace record of type parked.
type Runtime struct {
	// Its parts live in internal packages, each given only what it uses:
	// the router (internal/route) watches the input kinds and delivers
	// changes; a Controller's runner (internal/crunner) and a
	// QController's (internal/qrunner) run the user code and judge its
	// outcomes with one switch (internal/outcome); each controller's
	// adapter (internal/adapter) checks and performs its reads and writes;
	// the caches (internal/cache), the dependency database
	// (internal/dependency) and the work queue (internal/queue) are
	// leaves; statuses (internal/status) and metrics (internal/telemetry,
	// a nil sink when metrics are off) are reported by the parts as they
	// work. The Runtime itself only wires them together and owns the
	// lifecycle.

	st     state.State
	logger *zap.Logger
	opts   options
	db     *dependency.DB[*route.Subscriber]
	router *route.Router
	caches *cache.Set
	// tel is what the telemetry sinks share: clock, trace, metrics on.
	tel *telemetry.Engine
	// sched takes the scheduling decisions: sched.Direct, or a
	// simulator's scheduler given at construction; never changed.
	sched sched.Scheduler
	// loops are the Runtime's hot-loop findings (loopState, in
	// observe.go; the detector is pkg/observe/hotloop).
	loops loopState
	// idle wakes the callers of runtimetest.Settle (see activity.go).
	idle idle.Notifier
	// group tracks every goroutine the Runtime starts.
	group group

	mu sync.Mutex
	// phase is the run phase; protected by mu.
	phase runPhase
	// runCtx is the context of Run, set in phaseRunning; protected by mu.
	runCtx context.Context
	// runners are the registered controllers by name; protected by mu.
	runners map[string]runner
	// leaders are the elections of the controllers (nil without
	// leadership; see leadership.go).
	leaders *leaders
	// warnedUnwritten are the input kinds without a writer already logged
	// (checks.go); protected by mu.
	warnedUnwritten map[dependency.Unwritten]struct{}
	// adapters are the controllers' adapters, commits the CommitTap they
	// log their commits to (tap.go); protected by mu.
	adapters []*adapter.Adapter
	commits  adapter.CommitLog
}

// New returns a Runtime over st that logs to logger (zap.NewNop() when
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
	if err := o.validateLeadership(st); err != nil {
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
		sched:   sched.Or(o.scheduler),
	}
	r.addIndexes()
	r.leaders = newLeaders(r, o.leadership)
	r.router = route.New(route.Config{
		State:         st,
		Subscriptions: func(k resource.KindKey) []route.Subscription { return r.db.Snapshot().For(k) },
		Caches:        r.caches,
		Metrics:       o.metrics,
		Idle:          &r.idle,
		Logger:        logger,
		Go:            r.group.Go,
		Scheduler:     r.sched,
	})
	return r, nil
}

// Run starts every registered controller and the watches of their inputs,
// and runs until ctx is canceled (rule E1). It returns nil once every
// goroutine it started has exited — for controllers that honour their
// context, promptly after the cancel. Run may be called once per Runtime; a
// second call, during or after the first, fails at once. Controllers may be
// registered before or during Run (rule E3): one registered during Run
// starts at once and receives the current state of its inputs like any
// other; registration after Run returned fails.
func (r *Runtime) Run(ctx context.Context) error {
	var revs state.RevisionReporter
	if ctx != nil && len(r.caches.Keys()) > 0 {
		revs = revisionsOf(ctx, r.st) // the state's code: not under mu
	}
	defer r.watchMutations()() // the state's code: not under mu
	r.mu.Lock()
	if r.phase != phaseIdle {
		r.mu.Unlock()
		return errors.New("runtime: Run called more than once")
	}
	if err := r.checkWritersAtRunLocked(); err != nil {
		r.phase = phaseStopped
		r.mu.Unlock()
		r.idle.Ping()
		return err
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
	r.idle.Ping() // a quiescence check waiting for Run to start

	<-ctx.Done()

	r.mu.Lock()
	r.phase = phaseStopped
	r.mu.Unlock()

	r.group.stopAndWait()
	return nil
}

// newTelemetry returns the telemetry sink of a controller (running
// workers workers at once; a QController when items): nil (every report
// a no-op) when metrics and the trace are off.
func (r *Runtime) newTelemetry(name string, workers int, items bool) *telemetry.Controller {
	if items {
		return telemetry.NewQController(r.tel, name, workers)
	}
	return telemetry.NewController(r.tel, name, workers)
}

// group tracks the goroutines the Runtime starts (kind watches, controllers,
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
// Runtime doc). It asks once, when Run starts with cached kinds, within
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
