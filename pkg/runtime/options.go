package runtime

import (
	"time"

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
)

// Options configure a [Runtime]. Build them with [Option] functions passed to
// [New]; [DefaultOptions] returns the starting point.
type Options struct {
	// CachedKinds are the kinds whose reads are served from an in-memory
	// cache (see [WithCachedResource]).
	CachedKinds []resource.Kind
	// RestartBackoffInitial and RestartBackoffMax bound the restart
	// backoff of Controllers (rule C6).
	RestartBackoffInitial, RestartBackoffMax time.Duration
	// QueueBackoffInitial and QueueBackoffMax bound the per-item retry
	// backoff of QControllers (rule Q3).
	QueueBackoffInitial, QueueBackoffMax time.Duration
	// Metrics enables the counters of [Runtime.Metrics].
	Metrics bool
}

// Option configures a [Runtime].
type Option func(*Options)

// DefaultOptions returns the defaults: no cached kind, restart backoff from
// [DefaultRestartBackoffInitial] to [DefaultRestartBackoffMax], item backoff
// from [DefaultQueueBackoffInitial] to [DefaultQueueBackoffMax], metrics on.
func DefaultOptions() Options {
	return Options{
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

// validate reports the first unusable option as an invalid-class error.
func (o *Options) validate() error {
	for _, k := range o.CachedKinds {
		if k.Namespace() == "" || k.Type() == "" {
			return state.NewInvalidError(nil, "runtime options: cached resource %s: empty namespace or type", resource.KindString(k))
		}
	}
	if o.RestartBackoffInitial <= 0 || o.RestartBackoffMax < o.RestartBackoffInitial {
		return state.NewInvalidError(nil, "runtime options: restart backoff: need 0 < initial (%v) <= max (%v)", o.RestartBackoffInitial, o.RestartBackoffMax)
	}
	if o.QueueBackoffInitial <= 0 || o.QueueBackoffMax < o.QueueBackoffInitial {
		return state.NewInvalidError(nil, "runtime options: queue backoff: need 0 < initial (%v) <= max (%v)", o.QueueBackoffInitial, o.QueueBackoffMax)
	}
	return nil
}
