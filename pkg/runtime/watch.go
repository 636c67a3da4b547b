package runtime

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/state"
)

// Re-establishing a failed kind watch backs off between these bounds; a
// watch that bootstrapped resets the backoff.
const (
	watchRetryInitial = 50 * time.Millisecond
	watchRetryMax     = 10 * time.Second
	// watchBuffer is the capacity, in batches, of a kind watch's channel.
	watchBuffer = 16
	// scratchKeep is the capacity of routing scratch storage kept after the
	// first bootstrap; larger storage (a large initial fill) is released.
	scratchKeep = 1024
)

// seenEntry is what the router remembers of a resource it routed: enough
// to tell, after a re-list, whether the resource changed meanwhile.
type seenEntry struct {
	created int64 // Created().UnixNano(): tells generations apart
	version uint64
}

func seenOf(md *resource.Metadata) seenEntry {
	return seenEntry{created: md.Created().UnixNano(), version: md.Version().Value()}
}

// kindWatcher runs the one watch of a kind and routes its changes to the
// kind's subscriptions (see routeBatch).
type kindWatcher struct {
	rt    *Runtime
	kind  resource.Kind
	cache *kindCache // nil unless the kind is cached
	stats kindStats
	key   dependency.Key
	// progress is what the watch has routed (see activity.go).
	progress watchProgress

	// started is set once the watch goroutine was started; protected by
	// rt.mu.
	started bool
	// bootstrapped is closed when the first watch delivered its bootstrap
	// contents: from then on every change is routed as it happens.
	bootstrapped chan struct{}

	// bootMu makes the routing of the first bootstrap's contents atomic
	// with respect to registrations during Run, which hold it while they
	// add their controller (see Runtime.addLocked): a controller is either
	// in the snapshot that routes the whole first bootstrap, or registered
	// after it and lists the kind itself. Never held while waiting.
	bootMu sync.Mutex
	// bootRouted is set once the contents of the first bootstrap were
	// routed; protected by bootMu.
	bootRouted bool

	// The fields below are owned by the watch goroutine.

	// seen holds every resource of the kind the watch reported as present.
	seen map[resource.ID]seenEntry
	// live is set once a watch delivered its bootstrap: later watches are
	// re-lists.
	live bool
	// boot collects the contents of the first bootstrap until it is
	// complete, and bootMetas their metadata; they are then routed at once.
	boot      []state.Event
	bootMetas []*resource.Metadata
	scratch   []qkey
	// out, outMetas and metas are reused per batch.
	out      []state.Event
	outMetas []*resource.Metadata
	metas    []*resource.Metadata
	// inspect is the event whose resource's Metadata is being called (see
	// metadataOf), nil otherwise.
	inspect *state.Event
}

func newKindWatcher(rt *Runtime, k dependency.Key) *kindWatcher {
	return &kindWatcher{
		rt:    rt,
		key:   k,
		kind:  resource.NewKind(k.Namespace, k.Type),
		cache: rt.caches.get(k),
		seen:  map[resource.ID]seenEntry{},

		bootstrapped: make(chan struct{}),
	}
}

