package recording

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
)

// ErrNotStarted is returned by a take before the recorder's Run has
// read the starting state.
var ErrNotStarted = errors.New("recording: the recorder has not started (call Run, and wait for it to read the state)")

// Recorder is a flight recorder of a state and the Runtime that runs over
// it: see the package doc. Build it with [New], run it with
// [Recorder.Run]; every other method is safe for concurrent use.
type Recorder struct {
	st      state.State
	reg     *codec.Registry
	cfg     config
	running atomic.Bool
	sizes   sizer
	keeper  keeper
	// passes are the read revisions of the Runtime's commits (rule RC9).
	passes *passLog
	// due is signalled when the raw history's listing is due.
	due chan struct{}
	// started is closed once Run read the state the first time.
	started     chan struct{}
	startedOnce sync.Once

	mu sync.Mutex
	// The fields below are protected by mu.
	// win is the session's history: raw or cls (rule RC3); gen counts
	// the sessions.
	win   history
	raw   *rawWindow
	cls   *classified
	lean  *lean
	gen   uint64
	ready bool
	// progress is closed (and replaced) when the window's revision moves
	// while someone waits in Sync (waiting counts them).
	progress    chan struct{}
	waiting     int
	kinds       []Kind
	controllers owners
	// attached is what Attach set up, until a session takes it;
	// attachedKinds the kinds it was set up for.
	attached      *source
	attachedKinds []Kind
	// src is the running session's source, once it listed (nil
	// otherwise): its commit logs are drained under mu.
	src *source
	// seen is, for each kind whose changes come by watches (its own or
	// the Runtime's), the revision of the newest change of it the window
	// was handed, or of its list when newer: the kinds' watches are
	// separate, so a newer change of one kind says nothing of another's.
	seen map[resource.KindKey]uint64
}

// New returns a recorder of st; reg encodes the recorded resources (every
// kind recorded must be registered in it to be written to a file).
// Nothing runs until [Recorder.Run].
func New(st state.State, reg *codec.Registry, opts ...Option) (*Recorder, error) {
	if st == nil {
		return nil, state.NewInvalidError(nil, "recording: nil state")
	}
	if reg == nil {
		return nil, state.NewInvalidError(nil, "recording: nil codec registry")
	}
	c := defaultConfig()
	opt.Apply(&c, opts)
	r := &Recorder{st: st, reg: reg, cfg: c, controllers: owners{names: map[string]bool{}}, started: make(chan struct{}), passes: newPassLog(), due: make(chan struct{}, 1)}
	r.sizes.reg = reg
	r.raw = newRawWindow(c.maxAge, c.maxBytes, r.due, &r.controllers, &r.sizes)
	r.cls = &classified{w: newWindow(c.maxAge, c.maxBytes), controllers: &r.controllers, sizes: &r.sizes}
	r.lean = newLean(c.maxAge, c.maxBytes, r.due, &r.controllers, &r.sizes)
	r.win = r.raw
	r.keeper.init(r)
	return r, nil
}

