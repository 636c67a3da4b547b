package route

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/batchpool"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/idle"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/state"
)

// watchRetry is the backoff of re-establishing a failed kind watch; a
// watch that bootstrapped resets it.
var watchRetry = retry.Backoff{Initial: 50 * time.Millisecond, Max: 10 * time.Second}

const (
	// watchBuffer is the capacity, in batches, of a kind watch's channel.
	watchBuffer = 16
	// scratchKeep is the capacity of routing scratch storage kept after the
	// first bootstrap; larger storage (a large initial fill) is released.
	scratchKeep = 1024
	// batchesKept is how many routed batches a kind watch keeps for the
	// state to reuse (see batchpool): every batch its channel holds, the
	// one being routed and the one the state builds. A state that ran a
	// full channel ahead of the router then takes each next batch from
	// the pool instead of allocating it; the pool holds at most
	// batchesKept × batchpool.Keep events.
	batchesKept = watchBuffer + 2
)

// phase is what a watch does with the changes it receives.
type phase uint8

const (
	// collecting: the kind's first bootstrap, collected until complete and
	// then routed at once (see routeFirstBootstrap).
	collecting phase = iota
	// relisting: the bootstrap of a watch re-established after a failure,
	// routed as a diff against what was routed before (see relisted and
	// endRelist).
	relisting
	// live: changes, routed as they come.
	live
)

// kindWatcher runs the one watch of a kind and routes its changes to the
// kind's subscriptions.
type kindWatcher struct {
	key      resource.KindKey
	st       state.State
	subs     func(resource.KindKey) []Subscription
	mem      Memory
	tel      *telemetry.Kind
	idle     *idle.Notifier
	logger   *zap.Logger
	progress progress
	// sched takes the routing decisions (sched.Direct but in a
	// simulator; see schedule.go); cached tells that mem is the kind's
	// cache; resumable that the state resumes the kind's watches and mem
	// remembers nothing (resume.go).
	sched     sched.Scheduler
	cached    bool
	resumable bool
	// tap is the router's tap (tap.go).
	tap *tapHolder
	// batches are the watch's event batches once routed, handed back to
	// the state for reuse (see batchpool).
	batches *batchpool.Pool

	// started is set once the watch goroutine was started; protected by
	// the router's mu.
	started bool
	// bootstrapped is closed when the first watch delivered its bootstrap
	// contents: from then on every change is routed as it happens.
	bootstrapped chan struct{}

	// bootMu makes the routing of the first bootstrap's contents atomic
	// with respect to subscriptions added during Run (see
	// Router.Subscribe): a controller is either in the snapshot that routes
	// the whole first bootstrap, or subscribed after it and lists the kind
	// itself. Never held while waiting.
	bootMu sync.Mutex
	// bootRouted is set once the contents of the first bootstrap were
	// routed; protected by bootMu.
	bootRouted bool

	// The fields below are owned by the watch goroutine.

	// bootstrappedOnce is set once a watch delivered its bootstrap: later
	// watches are re-lists.
	bootstrappedOnce bool
	// boot collects the contents of the first bootstrap until it is
	// complete, and bootMetas their metadata.
	boot      []state.Event
	bootMetas []*resource.Metadata
	// present holds the IDs a re-list's bootstrap reported present.
	present map[resource.ID]struct{}
	// out and outMetas are the changes of a batch to route; metas, gone
	// and scratch are reused storage. caching and cachingWas are the
	// phases of the batch being cached, during the scheduler's call
	// (schedule.go).
	caching, cachingWas phase
	out                 []state.Event
	outMetas            []*resource.Metadata
	metas               []*resource.Metadata
	gone                []Remembered
	scratch             scratch
	// inspect is the event whose resource's Metadata is being called (see
	// metadataOf), nil otherwise.
	inspect *state.Event
	// rev is the state's revision of the newest event received (0 when the
	// state does not number its changes).
	rev uint64
	// resumeAt is the bookmark of the last event routed once live, where
	// a resumable kind's next watch starts; mustList tells that the state
	// refused it and the next watch lists the kind (resume.go).
	// resuming tells that the running watch was opened from resumeAt and
	// has routed nothing yet.
	resumeAt state.Bookmark
	mustList bool
	resuming bool

	// relists are the on-demand re-list requests (relist.go), barriers
	// those of a resumable kind (resume.go).
	relists  relists
	barriers barriers
}