// run watches the kind until ctx is done. A watch that fails (the call
// fails, an Errored event arrives, or the state closes the stream) is
// re-established with a re-list, and whatever changed meanwhile is routed as
// if it had been watched (rule: watch robustness, see the package doc).
func (w *kindWatcher) run(ctx context.Context) {
	bo := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(watchRetryInitial),
		backoff.WithMaxInterval(watchRetryMax),
		backoff.WithMaxElapsedTime(0),
	)
	logger := engineLogger(w.rt.logger.With(zap.String("kind", resource.KindString(w.kind))))
	for {
		err := w.watchOnce(ctx, bo)
		w.progress.down()
		if ctx.Err() != nil {
			return
		}
		if w.rt.metrics {
			w.stats.relists.Add(1)
		}
		delay := bo.NextBackOff()
		logger.Warn("kind watch failed; re-listing", zap.String("error", watchErrorText(err)), zap.Duration("retry_in", delay))

		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// watchOnce runs one watch of the kind with bootstrap contents until it
// fails or ctx is done. The first bootstrap's contents are collected and
// routed at once when complete (see bootMu); a failed first bootstrap is
// dropped and starts over. A later watch is a re-list: resources whose
// generation and version match what was seen before are not routed again,
// and resources seen before but absent from the new bootstrap are routed
// as destroyed.
func (w *kindWatcher) watchOnce(ctx context.Context, bo *backoff.ExponentialBackOff) (err error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = w.metadataPanic(p)
		}
	}()
	defer func() {
		// A first bootstrap cut short starts over.
		clear(w.boot)
		clear(w.bootMetas)
		w.boot, w.bootMetas = w.boot[:0], w.bootMetas[:0]
	}()

	ch := make(chan []state.Event, watchBuffer)
	if p := usercode.Call(func() {
		err = w.rt.st.WatchKindAggregated(wctx, w.kind, ch, state.WithBootstrapContents(true))
	}); p != nil {
		return watchFailure{msg: "the state's WatchKindAggregated panicked: " + usercode.Sprint(p.Value)}
	}
	if err != nil {
		return watchFailure{msg: usercode.ErrorText(err)}
	}
	w.progress.started(ch)

	relist := w.live
	var present map[resource.ID]struct{}
	if relist {
		present = make(map[resource.ID]struct{}, len(w.seen))
	}
	bootstrapping := true
	for {
		var batch []state.Event
		select {
		case <-ctx.Done():
			return ctx.Err()
		case b, ok := <-ch:
			if !ok {
				return watchFailure{msg: "stream closed by the state"}
			}
			batch = b
			w.progress.received()
		}
		metas, werr := w.metadataOf(batch)
		if werr != nil {
			return werr
		}

		out, outMetas := w.out[:0], w.outMetas[:0]
	events:
		for i := range batch {
			ev := &batch[i]
			switch ev.Type {
			case state.Created, state.Updated, state.Destroyed:
				md := metas[i]
				if bootstrapping && !relist {
					// Routed when complete.
					w.boot = append(w.boot, *ev)
					w.bootMetas = append(w.bootMetas, md)
					continue
				}
				if ev.Type == state.Destroyed {
					delete(w.seen, md.ID())
				} else {
					e := seenOf(md)
					if bootstrapping { // a re-list
						present[md.ID()] = struct{}{}
						if old, ok := w.seen[md.ID()]; ok && old == e {
							continue // unchanged while the watch was down
						}
					}
					w.seen[md.ID()] = e
				}
				w.cache.apply(ev, md)
				out = append(out, *ev)
				outMetas = append(outMetas, md)
			case state.Bootstrapped:
				if !bootstrapping {
					continue // a state that bootstraps twice: ignore the repeat
				}
				bootstrapping = false
				bo.Reset()
				if !relist {
					w.routeFirstBootstrap()
					continue
				}
				for id := range w.seen {
					if _, ok := present[id]; ok {
						continue
					}
					delete(w.seen, id)
					tomb := newTombstone(w.key, id)
					gone := state.Event{Type: state.Destroyed, Resource: tomb}
					w.cache.apply(&gone, &tomb.md)
					out = append(out, gone)
					outMetas = append(outMetas, &tomb.md)
				}
				present = nil
			case state.Errored:
				werr = erroredFailure(ev.Error)
				break events
			}
		}
		w.route(out, outMetas, false)
		w.progress.routed(batch, !bootstrapping)
		w.rt.idleNotify.ping()
		// Drop references to resources until the next batch.
		clear(out)
		clear(outMetas)
		clear(metas)
		w.out, w.outMetas = out[:0], outMetas[:0]
		if werr != nil {
			return werr
		}
	}
}

// routeFirstBootstrap records the contents of the first bootstrap (seen
// resources, cache) and routes them at once, with bootMu held: existing
// resources are not changes for Controllers, which start (or are woken by
// UpdateInputs) once it is done; QControllers queue them (rules Q1, Q4).
// Then the kind is live.
func (w *kindWatcher) routeFirstBootstrap() {
	for i := range w.boot {
		ev, md := &w.boot[i], w.bootMetas[i]
		if ev.Type == state.Destroyed {
			delete(w.seen, md.ID())
		} else {
			w.seen[md.ID()] = seenOf(md)
		}
		w.cache.apply(ev, md)
	}
	w.cache.markReady()

	w.bootMu.Lock()
	w.route(w.boot, w.bootMetas, true)
	w.bootRouted = true
	w.bootMu.Unlock()

	// Release the storage of a large bootstrap.
	clear(w.boot)
	clear(w.bootMetas)
	w.boot, w.bootMetas = nil, nil
	if cap(w.scratch) > scratchKeep {
		w.scratch = nil
	}
	close(w.bootstrapped)
	w.live = true
}

