package runtime

import (
	"time"

	"github.com/resgraph/resgraph/pkg/observe/hotloop"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/state"
)

// Default option values (see the With* options).
const (
	defaultRestartBackoffInitial = 100 * time.Millisecond
	defaultRestartBackoffMax     = time.Minute
	defaultQueueBackoffInitial   = 100 * time.Millisecond
	defaultQueueBackoffMax       = time.Minute
	defaultTraceSize             = trace.DefaultSize
)

// options are what the [Option]s passed to [New] set.
type options struct {
	// cachedKinds are the kinds whose reads are served from an in-memory
	// cache (see [WithCachedResource]).
	cachedKinds []resource.Kind
	// indexes are the custom indexes of cached kinds (see [WithIndex]).
	indexes []index
	// restartBackoffInitial and restartBackoffMax bound the restart
	// backoff of Controllers (rule C6).
	restartBackoffInitial, restartBackoffMax time.Duration
	// queueBackoffInitial and queueBackoffMax bound the per-item retry
	// backoff (rule Q3; see [WithQueueBackoff]).
	queueBackoffInitial, queueBackoffMax time.Duration
	// metrics enables the counters and latency histograms.
	metrics bool
	// traceSize is the number of records the causal trace keeps (see
	// [WithTrace]); 0 turns the trace off.
	traceSize int
	// traceHook, when set, receives the trace's records as they are
	// recorded (see [WithTraceHook]).
	traceHook func(records []trace.Record)
	// hotLoop tunes the hot-loop detector (see [WithHotLoop]).
	hotLoop hotloop.Config
	// leadership runs the controllers under elections (see
	// [WithLeadership]).
	leadership leadershipOptions
	// closedGraph refuses input kinds that no controller writes (see
	// [WithClosedGraph]).
	closedGraph bool
	// badOutsideWriter: WithOutsideWriters was given an unusable kind.
	badOutsideWriter bool
	// outsideWriters are the kinds that writers outside the Runtime are
	// expected to write (see WithOutsideWriters).
	outsideWriters map[resource.KindKey]struct{}
	// healthBound is how long a reconcile may run, and a kind watch stay
	// still, before the Runtime is not live (see [WithHealthBound]).
	healthBound time.Duration
	// scheduler takes the Runtime's scheduling decisions: a simulator's
	// (withScheduler), or sched.Direct.
	scheduler sched.Scheduler
}

// withScheduler gives the Runtime a simulator's scheduler: the one seam of
// package runtimetest/sim, handed out through testhook.WithScheduler.
func withScheduler(s sched.Scheduler) Option {
	return func(o *options) { o.scheduler = s }
}

// Option configures a [Runtime] (see [New]).
type Option func(*options)

// defaultOptions returns the defaults: no cached kind, restart and item
// backoffs from 100 ms to 1 min, metrics on, a trace of trace.DefaultSize
// records, the hot-loop detector's defaults.
func defaultOptions() options {
	return options{
		traceSize:             defaultTraceSize,
		restartBackoffInitial: defaultRestartBackoffInitial,
		restartBackoffMax:     defaultRestartBackoffMax,
		queueBackoffInitial:   defaultQueueBackoffInitial,
		queueBackoffMax:       defaultQueueBackoffMax,
		metrics:               true,
		healthBound:           DefaultHealthBound,
	}
}

// DefaultHealthBound is the default of [WithHealthBound].
const DefaultHealthBound = time.Minute

// WithHealthBound sets how long a controller may stay in one reconcile (a
// Controller's pass, a QController's item), and a kind watch stay down or
// its router stuck with changes it does not route, before the Runtime is
// not live (see observe.Health; [DefaultHealthBound] by default). A bound
// that is not positive is refused by [New].
func WithHealthBound(d time.Duration) Option {
	return func(o *options) { o.healthBound = d }
}

// WithCachedResource makes the Runtime keep an in-memory copy of every
// resource of the kind ns/typ, fed by the kind's shared watch, and serve
// controller reads of that kind (Get and List) from it. Writes made through
// a controller's runtime update the cache at once, so a controller always
// reads its own writes.
func WithCachedResource(ns resource.Namespace, typ resource.Type) Option {
	return func(o *options) { o.cachedKinds = append(o.cachedKinds, resource.NewKind(ns, typ)) }
}

// WithRestartBackoff sets the exponential restart backoff of Controllers
// whose Run fails or panics (rule C6): the first restart waits initial, each
// further consecutive one twice as long, capped at max (by default 100 ms,
// capped at 1 min).
func WithRestartBackoff(initial, maxDelay time.Duration) Option {
	return func(o *options) { o.restartBackoffInitial, o.restartBackoffMax = initial, maxDelay }
}

// WithQueueBackoff sets the per-item exponential retry backoff (rule Q3):
// initial after the first consecutive failure of an item, doubling, capped
// at max (by default 100 ms, capped at 1 min). It applies to QController
// items, and to the inputs that the Controllers of package generic
// (transform, cleanup) retry themselves; a controller's own
// [controller.RetryPolicy] overrides it.
func WithQueueBackoff(initial, maxDelay time.Duration) Option {
	return func(o *options) { o.queueBackoffInitial, o.queueBackoffMax = initial, maxDelay }
}

// WithMetrics turns the Runtime's counters on or off (on by default). With
// metrics off, the statuses of [Runtime.Observe] still report each controller's
// state and last error; the counters stay zero.
func WithMetrics(enabled bool) Option {
	return func(o *options) { o.metrics = enabled }
}