// run watches the kind until ctx is done. A watch that fails (the call
// fails, an Errored event arrives, or the state closes the stream) is
// re-established with a re-list, and whatever changed meanwhile is routed as
// if it had been watched.
func (w *kindWatcher) run(ctx context.Context) {
	bo := watchRetry.Sequence()
	defer close(w.relists.stopped)
	for {
		err := w.watchOnce(ctx, bo)
		w.progress.down()
		if ctx.Err() != nil {
			w.tapStopped()
			return
		}
		w.tapLost()
		if errors.Is(err, errRelist) {
			w.tel.Relisted()
			continue
		}
		w.refused(err)
		delay := bo.Next()
		msg := failureText(err)
		w.progress.failed(msg)
		w.tel.WatchFailed(msg, delay)
		w.logger.Warn("kind watch failed; re-listing", zap.String("error", msg), zap.Duration("retry_in", delay))

		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-w.relists.kick: // a re-list asked for: no need to wait
			t.Stop()
		}
	}
}

// watchOnce runs one watch of the kind, with bootstrap contents, until it
// fails or ctx is done. Each batch is read once (metadataOf), handled in the
// watch's phase — collecting the first bootstrap, diffing a re-list against
// what was routed before, or live — and what it yields is routed at once.
func (w *kindWatcher) watchOnce(ctx context.Context, bo *retry.Sequence) (err error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = w.metadataPanic(p)
		}
	}()
	defer w.dropBootstrap()

	w.relists.opening()
	from := w.resumeFrom()
	w.resuming = from != nil
	ch, err := w.open(wctx, from)
	if err != nil {
		return err
	}
	ph := collecting
	switch {
	case from != nil:
		ph = live
		w.progress.resumed()
	case w.bootstrappedOnce:
		ph = relisting
		w.present = map[resource.ID]struct{}{}
	}
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
		case <-w.relists.kick:
			if w.relists.newer() {
				return errRelist
			}
			continue
		}
		metas, err := w.metadataOf(batch)
		if err != nil {
			return err
		}
		was := ph
		ph, err = w.handle(ph, batch, metas, bo)
		w.apply(was, ph)
		w.route(w.out, w.outMetas, false)
		if len(w.out) > 0 {
			w.resuming = false
		}
		w.tapChanges(was)
		w.routed(batch, metas, was, ph)
		w.batches.Put(batch) // nothing of it is kept: w.out, w.boot hold copies
		if err != nil {
			return err
		}
	}
}

// routed does the bookkeeping of a batch routed in phase was, after which
// the watch is in phase now.
func (w *kindWatcher) routed(batch []state.Event, metas []*resource.Metadata, was, now phase) {
	if was != live && now == live {
		w.relists.routed() // this watch's bootstrap is routed
		w.mustList = false
	}
	if now == live {
		w.barriers.reached(w.rev)
	}
	w.progress.routed(batch, now == live)
	w.idle.Ping()
	// Drop references to resources until the next batch.
	clear(w.out)
	clear(w.outMetas)
	clear(metas)
	w.out, w.outMetas = w.out[:0], w.outMetas[:0]
	w.trim()
}

// trim drops the batch storage that a large batch (a bootstrap, a watch
// that lagged) grew beyond scratchKeep: a watch keeps no storage in
// proportion to the kind's size between batches.
func (w *kindWatcher) trim() {
	if cap(w.out) > scratchKeep {
		w.out, w.outMetas = nil, nil
	}
	if cap(w.metas) > scratchKeep {
		w.metas = nil
	}
	w.scratch.release()
}

