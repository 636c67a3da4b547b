package etcd

import (
	"maps"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// place registers w with f at its start position and prepares its initial
// events. Tail events and bookmarks that reach before the feed started
// read what they need of the kind's past from etcd first.
func (f *feed) place(w *watcher, kind resource.Kind, st start) error {
	var ptr resource.Pointer
	if w.id != "" {
		ptr = resource.NewPointer(kind.Namespace(), kind.Type(), w.id)
	}
	if st.tail > 0 || st.bookmark {
		if err := f.loadPast(w.ctx, w, st); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w.pos = f.head + 1
	w.after = f.headPos
	switch {
	case st.bookmark:
		if st.from.less(f.keptFrom) {
			return state.NewBufferOverrunError(ptr, "watch %s: the bookmark is older than the history kept", resource.KindString(kind))
		}
		if f.inGapLocked(st.from) {
			return state.NewBufferOverrunError(ptr, "watch %s: the bookmark is in a stretch of history this state did not watch (its etcd watch was lost)", resource.KindString(kind))
		}
		w.after = st.from
		for s := f.oldestLocked(); s <= f.head; s++ {
			if st.from.less(f.changeLocked(s).pos) {
				w.pos = s
				break
			}
		}
	case st.tail > 0:
		w.init = f.tailLocked(w, st.tail)
		w.after = position{}
	case st.bootstrap:
		for _, id := range slices.Sorted(maps.Keys(f.items)) {
			if r := f.items[id].res; w.match(r) {
				w.seen[id] = r
				w.init = append(w.init, state.Event{Type: state.Created, Resource: r, Revision: revOf(f.last)})
			}
		}
		// The position of the kind's newest change, not the feed's head:
		// every whole-kind watch of the feed that received every change
		// holds the same bookmark (what KindHead reports).
		w.init = append(w.init, state.Event{Type: state.Bootstrapped, Bookmark: f.c.bookmark(f.last), Revision: revOf(f.last)})
	case st.current:
		ev := state.Event{Type: state.Destroyed, Resource: backend.PointerOnly(ptr), Bookmark: f.c.bookmark(f.headPos), Revision: revOf(f.headPos)}
		if it := f.items[w.id]; it != nil {
			ev = state.Event{Type: state.Created, Resource: it.res, Bookmark: f.c.bookmark(f.headPos), Revision: revOf(f.headPos)}
			w.seen[w.id] = it.res
		}
		w.init = []state.Event{ev}
	}
	f.watchers[w] = struct{}{}
	return nil
}

// tailLocked returns the events of the last n kept changes that concern w,
// oldest first, and records them as seen.
func (f *feed) tailLocked(w *watcher, n int) []state.Event {
	var picked []*change
	for s := f.head; s >= f.oldestLocked() && len(picked) < n; s-- {
		if c := f.changeLocked(s); w.concerns(c) {
			picked = append(picked, c)
		}
		if s == 0 {
			break
		}
	}
	var evs []state.Event
	for i := len(picked) - 1; i >= 0; i-- {
		c := picked[i]
		oldM, newM := w.match(c.old), w.match(c.new)
		bm := f.c.bookmark(c.pos)
		switch {
		case newM && !oldM:
			w.seen[c.id] = c.new
			evs = append(evs, state.Event{Type: state.Created, Resource: c.new, Bookmark: bm, Revision: revOf(c.pos)})
		case newM:
			w.seen[c.id] = c.new
			evs = append(evs, state.Event{Type: state.Updated, Resource: c.new, Old: c.old, Bookmark: bm, Revision: revOf(c.pos)})
		case oldM:
			delete(w.seen, c.id)
			evs = append(evs, state.Event{Type: state.Destroyed, Resource: c.old, Old: c.old, Bookmark: bm, Revision: revOf(c.pos)})
		}
	}
	return evs
}
