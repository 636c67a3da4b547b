package runtime

import (
	"time"

	"github.com/resgraph/resgraph/pkg/observe/hotloop"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Default option values (see [DefaultOptions]).
const (
	// DefaultRestartBackoffInitial is the delay before the first restart of
	// a crashed Controller.
	DefaultRestartBackoffInitial = 100 * time.Millisecond
	// DefaultRestartBackoffMax caps the restart delay.
	DefaultRestartBackoffMax = time.Minute
	// DefaultQueueBackoffInitial is the retry delay of a QController item
	// after its first consecutive failure.
	DefaultQueueBackoffInitial = 100 * time.Millisecond
	// DefaultQueueBackoffMax caps the retry delay of a QController item.
	DefaultQueueBackoffMax = time.Minute
	// DefaultTraceSize is the number of events the causal trace keeps:
	// trace.DefaultSize, 4096 events, about 1.1 MiB.
	DefaultTraceSize = trace.DefaultSize
)

// Options configure a [Runtime]. Build them with [Option] functions passed to
// [New]; [DefaultOptions] returns the starting point.
type Options struct {
	// CachedKinds are the kinds whose reads are served from an in-memory
	// cache (see [WithCachedResource]).
	CachedKinds []resource.Kind
	// Indexes are the custom indexes of cached kinds (see [WithIndex]).
	Indexes []Index
	// RestartBackoffInitial and RestartBackoffMax bound the restart
	// backoff of Controllers (rule C6).
	RestartBackoffInitial, RestartBackoffMax time.Duration
	// QueueBackoffInitial and QueueBackoffMax bound the per-item retry
	// backoff of QControllers (rule Q3).
	QueueBackoffInitial, QueueBackoffMax time.Duration
	// Metrics enables the counters and latency histograms of
	// [Runtime.Metrics].
	Metrics bool
	// TraceSize is the number of events the causal trace keeps (see
	// [WithTrace]); 0 turns the trace off.
	TraceSize int
	// TraceHook, when set, receives the trace's events as they are
	// recorded (see [WithTraceHook]).
	TraceHook func(events []trace.Event)
	// HotLoop tunes the hot-loop detector (see [WithHotLoop]).
	HotLoop hotloop.Config
}

// Option configures a [Runtime].
type Option func(*Options)

// DefaultOptions returns the defaults: no cached kind, restart backoff from
// [DefaultRestartBackoffInitial] to [DefaultRestartBackoffMax], item backoff
// from [DefaultQueueBackoffInitial] to [DefaultQueueBackoffMax], metrics on,
// a trace of [DefaultTraceSize] events, the hot-loop detector's defaults.
func DefaultOptions() Options {
	return Options{
		TraceSize:             DefaultTraceSize,
		RestartBackoffInitial: DefaultRestartBackoffInitial,
		RestartBackoffMax:     DefaultRestartBackoffMax,
		QueueBackoffInitial:   DefaultQueueBackoffInitial,
		QueueBackoffMax:       DefaultQueueBackoffMax,
		Metrics:               true,
	}
}

// WithCachedResource makes the engine keep an in-memory copy of every
// resource of the kind ns/typ, fed by the kind's shared watch, and serve
// controller reads of that kind (Get and List) from it. Writes made through
// a controller's runtime update the cache at once, so a controller always
// reads its own writes.
func WithCachedResource(ns resource.Namespace, typ resource.Type) Option {
	return func(o *Options) { o.CachedKinds = append(o.CachedKinds, resource.NewKind(ns, typ)) }
}

// WithRestartBackoff sets the exponential restart backoff of Controllers
// whose Run fails or panics (rule C6): the first restart waits initial, each
// further consecutive one twice as long, capped at max.
func WithRestartBackoff(initial, maxDelay time.Duration) Option {
	return func(o *Options) { o.RestartBackoffInitial, o.RestartBackoffMax = initial, maxDelay }
}

// WithQueueBackoff sets the per-item exponential retry backoff of
// QControllers (rule Q3): initial after the first consecutive failure of an
// item, doubling, capped at max.
func WithQueueBackoff(initial, maxDelay time.Duration) Option {
	return func(o *Options) { o.QueueBackoffInitial, o.QueueBackoffMax = initial, maxDelay }
}

// WithMetrics turns the engine's counters on or off (on by default). With
// metrics off, [Runtime.ControllerStatuses] still reports each controller's
// state and last error; the counters stay zero.
func WithMetrics(enabled bool) Option {
	return func(o *Options) { o.Metrics = enabled }
}

// WithTrace sizes the engine's causal trace: a ring that keeps the newest
// size events (commits, routing, reconcile starts and ends with their
// causes, queue retries and requeues with their due times, crashes,
// restarts, finalizer waits, hot loops), read by [Runtime.Trace]. It is on
// by default with [DefaultTraceSize] events; 0 turns it off, and with it
// the hot-loop detection, which reads the trace. A negative size is an
// invalid-class error.
func WithTrace(size int) Option {
	return func(o *Options) { o.TraceSize = size }
}

// WithTraceHook streams the trace out: while the engine runs, hook is
// called with the events recorded since its previous call, oldest first,
// from one engine goroutine, at most every [TracePollInterval] (a Lost
// event first when more events than the trace keeps came in between).
// The hook is user code: it may write to a file or export to a tracing
// system, and should return promptly (the events pile up in the ring
// meanwhile); it must not keep the slice. A panic in it is logged and the
// hook is not called again. It needs the trace on.
func WithTraceHook(hook func(events []trace.Event)) Option {
	return func(o *Options) { o.TraceHook = hook }
}

// WithHotLoop tunes the hot-loop detection (the defaults of package
// hotloop: a loop is a cycle of controllers each writing, at 10 commits
// per second or more, mostly because of the previous one's change,
// sustained over 2 windows of 500 ms; it ends after 5 s without).
func WithHotLoop(cfg hotloop.Config) Option {
	return func(o *Options) { o.HotLoop = cfg }
}

// validate reports the first unusable option as an invalid-class error.
func (o *Options) validate() error {
	for _, k := range o.CachedKinds {
		if k.Namespace() == "" || k.Type() == "" {
			return state.NewInvalidError(nil, "runtime options: cached resource %s: empty namespace or type", resource.KindString(k))
		}
	}
	if err := o.validateIndexes(); err != nil {
		return err
	}
	if o.RestartBackoffInitial <= 0 || o.RestartBackoffMax < o.RestartBackoffInitial {
		return state.NewInvalidError(nil, "runtime options: restart backoff: need 0 < initial (%v) <= max (%v)", o.RestartBackoffInitial, o.RestartBackoffMax)
	}
	if o.TraceSize < 0 {
		return state.NewInvalidError(nil, "runtime options: trace size %d: need >= 0 (0 turns the trace off)", o.TraceSize)
	}
	if o.TraceHook != nil && o.TraceSize == 0 {
		return state.NewInvalidError(nil, "runtime options: a trace hook needs the trace on (WithTrace(0) turns it off)")
	}
	if o.QueueBackoffInitial <= 0 || o.QueueBackoffMax < o.QueueBackoffInitial {
		return state.NewInvalidError(nil, "runtime options: queue backoff: need 0 < initial (%v) <= max (%v)", o.QueueBackoffInitial, o.QueueBackoffMax)
	}
	return nil
}
