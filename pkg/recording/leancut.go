package recording

import (
	"cmp"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
)

// listingReq is a listing of a lean window under way: where its pending
// changes begin, and how many world changes had been noted.
type listingReq struct {
	from   int
	worlds uint64
}

// request notes that a listing begins: from now until it is installed
// (or dropped), every change that arrives keeps its resource.
func (w *lean) request() listingReq {
	w.inflight++
	return listingReq{from: w.pendingBase + len(w.pending), worlds: w.worlds}
}

// done notes that a listing under way ended (installed or dropped).
func (w *lean) done() {
	if w.inflight--; w.inflight == 0 {
		w.pendingBase += len(w.pending)
		clear(w.pending)
		w.pending = w.pending[:0]
	}
}

// cutOf returns the cut of the listing l that q began, with the changes
// that came meanwhile folded into it.
func (w *lean) cutOf(q listingReq, l *listing) *cut {
	c := w.newCut(l, q.worlds)
	for i := range w.pending[q.from-w.pendingBase:] {
		c.fold(&w.pending[q.from-w.pendingBase+i])
	}
	w.done()
	return c
}

// install makes the listing l that q began the window's newest
// checkpoint: last becomes its start, and the changes the start holds
// leave. Another listing is due at once when the changes after the new
// checkpoint reach half the window's bytes, or those after its start
// the window's bytes (a burst between two listings).
func (w *lean) install(q listingReq, l *listing) {
	c := w.cutOf(q, l)
	w.prev = w.last
	w.setLast(c)
	w.bytes = 0
	total, p := w.entries.len(), 0
	for p < total && w.prev.holds(w.entries.at(p)) {
		p++
	}
	w.entries.dropFront(p)
	n, live := 0, 0
	for i := range total - p {
		e := w.entries.at(i)
		if w.prev.holds(e) {
			continue
		}
		size := e.size()
		w.bytes += size
		if !w.last.holds(e) {
			w.sinceLast += size
		}
		if e.hasExtra() {
			live++
		}
		if n != i {
			*w.entries.at(n) = *e
		}
		n++
	}
	w.entries.truncate(n)
	w.compactIDs(n, total)
	w.compact(live)
	if w.sinceLast >= w.maxBytes/2 || w.bytes >= w.maxBytes {
		w.signal()
	}
}

// addCut makes the listing l that q began a cut kept up to date (a
// Record's mark, a take's end) until dropCut.
func (w *lean) addCut(q listingReq, l *listing) *cut {
	c := w.cutOf(q, l)
	w.cuts = append(w.cuts, c)
	w.raiseHi()
	return c
}

func (w *lean) dropCut(c *cut) {
	w.cuts = slices.DeleteFunc(w.cuts, func(x *cut) bool { return x == c })
	w.raiseHi()
}

// compactIDs copies the IDs of the n entries left of total into an
// arena of their own, once fewer than half of them stay.
func (w *lean) compactIDs(n, total int) {
	if 2*n >= total {
		return
	}
	var ids idArena
	for i := range n {
		if e := w.entries.at(i); e.by == ByController && !e.hasExtra() {
			e.ref = uint64(ids.putBytes(w.ids.bytes(e.id())))
		}
	}
	w.ids = ids
}

// compact drops the extras no entry refers to any more, once they are
// most of them; live entries refer to one.
func (w *lean) compact(live int) {
	if w.extras.len() < 1024 || live > w.extras.len()/2 {
		return
	}
	extras := make([]any, 0, live)
	for i := range w.entries.len() {
		if e := w.entries.at(i); e.hasExtra() {
			extras = append(extras, *w.extras.at(e.extra()))
			e.setExtra(len(extras)-1, e.size())
		}
	}
	w.extras.set(extras)
}

// viewTo returns what a recording needs of the window from its start (or
// from the cut from, when it is after the start) to the cut end: the
// state at each, and the changes between them in the order the state
// applied them.
func (w *lean) viewTo(from, end *cut) view {
	start := w.prev
	if from != nil && (from.c > start.c || from.c == start.c && from.worlds > start.worlds) {
		start = from
	}
	v := view{
		start:   checkpoint{at: start.l.at, rev: start.c},
		initial: start.state(), final: end.state(),
	}
	for i := range w.entries.len() {
		e := w.entries.at(i)
		if start.holds(e) || !end.holds(e) {
			continue
		}
		v.entries = append(v.entries, w.viewEntry(e))
	}
	slices.SortStableFunc(v.entries, func(a, b viewEntry) int {
		return cmp.Or(cmp.Compare(a.rev, b.rev), cmp.Compare(worldLast(a.entry), worldLast(b.entry)))
	})
	return v
}

// viewEntry returns e with its pointers.
func (w *lean) viewEntry(e *leanEntry) viewEntry {
	ve := viewEntry{entry: entry{at: e.at, rev: e.rev, ver: e.ver, by: e.by, op: e.op, coalesced: e.flags&entryCoalesced != 0}}
	if e.by != ByWorld {
		k := w.kinds[e.kind]
		var id string
		if e.hasExtra() {
			id = (*w.extras.at(e.extra())).(resource.Resource).Metadata().ID()
		} else {
			id = w.ids.get(e.id())
		}
		ve.key = resource.PointerOf(resource.NewPointer(k.Namespace(), k.Type(), id))
	}
	ve.writer = w.names.of(e.name)
	if e.hasExtra() {
		switch x := (*w.extras.at(e.extra())).(type) {
		case resource.Resource:
			ve.res = x
		case string:
			ve.action = x
		case worldRead:
			ve.action, ve.value = x.name, x.value
		}
	}
	return ve
}

// The history methods a lean window's recorder does not call: its
// marks and views are cuts (Recorder.leanMark, Recorder.leanTake).
func (w *lean) mark(now time.Time) *mark { return &mark{at: now} }
func (w *lean) unmark(m *mark) {
	if m.cut != nil {
		w.dropCut(m.cut)
	}
}
func (w *lean) view(*mark, time.Time) view { return view{} }
