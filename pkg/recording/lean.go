package recording

import (
	"cmp"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// leanEntry is one change in a lean window, in 40 bytes without
// pointers (the collector neither scans the window's entries nor marks
// anything for them). A controller's change keeps no resource: its
// pointer is its kind (a number of the window's kinds) and its ID, a run
// of the window's ID arena (ref); an outside change's resource (its ID is
// the resource's), or a world change's action, is an extra: ref then
// holds the extra's index in the window's extras (its high 32 bits) and
// the change's size (its low 32; a controller's change's size is
// entryOverhead). A world change keeps its number among the world
// changes in ver (it has no version).
type leanEntry struct {
	at    int64
	rev   uint64
	ver   uint64
	ref   uint64
	name  uint16
	kind  uint16
	by    By
	op    Op
	flags uint8
}

// The flags of a leanEntry.
const (
	entryCoalesced = 1 << iota // the change coalesced several versions
	entryExtra                 // ref is an extra's index and the size
)

// hasExtra reports whether the entry's change has an extra.
func (e *leanEntry) hasExtra() bool { return e.flags&entryExtra != 0 }

// extra returns the index of the entry's extra (hasExtra).
func (e *leanEntry) extra() int { return int(e.ref >> 32) }

// id returns the ID of a controller's change without extra in the
// window's ID arena.
func (e *leanEntry) id() arenaRef { return arenaRef(e.ref) }

// size returns what the change costs the window's bytes.
func (e *leanEntry) size() int64 {
	if e.hasExtra() {
		return int64(uint32(e.ref))
	}
	return entryOverhead
}

// setExtra makes the extra at index i the entry's, with the change's
// size.
func (e *leanEntry) setExtra(i int, size int64) {
	e.ref, e.flags = uint64(i)<<32|uint64(uint32(size)), e.flags|entryExtra
}

// cut is a checkpoint of a lean window: a listing of every kind (shared
// snapshots), kind k listed at revision kindRev[k], and its cut c, the
// highest of them. A change of kind k with kindRev[k] < rev <= c belongs
// to the checkpoint (it is folded into it: late), whenever it arrives.
// worlds is the number of world changes noted before its listing began.
type cut struct {
	l       *listing
	c       uint64
	kindRev []uint64
	worlds  uint64
	late    []lateChange
}

// lateChange is a change folded into a cut, or one that came while a
// listing was under way (lean.pending): its kind's number, revision, what
// it did and the resource after it (before it, for a destroy).
type lateChange struct {
	rev  uint64
	kind uint16
	op   Op
	res  resource.Resource
}

// holds reports whether the cut holds (is after) the change e: a change
// of the state at or below the cut, a world change noted before the
// listing began at or below it.
func (c *cut) holds(e *leanEntry) bool {
	if e.by == ByWorld {
		return e.ver < c.worlds && e.rev <= c.c
	}
	return e.rev <= c.c
}

// fold folds into the cut a change of kind k at revision rev that its
// listing of k did not hold; it reports whether the cut holds the
// change.
func (c *cut) fold(lc *lateChange) bool {
	if lc.rev > c.c {
		return false
	}
	if int(lc.kind) >= len(c.kindRev) || lc.rev > c.kindRev[lc.kind] {
		c.late = append(c.late, *lc)
	}
	return true
}

// state returns the resources of the cut: its listing with its late
// changes applied in the order of their revisions.
func (c *cut) state() []resource.Resource {
	if len(c.late) == 0 {
		return c.l.start.base
	}
	idx := make(map[resource.PointerKey]int, len(c.l.start.base))
	out := slices.Clone(c.l.start.base)
	for i, r := range out {
		idx[resource.PointerOf(r.Metadata())] = i
	}
	late := slices.Clone(c.late)
	slices.SortStableFunc(late, func(a, b lateChange) int { return cmp.Compare(a.rev, b.rev) })
	for _, lc := range late {
		k := resource.PointerOf(lc.res.Metadata())
		i, ok := idx[k]
		switch {
		case lc.op == OpDestroy && ok:
			out[i] = nil
			delete(idx, k)
		case lc.op == OpDestroy:
		case ok:
			out[i] = lc.res
		default:
			idx[k] = len(out)
			out = append(out, lc.res)
		}
	}
	return nonNil(out)
}

// lean is the history of a recorder of controllers over a state that
// numbers its changes by one sequence (rule RC3): each change is
// classified as it comes (rule RC2) and appended, with no lookup; the
// window's checkpoints are listings (cuts): its start (prev) and the
// next one (last), taken by the session when half the window's age or
// bytes came in since last (due is signalled), a Record's mark and a
// take's end. While a listing is under way every change that arrives
// keeps its resource (pending), so that the listing's lagging kinds'
// changes are folded into it once it is installed; a change at or below
// a cut that arrives later is folded into it as it arrives. Used under
// the recorder's lock.
type lean struct {
	entries leanLog
	ids     idArena
	extras  chunked[any]
	names   writerNames
	kinds   []resource.KindKey
	// seen is each kind's newest revision the window was handed (or its
	// listing's at the start, when newer).
	seen []uint64
	// lastKind is the index in kinds of the kind found last (-1: none),
	// by the strings it was found by (a kind's strings are interned).
	lastKind        int
	lastNs, lastTyp string
	prev, last      *cut
	// cuts are the marks and takes under way; hi the highest cut of
	// prev, last and cuts.
	cuts []*cut
	hi   uint64
	// pending are the changes that came since the oldest listing under
	// way began (inflight of them), the first numbered pendingBase.
	pending     []lateChange
	pendingBase int
	inflight    int
	// worlds counts the world changes.
	worlds    uint64
	curRev    uint64
	bytes     int64
	sinceLast int64
	lastAt    int64
	// logged are the kinds that come by commit logs (without their old
	// version), olds their resources now (for an update's old version).
	logged map[resource.KindKey]bool
	// closed is the cut the session took when it ended (closedErr: why
	// it could not).
	closed    *cut
	closedErr error
	olds      map[leanKey]resource.Resource
	due       chan<- struct{}
	dueSent   bool
	maxAge    time.Duration
	maxBytes  int64
	// halfAge and halfBytes are half the window's age (in nanoseconds)
	// and bytes: a listing is due when the changes since the last reach
	// either.
	halfAge, halfBytes int64
	controllers        *owners
	sizes              *sizer
}

// leanKey is a resource of a commit log's kind in lean.olds.
type leanKey struct {
	kind uint16
	id   string
}

func newLean(maxAge time.Duration, maxBytes int64, due chan<- struct{}, controllers *owners, sizes *sizer) *lean {
	return &lean{maxAge: maxAge, maxBytes: maxBytes, halfAge: int64(maxAge / 2), halfBytes: maxBytes / 2, due: due,
		controllers: controllers, sizes: sizes, lastKind: -1}
}

// reset starts the window over from the listing l (a session's start).
func (w *lean) reset(l *listing) {
	w.entries.reset()
	w.ids.reset()
	w.extras.reset()
	w.names.reset()
	w.kinds, w.seen, w.lastKind = w.kinds[:0], w.seen[:0], -1
	w.cuts, w.pending, w.pendingBase, w.inflight = nil, nil, 0, 0
	w.worlds, w.bytes = 0, 0
	w.closed, w.closedErr = nil, nil
	w.prev = w.newCut(l, 0)
	copy(w.seen, w.prev.kindRev)
	w.setLast(w.prev)
	w.curRev = w.prev.c
	w.olds = map[leanKey]resource.Resource{}
	for _, r := range l.start.base {
		if md := r.Metadata(); w.logged[resource.KindOf(md)] {
			w.olds[w.keyOf(md)] = r
		}
	}
}

// newCut returns the cut of the listing l, whose listing began when
// worlds world changes had been noted.
func (w *lean) newCut(l *listing, worlds uint64) *cut {
	c := &cut{l: l, c: l.start.rev, worlds: worlds}
	for k, rev := range l.start.kindRev {
		i := w.kindIndex(k.Namespace(), k.Type())
		if i >= len(c.kindRev) {
			c.kindRev = append(c.kindRev, make([]uint64, i+1-len(c.kindRev))...)
		}
		c.kindRev[i] = rev
	}
	return c
}

func (w *lean) setLast(c *cut) {
	w.last, w.lastAt, w.sinceLast, w.dueSent = c, c.l.at.UnixNano(), 0, false
	w.raiseHi()
}

// raiseHi sets hi, the highest cut.
func (w *lean) raiseHi() {
	w.hi = max(w.prev.c, w.last.c)
	for _, c := range w.cuts {
		w.hi = max(w.hi, c.c)
	}
}

// kindIndex returns the number of the kind ns/typ, adding it; the kind
// found last is compared first by its interned strings (a batch is of
// one kind).
func (w *lean) kindIndex(ns resource.Namespace, typ resource.Type) int {
	if w.lastKind >= 0 && sameData(w.lastTyp, typ) && sameData(w.lastNs, ns) {
		return w.lastKind
	}
	i := slices.IndexFunc(w.kinds, func(k resource.KindKey) bool { return k.Type() == typ && k.Namespace() == ns })
	if i < 0 {
		w.kinds, w.seen = append(w.kinds, resource.KindOf(resource.NewKind(ns, typ))), append(w.seen, 0)
		i = len(w.kinds) - 1
	}
	w.lastKind, w.lastNs, w.lastTyp = i, ns, typ
	return i
}

// seenOf returns kind's newest revision the window was handed.
func (w *lean) seenOf(kind resource.KindKey) uint64 {
	if i := slices.Index(w.kinds, kind); i >= 0 {
		return w.seen[i]
	}
	return 0
}

func (w *lean) keyOf(md *resource.Metadata) leanKey {
	ns, typ, id := md.Identity()
	return leanKey{kind: uint16(w.kindIndex(ns, typ)), id: id}
}

func (w *lean) addEvents(evs []state.Event, at time.Time) {
	atn := at.UnixNano()
	for i := range evs {
		ev := &evs[i]
		if ev.Resource == nil {
			continue
		}
		md := ev.Resource.Metadata()
		if v, ok := judge(ev, md, w.controllers); ok {
			w.add(ev.Resource, md, ev.Revision, &v, atn)
		}
	}
}

// addRun adds a run of a commit log's changes; an update replaced the
// version olds holds.
func (w *lean) addRun(r run) {
	for i := range r.len() {
		res := r.res(i)
		md := res.Metadata()
		k := w.keyOf(md)
		var old resource.Resource
		switch r.op(i) {
		case committedUpdate:
			old = w.olds[k]
			w.olds[k] = res
		case committedCreate:
			w.olds[k] = res
		default:
			delete(w.olds, k)
		}
		ev := r.event(i, old)
		if v, ok := judge(&ev, md, w.controllers); ok {
			w.add(res, md, ev.Revision, &v, r.at(i))
		}
	}
}

// add adds a change of the state to res (metadata md) at revision rev,
// which came at at and was judged v: it is kept for the listings under
// way, folded into the cuts it belongs to, and appended unless the
// window's start holds it. The entry is written in place.
func (w *lean) add(res resource.Resource, md *resource.Metadata, rev uint64, v *verdict, at int64) {
	ns, typ, id := md.Identity()
	k := uint16(w.lastKind) // a batch is of one kind
	if w.lastKind < 0 || !sameData(w.lastTyp, typ) || !sameData(w.lastNs, ns) {
		k = uint16(w.kindIndex(ns, typ))
	}
	w.curRev, w.seen[k] = max(w.curRev, rev), max(w.seen[k], rev)
	if w.inflight > 0 || rev <= w.hi {
		if w.late(&lateChange{rev: rev, kind: k, op: v.op, res: res}) {
			return
		}
	}
	ver, _, _ := md.Head()
	name := w.names.last // the writer of the previous change, found inline
	if v.writer == "" {
		name = 0
	} else if name == 0 || !sameData(w.names.list[name-1], v.writer) {
		name = w.names.number(v.writer)
	}
	e := w.entries.next()
	*e = leanEntry{at: at, rev: rev, ver: ver.Value(), kind: k, by: v.by, op: v.op, name: name}
	if v.coalesced {
		e.flags = entryCoalesced
	}
	if v.by != ByController || len(id) > maxArenaID {
		e.setExtra(w.extras.append(res), w.sizes.size(res))
	} else {
		e.ref = uint64(w.ids.put(id))
	}
	w.appended(e)
}

// late keeps a change for the listings under way and folds it into the
// cuts it belongs to; it reports whether the window's start holds it.
func (w *lean) late(lc *lateChange) bool {
	if w.inflight > 0 {
		w.pending = append(w.pending, *lc)
	}
	if lc.rev > w.hi {
		return false
	}
	for _, c := range w.cuts {
		c.fold(lc)
	}
	if w.last != w.prev {
		w.last.fold(lc)
	}
	return w.prev.fold(lc)
}

// append appends an entry and signals a listing due when half the
// window's age or bytes came in since the last.
func (w *lean) append(e *leanEntry) {
	*w.entries.next() = *e
	w.appended(e)
}

// appended notes the entry e, the last appended, and signals a listing
// due when half the window's age or bytes came in since the last.
func (w *lean) appended(e *leanEntry) {
	size := e.size()
	w.bytes += size
	w.sinceLast += size
	if !w.dueSent && (e.at-w.lastAt >= w.halfAge || w.sinceLast >= w.halfBytes) {
		w.signal()
	}
}

// signal tells the session a listing is due (once until the next).
func (w *lean) signal() {
	w.dueSent = true
	select {
	case w.due <- struct{}{}:
	default:
	}
}

// addWorld adds a world change.
func (w *lean) addWorld(c *change) {
	e := leanEntry{at: c.at.UnixNano(), rev: c.rev, ver: w.worlds, by: ByWorld, op: c.op}
	w.worlds++
	if c.op == OpRead {
		e.setExtra(w.extras.append(worldRead{name: c.action, value: c.value}), c.size)
	} else {
		e.setExtra(w.extras.append(c.action), c.size)
	}
	w.append(&e)
}

func (w *lean) reached(want []uint64) bool { return w.curRev >= slices.Max(want) }

// aged reports whether a listing is due by age at now.
func (w *lean) aged(now time.Time) bool {
	return now.UnixNano()-w.lastAt >= w.halfAge
}

// leanChunk is how many entries a chunk of a leanLog holds.
const leanChunk = 1024

// leanLog is a lean window's entries in chunks: growing it copies
// nothing it holds, appending one writes no pointer, and dropping its
// first entries copies none (off is where its first entry is in the
// first chunk).
type leanLog struct {
	chunks []*[leanChunk]leanEntry
	n, off int
}

// next appends an entry and returns it, for the caller to write: a slot
// of a new chunk is zero, one of a chunk the log reuses holds an old
// entry.
func (l *leanLog) next() *leanEntry {
	j := uint(l.off + l.n) // unsigned: a shift and a mask
	c := j / leanChunk
	if c == uint(len(l.chunks)) {
		l.chunks = append(l.chunks, new([leanChunk]leanEntry))
	}
	l.n++
	return &l.chunks[c][j%leanChunk]
}

func (l *leanLog) len() int { return l.n }

// at returns the ith entry.
func (l *leanLog) at(i int) *leanEntry {
	j := uint(l.off + i)
	return &l.chunks[j/leanChunk][j%leanChunk]
}

// truncate keeps the first n entries, dropping the chunks past them.
func (l *leanLog) truncate(n int) {
	keep := (l.off + n + leanChunk - 1) / leanChunk
	clear(l.chunks[keep:])
	l.chunks, l.n = l.chunks[:keep], n
}

// dropFront drops the first p entries, and the chunks before the new
// first one.
func (l *leanLog) dropFront(p int) {
	l.off, l.n = l.off+p, l.n-p
	k := l.off / leanChunk
	clear(l.chunks[:k])
	l.chunks, l.off = l.chunks[k:], l.off-k*leanChunk
}

// reset empties the log.
func (l *leanLog) reset() { l.off = 0; l.truncate(0) }