// Run records until ctx is done, then returns nil. It watches every kind
// recorded (without bootstrap), then lists them: the lists, and the
// changes their watches brought up to the newest list's revision, are the
// window's starting state (rule RC1). A watch that fails starts the window
// over after a second, as does a change of the Runtime's kinds. Run may
// be called once; after it returned, a take still returns the window as
// it was then.
func (r *Recorder) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return errors.New("recording: Run called twice")
	}
	tick := time.NewTicker(r.cfg.poll)
	defer tick.Stop()
	if remove, err := r.tapCommits(); err != nil {
		r.cfg.logger.Warn("recorder: the Runtime's commits are tapped already: its recordings will not say what each pass read", zap.Error(err))
	} else {
		defer remove()
	}
	for {
		err := r.session(ctx, tick.C)
		if ctx.Err() != nil {
			return nil // the window stays: a take after Run returns records up to its end
		}
		r.mu.Lock()
		r.ready = false
		r.mu.Unlock()
		r.cfg.logger.Warn("recorder: starting its window over", zap.Error(err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// Started is closed once Run has read the state for the first time: from
// then on a take returns a recording (unless the recorder is starting
// its window over after a watch failed). A recorder of a Runtime it taps
// (rule RC8) reads the state once the Runtime's watches are live: start
// the Runtime before waiting for Started.
func (r *Recorder) Started() <-chan struct{} { return r.started }

// Sync waits until the recorder has seen every change of its kinds that
// the state committed before the call, or ctx is done. Over a routed
// state whose kinds live in several backends it waits for each
// backend's changes (rule RC1). Over a state that does not number its
// changes, or does not tell each of its backends' revisions (a wrapper
// that hides a routed state's routes), it fails with an error matching
// errors.ErrUnsupported.
func (r *Recorder) Sync(ctx context.Context) error {
	if _, ok := r.st.(state.RevisionReporter); !ok {
		return fmt.Errorf("recording: Sync: %T does not number its changes: %w", r.st, errors.ErrUnsupported)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-r.started:
	}
	r.mu.Lock()
	kinds := slices.Clone(r.kinds)
	r.mu.Unlock()
	want, last, err := revisionDomains(ctx, r.st, kinds).kindRevisions(ctx, r.st, kinds)
	if err != nil {
		return fmt.Errorf("recording: Sync: %w", err)
	}
	r.mu.Lock()
	r.waiting++
	defer func() {
		r.mu.Lock()
		r.waiting--
		r.mu.Unlock()
	}()
	for !r.caughtUpLocked(want, last) {
		ch := r.progress
		r.mu.Unlock()
		if ch == nil {
			ch = r.started
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
		r.mu.Lock()
	}
	r.mu.Unlock()
	return nil
}

// caughtUpLocked reports whether the window holds every change up to
// revision want of each revision domain, and each watched kind's change
// up to its revision in last, once the commit logs are drained; r.mu is
// held.
func (r *Recorder) caughtUpLocked(want []uint64, last map[resource.KindKey]uint64) bool {
	if !r.ready || r.drainLocked() != nil || !r.win.reached(want) {
		return false
	}
	for k, rev := range last {
		if r.seenOf(k) < rev && !r.src.logsKind(k) {
			return false
		}
	}
	return true
}

// addEventsLocked adds a batch of watch events, which came at at, to the
// window, and notes each kind's newest revision in it (seen: rule RC1's
// per-kind wait); r.mu is held. A batch is mostly of one kind: seen is
// written once per run of one kind's events, not per event.
func (r *Recorder) addEventsLocked(evs []state.Event, at time.Time) {
	r.win.addEvents(evs, at)
	if r.win == history(r.lean) {
		return // it notes each kind's newest change itself (seenOf)
	}
	var kind resource.KindKey
	var rev uint64
	for i := range evs {
		res := evs[i].Resource
		if res == nil || evs[i].Revision == 0 {
			continue
		}
		md := res.Metadata()
		if ns, typ, _ := md.Identity(); !sameData(typ, kind.Type()) || !sameData(ns, kind.Namespace()) {
			if k := resource.KindOf(md); k != kind {
				r.seenLocked(kind, rev)
				kind, rev = k, 0
			}
		}
		rev = max(rev, evs[i].Revision)
	}
	r.seenLocked(kind, rev)
}

// seenOf returns the revision of kind's newest change the window was
// handed (or of its list, when newer); r.mu is held.
func (r *Recorder) seenOf(kind resource.KindKey) uint64 {
	s := r.seen[kind]
	if r.win == history(r.lean) {
		s = max(s, r.lean.seenOf(kind))
	}
	return s
}

// seenLocked notes that the window holds kind's changes up to rev (none
// when rev is 0); r.mu is held.
func (r *Recorder) seenLocked(kind resource.KindKey, rev uint64) {
	if rev == 0 {
		return
	}
	if r.seen == nil {
		r.seen = map[resource.KindKey]uint64{}
	}
	if r.seen[kind] < rev {
		r.seen[kind] = rev
	}
}

// errKindsChanged ends a session whose Runtime's kinds changed.
var errKindsChanged = errors.New("the Runtime's kinds changed")

// session records from a fresh start until its watches fail, the kinds
// change, or ctx is done.
func (r *Recorder) session(ctx context.Context, tick <-chan time.Time) error {
	kinds, controllers, err := r.resolve()
	if err != nil {
		return err
	}
	src := r.attachedFor(kinds)
	if src == nil {
		if src, err = r.openSource(ctx, kinds, nil); err != nil {
			return err
		}
	}
	defer func() { r.end(src, ctx.Err() != nil) }()
	tap := src.tap
	r.begin(src, kinds, controllers)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case evs := <-src.ch:
			if err := r.handle(evs, &src.start, tap); err != nil {
				return err
			}
		case <-src.kick:
			if err := r.drain(); err != nil {
				return err
			}
		case <-tap.lost:
			return fmt.Errorf("the Runtime's watch of %s ended", tap.lostKind)
		case <-r.due:
			if err := r.relist(ctx, kinds, src); err != nil {
				return err
			}
		case now := <-tick:
			if err := r.tick(ctx, now, kinds, src); err != nil {
				return err
			}
		}
	}
}

// end ends a session: its source is closed, its commit logs no longer
// drained. A lean window's session that ends with its context (closing)
// takes its final cut first.
func (r *Recorder) end(src *source, closing bool) {
	if closing {
		r.closeLean(src)
	}
	src.close()
	r.mu.Lock()
	if r.src == src {
		src.tap.buf.flushLocked(r) // a take after Run returned sees them
	}
	r.src = nil
	r.mu.Unlock()
}

// drain adds the changes of the session's commit logs to the window.
func (r *Recorder) drain() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.drainLocked()
}

// source is where a session's changes come from: the tap of the
// Runtime's watches, the commit logs of the other kinds over a state that
// can tap a kind's commits (logs; kick wakes the session to drain them),
// the recorder's own watches of the rest (ch), and the state it listed
// (start; without the kinds the Runtime lists for a tap set before it
// ran).
type source struct {
	tap   *tapSink
	logs  []*commitLog
	kick  chan struct{}
	ch    chan []state.Event
	start startState
	doms  domains
	// numbered is set when the state numbers every kind's changes by
	// one sequence (numbered).
	numbered bool
	cancel   context.CancelFunc
}

// logsKind reports whether the changes of kind come by a commit log.
func (s *source) logsKind(kind resource.KindKey) bool {
	for _, l := range s.logs {
		if resource.KindOf(l.kind) == kind {
			return true
		}
	}
	return false
}

// close removes the taps and ends the own watches.
func (s *source) close() {
	s.tap.remove()
	for _, l := range s.logs {
		l.remove()
	}
	s.cancel()
}

// openSource taps the Runtime (with attach, the tap set before it ran),
// watches the kinds it does not tap (with attach, every kind: rule RC10),
// then lists them.
func (r *Recorder) openSource(ctx context.Context, kinds []Kind, attach *tapSink) (*source, error) {
	wctx, cancel := context.WithCancel(ctx)
	src := &source{tap: attach, ch: make(chan []state.Event, 16), kick: make(chan struct{}, 1), cancel: cancel}
	var err error
	if attach != nil {
		r.mu.Lock()
		attach.buf = &tapBuf{kick: src.kick} // live once every kind is handed over
		r.mu.Unlock()
	} else if src.tap, err = r.tapRuntime(wctx, kinds, src.kick); err != nil {
		cancel()
		return nil, err
	}
	for _, k := range kinds {
		kind := resource.NewKind(k.Namespace, k.Type)
		h := src.tap.handovers[resource.KindOf(kind)]
		if src.tap.kinds[resource.KindOf(kind)] && h == nil {
			continue
		}
		kctx := wctx
		if h != nil {
			kctx, h.stop = context.WithCancel(wctx)
		} else if l := r.tapKindCommits(kind, src.kick); l != nil {
			src.logs = append(src.logs, l)
			continue
		}
		if err := r.st.WatchKindAggregated(kctx, kind, src.ch); err != nil {
			src.close()
			return nil, fmt.Errorf("watch %s: %w", k.Type, err)
		}
	}
	src.doms = revisionDomains(ctx, r.st, kinds)
	src.numbered = numbered(ctx, r.st, src.doms)
	if src.start, err = r.list(ctx, kinds); err != nil {
		src.close()
		return nil, err
	}
	return src, nil
}

// begin starts the window from the listed state: the tap's changes that
// came while the kinds were listed go in first.
func (r *Recorder) begin(src *source, kinds []Kind, controllers map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	start, tap := &src.start, src.tap
	r.win, r.gen = r.raw, r.gen+1
	if len(controllers) > 0 {
		r.win = r.cls // most changes may be the controllers'
		if src.numbered {
			r.lean.logged = map[resource.KindKey]bool{}
			for _, l := range src.logs {
				r.lean.logged[resource.KindOf(l.kind)] = true
			}
			r.win = r.lean
		}
	}
	r.win.reset(newListing(*start, time.Now(), 0, src.doms))
	start.base = nil // the history holds what it needs of it
	r.kinds, r.ready, r.src = kinds, true, src
	if r.seen == nil {
		r.seen = map[resource.KindKey]uint64{}
	}
	for k, rev := range start.kindRev {
		r.seen[k] = max(r.seen[k], rev)
	}
	r.controllers.set(controllers)
	if r.progress != nil {
		close(r.progress)
	}
	r.progress = make(chan struct{})
	tap.liveLocked(start)
	r.startedOnce.Do(func() { close(r.started) })
}

// startState is the state a session listed: its resources, the newest
// list's revision, and each kind's list revision (or, over a state that
// does not number its changes, each listed resource's version).
type startState struct {
	base    []resource.Resource
	rev     uint64
	kindRev map[resource.KindKey]uint64
	listed  map[resource.PointerKey]uint64
	// lastKind's revision in kindRev is lastRev (when lastOK).
	lastKind resource.KindKey
	lastRev  uint64
	lastOK   bool
}

// list lists every kind (shared snapshots, no copy) with its revision.
func (r *Recorder) list(ctx context.Context, kinds []Kind) (startState, error) {
	s := startState{kindRev: map[resource.KindKey]uint64{}, listed: map[resource.PointerKey]uint64{}}
	for _, k := range kinds {
		var rev uint64
		kind := resource.NewKind(k.Namespace, k.Type)
		l, err := r.st.List(ctx, kind, state.WithReadOnlyList(), state.WithListRevision(&rev))
		if err != nil {
			return s, fmt.Errorf("list %s: %w", resource.KindString(kind), err)
		}
		s.add(resource.KindOf(kind), l.Items, rev)
	}
	return s, nil
}

// add adds a kind's listed resources and the revision of its list.
func (s *startState) add(kind resource.KindKey, rs []resource.Resource, rev uint64) {
	s.kindRev[kind], s.rev, s.lastOK = rev, max(s.rev, rev), false
	for _, res := range rs {
		s.base = append(s.base, res)
		if rev == 0 {
			s.listed[resource.PointerOf(res.Metadata())] = res.Metadata().Version().Value()
		}
	}
}

// handle adds a batch of watch events to the window: a change the lists
// already hold is skipped, one between a kind's list and the newest list
// goes into the starting state (window.add), any other is a change.
func (r *Recorder) handle(evs []state.Event, start *startState, tap *tapSink) error {
	for i := range evs {
		if evs[i].Type == state.Errored {
			return fmt.Errorf("watch failed: %w", evs[i].Error)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := tap.handoverOf(evs); h != nil {
		tap.ownLocked(h, evs, start)
		return nil
	}
	r.handleLocked(evs)
	return nil
}

// handleLocked is handle with r.mu held, of one kind's events that are
// changes (or markers, skipped). The batch's changes share one time of
// arrival; they are added to the window as they came (they are
// classified when a recording is taken).
func (r *Recorder) handleLocked(evs []state.Event) {
	if len(evs) > 0 {
		r.addEventsLocked(evs, time.Now())
	}
	r.progressedLocked()
}

// progressedLocked wakes those waiting in Sync once the window moved.
func (r *Recorder) progressedLocked() {
	if r.waiting > 0 {
		close(r.progress)
		r.progress = make(chan struct{})
	}
}

// listedAlready reports whether the lists already hold the change ev.
func (s *startState) listedAlready(ev *state.Event) bool {
	if ev.Revision > s.rev {
		return false // after every list
	}
	md := ev.Resource.Metadata()
	if ev.Revision != 0 {
		if !s.lastOK || md.Type() != s.lastKind.Type() || md.Namespace() != s.lastKind.Namespace() {
			s.lastKind = resource.KindOf(md)
			s.lastRev, s.lastOK = s.kindRev[s.lastKind], true
		}
		return ev.Revision <= s.lastRev
	}
	key := resource.PointerOf(md)
	v, ok := s.listed[key]
	if !ok {
		return false
	}
	delete(s.listed, key)
	return ev.Type != state.Destroyed && md.Version().Value() <= v
}

// tick drains the commit logs, lists the state when the window's age
// calls for it, keeps a recording when the Runtime calls for one, and
// ends the session when the Runtime's kinds changed.
func (r *Recorder) tick(ctx context.Context, now time.Time, kinds []Kind, src *source) error {
	r.mu.Lock()
	err := r.drainLocked()
	due := r.win.aged(now)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if due {
		if err := r.relist(ctx, kinds, src); err != nil {
			return err
		}
	}
	if r.cfg.rt == nil {
		return nil
	}
	r.keeper.poll()
	next, controllers, err := r.resolve()
	if err != nil {
		return nil
	}
	if !slices.Equal(next, kinds) {
		return errKindsChanged
	}
	r.mu.Lock()
	r.controllers.set(controllers)
	r.mu.Unlock()
	return nil
}

// Act notes an action of the world (a cable unplugged, a device gone) as
// a change of the recording, by the name of the daemon's simulation
// scenario's action that does the same to its fake world, so that a
// replay does it at the same point. A daemon calls it where its code
// learns of the world's action (an observer's notification).
func (r *Recorder) Act(name string) {
	r.note(change{by: ByWorld, op: OpAction, action: name, size: int64(len(name)) + entryOverhead})
}

// note adds a world change c, at the state's revision now (over several
// revision domains, the highest of theirs).
func (r *Recorder) note(c change) {
	r.mu.Lock()
	var doms domains
	if r.src != nil {
		doms = r.src.doms
	}
	r.mu.Unlock()
	c.rev = doms.revision(context.Background(), r.st)
	c.at = time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ready {
		if r.src != nil {
			r.src.tap.buf.flushLocked(r) // the tapped changes that came before it
		}
		r.win.addWorld(&c)
	}
}

// relist takes a new listing of the window (rawWindow.install): it lists
// every kind (shared snapshots, no copy), without the recorder's lock.
func (r *Recorder) relist(ctx context.Context, kinds []Kind, src *source) error {
	r.mu.Lock()
	if r.src != nil {
		r.src.tap.buf.flushLocked(r) // the changes that came before it began
	}
	seq, gen, lw := r.raw.seq, r.gen, r.leanWin()
	var q listingReq
	if lw != nil {
		q = lw.request() // the changes that come while it lists are kept
	}
	r.mu.Unlock()
	start, err := r.list(ctx, kinds)
	if err != nil {
		return err // the session ends: the next starts its window over
	}
	l := newListing(start, time.Now(), seq, src.doms)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case gen != r.gen:
	case lw != nil:
		lw.install(q, l)
	case r.win == history(r.raw):
		r.raw.install(l)
	}
	return nil
}

// Observe notes a world read (rule RC12): the daemon's code read the
// world (name says what: "kernel links") and it returned value, in the
// daemon's own encoding (copied; a sensitive value must not be
// observed). The read is ordered after the state's changes of the
// revision the state is at, as an action is; a replay's world fake
// (sim.World.Observed) returns the recorded values to the replay's
// reads of name, in order, each once the replay is where it was read.
// An empty name is ignored. Safe for concurrent use.
func (r *Recorder) Observe(name string, value []byte) {
	if name == "" {
		return
	}
	r.note(change{by: ByWorld, op: OpRead, action: name, value: slices.Clone(value), size: int64(len(name)+len(value)) + entryOverhead})
}
