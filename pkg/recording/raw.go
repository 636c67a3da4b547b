package recording

import (
	"maps"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// event returns the watch event the run's ith change came as; old is
// the resource before an update (nil: unknown, as a watch that does not
// tell it).
func (r *run) event(i int, old resource.Resource) state.Event {
	ev := state.Event{Type: state.Updated, Resource: r.res(i), Revision: r.rev(i)}
	switch r.op(i) {
	case committedCreate:
		ev.Type = state.Created
	case committedDestroy:
		ev.Type = state.Destroyed
	default:
		ev.Old = old
	}
	return ev
}

// opOf returns what the watch event ev did, false for an event that is
// no change (a marker). The event's Old is not kept: what an update
// replaced is the version the window saw last of the resource.
func opOf(ev *state.Event) (commitOp, bool) {
	switch {
	case ev.Resource == nil:
		return 0, false
	case ev.Type == state.Created:
		return committedCreate, true
	case ev.Type == state.Destroyed:
		return committedDestroy, true
	case ev.Type == state.Updated:
		return committedUpdate, true
	}
	return 0, false
}

// segment is a run of changes that came one after another: a part of a
// kind's commit log chunk (rule RC11), which the window keeps as it is,
// or of the window's own chunk of the changes watches brought. seq is its
// first change's sequence number, bytes its changes' estimated size.
type segment struct {
	run
	seq   uint64
	bytes int64
	// maxRev is the highest revision of its changes (0: one is not
	// numbered).
	maxRev uint64
}

// worldRaw is a world change and its sequence number.
type worldRaw struct {
	seq uint64
	c   *change
}

// listing is a checkpoint of the state taken by listing it: each kind's
// resources (shared snapshots, no copy) and list revision, when it was
// taken, and the window's sequence number when its listing began (a
// change that reached the recorder before is in it, over a state that
// does not number its changes; a world change noted before is before it).
type listing struct {
	start startState
	// minRev is the lowest of its kinds' list revisions (0: a kind's is
	// not numbered).
	minRev uint64
	at     time.Time
	seq    uint64
	// doms and revs are its revision domains and each domain's revision
	// (revisionDomains; nil over one).
	doms map[resource.KindKey]uint16
	revs []uint64
}

// newListing returns the listing of the state start listed, at at; seq
// is the window's sequence number when its listing began, d the revision
// domains of its kinds.
func newListing(start startState, at time.Time, seq uint64, d domains) *listing {
	l := &listing{start: start, at: at, seq: seq}
	l.doms, l.revs = d.at(&l.start)
	if len(start.kindRev) > 0 {
		l.minRev = slices.Min(slices.Collect(maps.Values(start.kindRev)))
	}
	return l
}

// holds reports whether the listing holds the ith change of r, the seqth
// to come (it is then no change after it); s is a copy of its starting
// state, which a change of a state that does not number its changes
// consumes (listedAlready).
func (l *listing) holds(r *run, i int, seq uint64, s *startState) bool {
	if r.rev(i) == 0 && seq < l.seq {
		return true
	}
	ev := r.event(i, nil)
	return s.listedAlready(&ev)
}

// holdsAll reports whether the listing holds every change of seg.
func (l *listing) holdsAll(seg *segment, s *startState) bool {
	if seg.maxRev != 0 && seg.maxRev <= l.minRev {
		return true // each kind was listed after the segment's changes
	}
	for i := range seg.len() {
		if !l.holds(&seg.run, i, seg.seq+uint64(i), s) {
			return false
		}
	}
	return true
}

// holdsWorld reports whether the listing holds (is after) the world
// change w: one noted before the listing began, at or below its revision.
func (l *listing) holdsWorld(w *worldRaw) bool {
	return w.seq < l.seq && (w.c.rev == 0 || l.revs != nil || w.c.rev <= l.start.rev)
}

// fresh returns a copy of the listing's starting state for one pass over
// the changes (listedAlready consumes its listed versions).
func (l *listing) fresh() startState {
	s := l.start
	s.listed, s.lastOK = maps.Clone(s.listed), false
	return s
}

// rawWindow is the recorder's bounded history (rule RC3): two listings of
// the state (prev, the window's start, and last) and every change since
// prev as it came, unclassified: the commit logs' chunks themselves, and
// the changes watches brought in chunks of its own (segs), and the world
// changes (worlds). When half the window's age or bytes came in since
// last, a new listing is due (due is signalled): the session lists the
// state, last becomes prev, and the segments prev holds leave. A
// recording is made of it when taken (view): its changes are classified
// and folded from prev on into a window with the bounds, so the
// per-change work is done when a recording is taken, for the changes it
// holds.
type rawWindow struct {
	prev, last *listing
	segs       []segment
	worlds     []worldRaw
	// own is the window's own chunk being filled, ownSeg the index in
	// segs of the segment at its end (-1: none).
	own       *commitChunk
	ownSeg    int
	seq       uint64
	bytes     int64
	sinceLast int64
	lastAt    int64
	curRev    uint64
	doms      map[resource.KindKey]uint16
	curRevs   []uint64
	maxAge    time.Duration
	maxBytes  int64
	// due is signalled (once until the next listing: dueSent) when a
	// listing is due.
	due         chan<- struct{}
	dueSent     bool
	controllers *owners
	sizes       *sizer
}

func newRawWindow(maxAge time.Duration, maxBytes int64, due chan<- struct{}, controllers *owners, sizes *sizer) *rawWindow {
	return &rawWindow{maxAge: maxAge, maxBytes: maxBytes, due: due, ownSeg: -1, controllers: controllers, sizes: sizes}
}

// reset starts the window over from the listing l (a session's start).
func (w *rawWindow) reset(l *listing) {
	l.seq = w.seq
	clear(w.segs)
	w.segs, w.worlds, w.own, w.ownSeg = w.segs[:0], nil, nil, -1
	w.bytes = 0
	w.curRev, w.doms, w.curRevs = l.start.rev, l.doms, slices.Clone(l.revs)
	w.prev = l
	w.setLast(l)
}

func (w *rawWindow) setLast(l *listing) {
	w.last, w.lastAt, w.sinceLast, w.dueSent = l, l.at.UnixNano(), 0, false
}

// addRun adds a run of a commit log's changes (kept as they are), each
// estimated at the size of the run's first change's resource.
func (w *rawWindow) addRun(r run) {
	n := r.len()
	bytes := int64(n) * w.sizes.size(r.res(0))
	w.segs = append(w.segs, segment{run: r, seq: w.seq, bytes: bytes, maxRev: r.rev(n - 1)})
	w.ownSeg = -1
	w.added(n, bytes, &r, n-1)
}

// addEvents adds a batch of one kind's watch events (markers skipped) to
// the window's own chunk, each estimated at the size of the batch's
// first change's resource.
func (w *rawWindow) addEvents(evs []state.Event, at time.Time) {
	size := int64(-1)
	for i := range evs {
		op, ok := opOf(&evs[i])
		if !ok {
			continue
		}
		if size < 0 {
			size = w.sizes.size(evs[i].Resource)
		}
		w.addOne(evs[i].Resource, evs[i].Revision, op, at.UnixNano(), size)
	}
}

// addOne adds a change a watch brought (op of res, at revision rev and
// time at), of estimated size bytes, to the window's own chunk.
func (w *rawWindow) addOne(res resource.Resource, rev uint64, op commitOp, at int64, bytes int64) {
	if w.own == nil || !w.own.put(w.own.n.Load(), res, rev, op, at) {
		w.own, w.ownSeg = &commitChunk{}, -1
		w.own.put(0, res, rev, op, at)
	}
	n := w.own.n.Load() + 1
	w.own.n.Store(n)
	if w.ownSeg < 0 {
		w.segs = append(w.segs, segment{run: run{c: w.own, from: n - 1}, seq: w.seq, maxRev: rev})
		w.ownSeg = len(w.segs) - 1
	}
	seg := &w.segs[w.ownSeg]
	seg.to = n
	seg.bytes += bytes
	if rev == 0 || seg.maxRev == 0 {
		seg.maxRev = 0
	} else {
		seg.maxRev = max(seg.maxRev, rev)
	}
	w.added(1, bytes, &seg.run, seg.len()-1)
}

// addWorld adds a world change.
func (w *rawWindow) addWorld(c *change) {
	w.worlds = append(w.worlds, worldRaw{seq: w.seq, c: c})
	w.ownSeg = -1 // a segment's changes have consecutive numbers
	w.added(1, c.size, nil, 0)
	w.due1(c.at.UnixNano())
}

// added accounts for n changes of size bytes, the newest the ith of r
// (r nil: a world change, whose time the caller checks with due1).
func (w *rawWindow) added(n int, bytes int64, r *run, i int) {
	w.seq += uint64(n)
	w.bytes += bytes
	w.sinceLast += bytes
	if r == nil {
		return
	}
	if rev := r.rev(i); rev != 0 {
		w.curRev = max(w.curRev, rev)
		if w.doms != nil {
			d := w.doms[resource.KindOf(r.res(i).Metadata())]
			w.curRevs[d] = max(w.curRevs[d], rev)
		}
	}
	w.due1(r.at(i))
}

// due1 signals a listing due when the window's last listing is half its
// age old at at, or half its bytes came in since.
func (w *rawWindow) due1(at int64) {
	if !w.dueSent && (at-w.lastAt >= int64(w.maxAge/2) || w.sinceLast >= w.maxBytes/2) {
		w.signal()
	}
}

// signal tells the session a listing is due (once until the next).
func (w *rawWindow) signal() {
	w.dueSent = true
	select {
	case w.due <- struct{}{}:
	default:
	}
}

// aged reports whether a listing is due by age at now.
func (w *rawWindow) aged(now time.Time) bool {
	return now.UnixNano()-w.lastAt >= int64(w.maxAge/2)
}

// install makes l the newest listing: last becomes the window's start,
// and the segments and world changes it holds leave the window (a
// segment whose changes it holds in part stays whole).
func (w *rawWindow) install(l *listing) {
	w.prev = w.last
	w.setLast(l)
	s := w.prev.fresh()
	w.bytes = 0
	segs := w.segs[:0]
	for _, seg := range w.segs {
		if w.prev.holdsAll(&seg, &s) {
			continue
		}
		segs = append(segs, seg)
		w.bytes += seg.bytes
		if seg.seq+uint64(seg.len()) > l.seq {
			w.sinceLast += seg.bytes // came while l was listed
		}
	}
	clear(w.segs[len(segs):])
	w.segs, w.ownSeg = segs, -1
	w.worlds = slices.DeleteFunc(w.worlds, func(x worldRaw) bool { return w.prev.holdsWorld(&x) })
	if w.sinceLast >= w.maxBytes/2 {
		w.signal()
	}
}

// reached reports whether the window holds every change up to revision
// want[i] of each revision domain i (one domain: want[0]).
func (w *rawWindow) reached(want []uint64) bool {
	return reachedRevs(w.curRev, w.curRevs, want)
}

// mark returns where a recording that starts now (Record) starts.
func (w *rawWindow) mark(now time.Time) *mark { return &mark{seq: w.seq, at: now} }

func (w *rawWindow) unmark(*mark) {}

// view makes the recording's window of the changes: from the window's
// start, each change classified (rule RC2) and added, in the order they
// came, to a window with the recorder's bounds (rule RC3), as of now;
// from, when given, is where a recording under way started.
func (w *rawWindow) view(from *mark, now time.Time) view {
	controllers, sizes := w.controllers, w.sizes
	tw := newWindow(w.maxAge, w.maxBytes)
	base := w.prev
	tw.reset(base.start.base, base.at, base.start.rev, base.doms, slices.Clone(base.revs))
	s := base.fresh()
	var mark *checkpoint
	markAt := func(seq uint64) {
		if from != nil && mark == nil && seq >= from.seq {
			mark = tw.mark(from.at)
		}
	}
	worlds := w.worlds
	for _, seg := range w.segs {
		for i := range seg.len() {
			seq := seg.seq + uint64(i)
			for len(worlds) > 0 && worlds[0].seq < seq {
				markAt(worlds[0].seq)
				w.addWorldTo(tw, base, &worlds[0])
				worlds = worlds[1:]
			}
			markAt(seq)
			if !base.holds(&seg.run, i, seq, &s) {
				addTo(tw, &seg.run, i, controllers, sizes)
			}
		}
	}
	for i := range worlds {
		markAt(worlds[i].seq)
		w.addWorldTo(tw, base, &worlds[i])
	}
	markAt(w.seq)
	tw.roll(now)
	return tw.view(mark)
}

// addWorldTo adds a world change to tw unless the window's start holds it.
func (w *rawWindow) addWorldTo(tw *window, base *listing, x *worldRaw) {
	if !base.holdsWorld(x) {
		c := *x.c
		tw.add(&c)
	}
}

// addTo classifies the ith change of r and adds it to tw; an update
// replaced the version tw holds now of its resource.
func addTo(tw *window, r *run, i int, controllers *owners, sizes *sizer) {
	res := r.res(i)
	ev := r.event(i, tw.replaced(r.op(i), res))
	ch, ok := classify(&ev, controllers)
	if !ok {
		return
	}
	ch.at, ch.size = time.Unix(0, r.at(i)), sizes.size(ch.res)
	tw.add(&ch)
}