// open starts the watch: the state's WatchKindAggregated with bootstrap
// contents, or resumed after the bookmark from when it is not nil; its
// batches come from w.batches when the state takes them from there. The
// call is the state's code: a panic fails the watch.
func (w *kindWatcher) open(ctx context.Context, from state.Bookmark) (chan []state.Event, error) {
	ch := make(chan []state.Event, watchBuffer)
	if w.batches == nil {
		w.batches = batchpool.New(batchesKept)
	}
	ctx = batchpool.Bind(ctx, ch, w.batches)
	opt := state.WithBootstrapContents(true)
	if from != nil {
		opt = state.WithKindStartFromBookmark(from)
	}
	var err error
	if p := usercode.Call(func() {
		err = w.st.WatchKindAggregated(ctx, w.key, ch, opt)
	}); p != nil {
		return nil, watchFailure{msg: "the state's WatchKindAggregated panicked: " + usercode.Sprint(p.Value)}
	}
	if err != nil {
		return nil, watchFailure{msg: usercode.ErrorText(err), overrun: isOverrun(err)}
	}
	w.progress.started(ch)
	return ch, nil
}

// handle applies a batch in phase ph and returns the phase after it: the
// changes to route now are appended to w.out. An Errored event fails the
// watch (what came before it in the batch is still routed).
func (w *kindWatcher) handle(ph phase, batch []state.Event, metas []*resource.Metadata, bo *retry.Sequence) (phase, error) {
	for i := range batch {
		ev := &batch[i]
		switch ev.Type {
		case state.Created, state.Updated, state.Destroyed, state.Bootstrapped:
			w.rev = max(w.rev, ev.Revision)
			if ev.Bookmark != nil && (ph == live || ev.Type == state.Bootstrapped) {
				w.resumeAt = ev.Bookmark
			}
		}
		switch ev.Type {
		case state.Created, state.Updated, state.Destroyed:
			switch ph {
			case collecting:
				w.boot = append(w.boot, *ev)
				w.bootMetas = append(w.bootMetas, metas[i])
			case relisting:
				w.relisted(ev, metas[i])
			default:
				w.emit(ev, metas[i])
			}
		case state.Bootstrapped:
			if ph == live {
				continue // a state that bootstraps twice: ignore the repeat
			}
			bo.Reset()
			if ph == collecting {
				w.routeFirstBootstrap()
			} else {
				w.endRelist()
			}
			ph = live
		case state.Errored:
			return ph, erroredFailure(ev.Error)
		}
	}
	return ph, nil
}

// emit queues a change for routing; the batch's changes are remembered
// at once before they are routed.
func (w *kindWatcher) emit(ev *state.Event, md *resource.Metadata) {
	w.out = append(w.out, *ev)
	w.outMetas = append(w.outMetas, md)
}

// route delivers changes of the kind to its current subscriptions, unless
// the scheduler takes them (a simulator; sched.Direct never does); metas
// are the events' metadata (see metadataOf); bootstrap marks the contents
// of the first bootstrap.
func (w *kindWatcher) route(events []state.Event, metas []*resource.Metadata, bootstrap bool) {
	if len(events) == 0 {
		return
	}
	// One clock reading for the whole batch: its kind's and every
	// subscriber's telemetry share it.
	var at telemetry.Batch
	w.tel.Routed(events, metas, bootstrap, &at)
	if w.sched.Route((*routeBatch)(w), events, metas, bootstrap) {
		return
	}
	deliver(w.subs(w.key), events, metas, &w.scratch, bootstrap, w.rev, &at)
}

// apply takes the batch's changes (out) into the kind's memory at once,
// unless the scheduler takes a cached kind's (a simulator; sched.Direct
// never does); the phase went from was to now.
func (w *kindWatcher) apply(was, now phase) {
	if w.cached {
		w.cachingWas, w.caching = was, now
		if w.sched.Cache((*cacheBatch)(w)) {
			return
		}
	}
	w.mem.ApplyBatch(w.out, w.outMetas, w.rev, now == live)
}
