// Package route is the Runtime's router: it watches each input kind once,
// with one WatchKindAggregated with bootstrap contents shared by every
// controller that declares the kind, and delivers every change to the
// kind's subscriptions — a coalescing wake-up for a Controller, a work item
// for a QController (rules C2, C9, Q1, Q4). Routing reads the subscriptions
// from an immutable snapshot, so it neither locks nor scans the other
// controllers nor allocates per change.
//
// A kind's watch goes through three phases, each in a file of its own: it
// collects the kind's first bootstrap and routes it at once when complete
// (bootstrap.go: existing resources fill the QController queues), then
// routes live changes as they come (watch.go); a watch that fails is
// re-established after a backoff, and its bootstrap is routed as a diff
// against what the watch remembers having routed ([Memory]): the resources
// that changed meanwhile, and those that disappeared, as destroyed
// (bootstrap.go, relisted) — or, over a state that resumes kind watches
// and for a kind that is not cached, resumed from the bookmark of the last
// event it routed, with no memory at all (resume.go). The state, its resources and its errors are
// user code: a panic or a malformed event fails the watch (failure.go),
// never the Runtime.
//
// The router depends on exactly what it uses ([Config]): the state, the
// subscriptions, the caches (a cached kind's watch feeds its cache), a
// telemetry sink per kind, the idle notifier, a logger, and a way to start
// a goroutine the Runtime tracks.
package route

import (
	"context"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/observe/histogram"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/runtime/internal/idle"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/state"
)

// Config is what a [Router] needs.
type Config struct {
	// State is the state whose kinds are watched.
	State state.State
	// Subscriptions returns the current subscriptions to a kind (a shared
	// slice, read once per routed batch).
	Subscriptions func(resource.KindKey) []Subscription
	// Caches are the cached kinds, fed by their watches.
	Caches *cache.Set
	// Metrics gives every watched kind a telemetry sink (none when off).
	Metrics bool
	// Idle is pinged after every routed batch.
	Idle *idle.Notifier
	// Logger logs the watches' failures.
	Logger *zap.Logger
	// Go runs fn on a goroutine the Runtime waits for before Run returns,
	// and reports false (running nothing) once the Runtime has stopped.
	Go func(fn func()) bool
	// Scheduler takes the routing decisions: sched.Direct (the default,
	// when nil) delivers every batch at once; a simulator's holds them.
	Scheduler sched.Scheduler
}

// Router owns the kind watches: one per watched kind, shared by every
// controller that declares the kind as an input. Its methods are safe for
// concurrent use.
type Router struct {
	cfg Config

	mu sync.Mutex
	// kinds are the watchers by kind; protected by mu.
	kinds map[resource.KindKey]*kindWatcher
	// tap sees the live changes (SetTap).
	tap tapHolder
}

// New returns a router that watches nothing yet.
func New(cfg Config) *Router {
	return &Router{cfg: cfg, kinds: map[resource.KindKey]*kindWatcher{}}
}

// watcherLocked returns the watcher of k, creating it (not started) when
// missing. The caller holds r.mu.
func (r *Router) watcherLocked(k resource.KindKey) *kindWatcher {
	w := r.kinds[k]
	if w != nil {
		return w
	}
	w = &kindWatcher{
		key:          k,
		st:           r.cfg.State,
		subs:         r.cfg.Subscriptions,
		mem:          seenMap{},
		idle:         r.cfg.Idle,
		logger:       outcome.EngineLogger(r.cfg.Logger.With(zap.Stringer("kind", k))),
		bootstrapped: make(chan struct{}),
		relists:      newRelists(),
		tap:          &r.tap,
	}
	if c := r.cfg.Caches.Get(k); c != nil {
		w.mem = cacheMemory{c}
		w.cached = true
	} else if resumes(r.cfg.State, k) {
		w.mem = noMemory{}
		w.resumable = true
	}
	w.sched = sched.Or(r.cfg.Scheduler)
	if r.cfg.Metrics {
		w.tel = telemetry.NewKind()
	}
	r.kinds[k] = w
	return w
}