// route delivers changes of the kind to its current subscriptions; metas
// are the events' metadata (see metadataOf); bootstrap marks the contents
// of the first bootstrap.
func (w *kindWatcher) route(events []state.Event, metas []*resource.Metadata, bootstrap bool) {
	if len(events) == 0 {
		return
	}
	subs := w.rt.db.Snapshot().For(w.key)
	w.scratch = routeBatch(subs, events, metas, w.scratch, bootstrap, w.rt.metrics)
	if w.rt.metrics {
		w.stats.eventsRouted.Add(uint64(len(events)))
	}
}

// tombstone is the last state of a resource that disappeared while its
// kind's watch was down: only its identity is known.
type tombstone struct {
	md resource.Metadata
}

func newTombstone(k dependency.Key, id resource.ID) *tombstone {
	return &tombstone{md: resource.NewMetadata(k.Namespace, k.Type, id, resource.VersionUndefined)}
}

func (t *tombstone) Metadata() *resource.Metadata { return &t.md }
func (t *tombstone) Spec() any                    { return nil }
func (t *tombstone) DeepCopy() resource.Resource  { return &tombstone{md: t.md.Copy()} }

// watchFailure is why a kind watch failed, as plain data: the text of the
// state's error (rendered once, inside usercode.ErrorText) or what was
// wrong with the stream.
type watchFailure struct{ msg string }

func (f watchFailure) Error() string { return f.msg }

// watchErrorText returns the message of a watchOnce error.
func watchErrorText(err error) string {
	if f, ok := err.(watchFailure); ok {
		return f.msg
	}
	return usercode.ErrorText(err)
}

// erroredFailure is the failure of an Errored event carrying err.
func erroredFailure(err error) watchFailure {
	if err == nil {
		return watchFailure{msg: "errored event without an error"}
	}
	return watchFailure{msg: "errored event: " + usercode.ErrorText(err)}
}

// metadataOf returns the metadata of every change event of batch (nil for
// the others), read once: the events come from the state, which may be a
// foreign implementation, so their resources' Metadata methods are user
// code. They are called here, before anything of the batch is applied, and
// the results used from then on. An event that cannot be routed — a change
// without a resource (or with a typed-nil one), a resource without metadata
// or of another kind, an empty ID, a panicking Metadata — fails the watch,
// which is then re-established with a re-list (see run): routing around it
// could lose the change it stood for. A panic is recovered by watchOnce
// (one deferred recover per watch rather than per batch: this is the hot
// path), which reads w.inspect to tell it was Metadata's. The result is
// stored in w.metas for reuse.
func (w *kindWatcher) metadataOf(batch []state.Event) ([]*resource.Metadata, error) {
	w.metas = w.metas[:0]
	for i := range batch {
		ev := &batch[i]
		switch ev.Type {
		case state.Created, state.Updated, state.Destroyed:
		default:
			w.metas = append(w.metas, nil)
			continue
		}
		if ev.Resource == nil {
			return w.metas, watchFailure{msg: fmt.Sprintf("the state sent an event of type %s without a resource", ev.Type)}
		}
		w.inspect = ev
		md := ev.Resource.Metadata()
		w.inspect = nil
		if md == nil {
			return w.metas, watchFailure{msg: fmt.Sprintf("the state sent an event of type %s whose resource (%T) has no metadata", ev.Type, ev.Resource)}
		}
		if ns, typ, id := md.Identity(); ns != w.key.Namespace || typ != w.key.Type || id == "" {
			return w.metas, watchFailure{msg: fmt.Sprintf("the state sent an event of type %s for %s on the watch of %s", ev.Type, resource.PointerString(md), resource.KindString(w.kind))}
		}
		w.metas = append(w.metas, md)
	}
	return w.metas, nil
}

// metadataPanic is the failure of the Metadata method of w.inspect's
// resource panicking with p; any other panic is re-raised (it is not user
// code's).
func (w *kindWatcher) metadataPanic(p any) error {
	ev := w.inspect
	if ev == nil {
		panic(p)
	}
	w.inspect = nil
	if usercode.IsNil(ev.Resource) {
		return watchFailure{msg: fmt.Sprintf("the state sent an event of type %s with a typed-nil resource (%T)", ev.Type, ev.Resource)}
	}
	return watchFailure{msg: fmt.Sprintf("the state sent an event of type %s whose resource's Metadata panicked: %s", ev.Type, usercode.Sprint(p))}
}