// WithTrace sizes the Runtime's causal trace: a ring that keeps the newest
// size records (commits, routing, reconcile starts and ends with their
// causes, queue retries and requeues with their due times, crashes,
// restarts, finalizer waits, hot loops), read by the Observer's Trace. It is
// on by default with trace.DefaultSize records; 0 turns it off, and with it
// the hot-loop detection, which reads the trace. A negative size is an
// invalid-class error.
func WithTrace(size int) Option {
	return func(o *options) { o.traceSize = size }
}

// WithTraceHook streams the trace out: while the Runtime runs, hook is
// called with the records recorded since its previous call, oldest first,
// from one Runtime goroutine, every 100 ms and as soon as half the
// trace's size was recorded since its previous call (a Lost record first
// when more records than the trace keeps came in between: only when the
// hook, or the Runtime's reading, cannot keep up with the writers).
// The hook is user code: it may write to a file or export to a tracing
// system, and should return promptly (the records pile up in the ring
// meanwhile); it must not keep the slice. A panic in it is logged and the
// hook is not called again. It needs the trace on.
func WithTraceHook(hook func(records []trace.Record)) Option {
	return func(o *options) { o.traceHook = hook }
}

// WithHotLoop tunes the hot-loop detection (the defaults of package
// hotloop: a loop is a cycle of controllers each writing, at 10 commits
// per second or more, mostly because of the previous one's change,
// sustained over 2 windows of 500 ms; it ends after 5 s without).
func WithHotLoop(cfg hotloop.Config) Option {
	return func(o *options) { o.hotLoop = cfg }
}

// WithClosedGraph makes an input kind that no registered controller
// outputs an error, for a daemon whose graph is closed (every kind its
// controllers read is written by one of them). Without it such an input is
// allowed — users and other processes may write the kind — but said: a
// WARN naming the controller and the kind (once, when Run starts or when
// the controller or the input is added during Run), a mark on the
// dependency graph (controller.DependencyEdge.NoWriter), and a line in the
// controller's explanation. With it, Run fails at once, before starting
// anything, when a registered controller has such an input, and a
// registration (or an UpdateInputs) during Run that would add one fails;
// the errors are of the invalid class and name the controller and the kind.
// An output that declares no namespace (controller.Output.Namespace) writes
// its type in every namespace, for this check.
func WithClosedGraph() Option {
	return func(o *options) { o.closedGraph = true }
}

// WithOutsideWriters declares kinds that writers outside the Runtime —
// users, other processes, a daemon's API — are expected to write: an
// input of one of these kinds that no registered controller outputs is
// no mistake. It is not warned about, the dependency graph marks its
// edges OutsideWriter ("outside writer") instead of NoWriter ("no
// writer"), explain says so, and [WithClosedGraph] accepts it. Kinds are
// namespace and type (resource.NewKind, typed.Kind); a kind with an
// empty namespace or type is refused by New.
func WithOutsideWriters(kinds ...resource.Kind) Option {
	return func(o *options) {
		if o.outsideWriters == nil {
			o.outsideWriters = map[resource.KindKey]struct{}{}
		}
		for _, k := range kinds {
			if k == nil || k.Namespace() == "" || k.Type() == "" {
				o.badOutsideWriter = true
				continue
			}
			o.outsideWriters[resource.KindOf(k)] = struct{}{}
		}
	}
}

// outsideWriter reports whether the kind ns/typ was declared written by
// outside writers.
func (o *options) outsideWriter(ns resource.Namespace, typ resource.Type) bool {
	_, ok := o.outsideWriters[resource.KindOf(resource.NewKind(ns, typ))]
	return ok
}

// validate reports the first unusable option as an invalid-class error.
func (o *options) validate() error {
	if o.badOutsideWriter {
		return state.NewInvalidError(nil, "runtime options: WithOutsideWriters: a nil kind or one with an empty namespace or type: name each kind by its namespace and type")
	}
	for _, k := range o.cachedKinds {
		if k.Namespace() == "" || k.Type() == "" {
			return state.NewInvalidError(nil, "runtime options: cached resource %s: empty namespace or type", resource.KindString(k))
		}
	}
	if err := o.validateIndexes(); err != nil {
		return err
	}
	if o.restartBackoffInitial <= 0 || o.restartBackoffMax < o.restartBackoffInitial {
		return state.NewInvalidError(nil, "runtime options: restart backoff: need 0 < initial (%v) <= max (%v)", o.restartBackoffInitial, o.restartBackoffMax)
	}
	if o.traceSize < 0 {
		return state.NewInvalidError(nil, "runtime options: trace size %d: need >= 0 (0 turns the trace off)", o.traceSize)
	}
	if o.traceHook != nil && o.traceSize == 0 {
		return state.NewInvalidError(nil, "runtime options: a trace hook needs the trace on (WithTrace(0) turns it off)")
	}
	if o.queueBackoffInitial <= 0 || o.queueBackoffMax < o.queueBackoffInitial {
		return state.NewInvalidError(nil, "runtime options: queue backoff: need 0 < initial (%v) <= max (%v)", o.queueBackoffInitial, o.queueBackoffMax)
	}
	if o.healthBound <= 0 {
		return state.NewInvalidError(nil, "runtime options: health bound %v: need > 0", o.healthBound)
	}
	return nil
}