// watchers returns every watcher, sorted by kind.
func (r *Router) watchers() []*kindWatcher {
	r.mu.Lock()
	ws := make([]*kindWatcher, 0, len(r.kinds))
	for _, w := range r.kinds {
		ws = append(ws, w)
	}
	r.mu.Unlock()
	slices.SortFunc(ws, func(a, b *kindWatcher) int { return a.key.Compare(b.key) })
	return ws
}

// Watch starts the watches of keys that do not run yet; they run until ctx
// (Run's context) is done.
func (r *Router) Watch(ctx context.Context, keys ...resource.KindKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		w := r.watcherLocked(k)
		if !w.started && r.cfg.Go(func() { w.run(ctx) }) {
			w.started = true
		}
	}
}

// Subscribe runs add, which adds subscriptions to the kinds keys (a
// controller registered during Run), so that the controller sees every
// existing resource of those kinds exactly once: from the first bootstrap
// of a kind's watch when that has not been routed yet (the controller is
// then in the snapshot that routes it), or else from a list of its own.
// It returns the kinds whose first bootstrap was routed before add: the
// ones the controller must list.
//
// The watchers' bootMu, held from before add until this is decided, keeps
// a first bootstrap from being routed in between. They are locked in the
// order of their keys, so that concurrent Subscribes never deadlock; a
// watch goroutine locks only its own.
func (r *Router) Subscribe(keys []resource.KindKey, add func() error) (existing []resource.KindKey, err error) {
	keys = slices.Clone(keys)
	slices.SortFunc(keys, resource.KindKey.Compare)
	keys = slices.Compact(keys)
	r.mu.Lock()
	ws := make([]*kindWatcher, 0, len(keys))
	for _, k := range keys {
		ws = append(ws, r.watcherLocked(k))
	}
	r.mu.Unlock()

	for _, w := range ws {
		w.bootMu.Lock()
	}
	err = add()
	if err == nil {
		for _, w := range ws {
			if w.bootRouted {
				existing = append(existing, w.key)
			}
		}
	}
	for _, w := range ws {
		w.bootMu.Unlock()
	}
	return existing, err
}

// WaitBootstrapped waits until the watches of keys delivered their first
// bootstrap, from when on every change of those kinds is routed as it
// happens; false when ctx is done first. The watches must have been
// started (see [Router.Watch]).
func (r *Router) WaitBootstrapped(ctx context.Context, keys []resource.KindKey) bool {
	r.mu.Lock()
	chans := make([]chan struct{}, 0, len(keys))
	for _, k := range keys {
		chans = append(chans, r.watcherLocked(k).bootstrapped)
	}
	r.mu.Unlock()
	for _, ch := range chans {
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// Listed reports, without waiting, whether the first bootstrap of every
// kind of keys was routed (see WaitBootstrapped).
func (r *Router) Listed(keys []resource.KindKey) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		w := r.kinds[k]
		if w == nil {
			return false // not watched yet
		}
		select {
		case <-w.bootstrapped:
		default:
			return false
		}
	}
	return true
}

// KindMetrics are the counters of one watched kind.
type KindMetrics struct {
	Key                   resource.KindKey
	EventsRouted, Relists uint64
	// DeliveryLag is the histogram of commit → routed.
	DeliveryLag histogram.Snapshot
}

// Metrics returns the counters of every watched kind, sorted by key (zero
// with metrics off).
func (r *Router) Metrics() []KindMetrics {
	ws := r.watchers()
	out := make([]KindMetrics, 0, len(ws))
	for _, w := range ws {
		out = append(out, KindMetrics{Key: w.key, EventsRouted: w.tel.EventsRouted(), Relists: w.tel.Relists(), DeliveryLag: w.tel.DeliveryLag()})
	}
	return out
}
