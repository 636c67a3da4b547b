package recording

import (
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
)

// entry is one change in the recorder's window. res is the state's shared
// snapshot (S7): read, never changed.
type entry struct {
	at     time.Time
	rev    uint64
	by     By
	op     Op
	writer string
	res    resource.Resource
	action string
	// size is the entry's estimated encoded size.
	size int64
	// coalesced is set when the change stands for several the recorder
	// did not see one by one (its watch fell behind, rule S12).
	coalesced bool
}

// before orders two entries as the state applied them: by revision, and
// a world action after the changes of the revision it was noted at.
// Entries of a state that does not number its changes keep their order
// of arrival.
func (e *entry) before(o *entry) bool {
	if e.rev == 0 || o.rev == 0 {
		return false
	}
	return e.rev < o.rev || (e.rev == o.rev && e.by != ByWorld && o.by == ByWorld)
}

// window is the recorder's bounded history (rule RC3): the state at its
// start (base, as of baseAt and baseRev) and every change after it, in
// order. Changes leave by the front into base when they are older than
// maxAge or when the window holds more than maxBytes.
type window struct {
	base     map[resource.PointerKey]resource.Resource
	baseAt   time.Time
	baseRev  uint64
	entries  []entry
	head     int
	bytes    int64
	maxAge   time.Duration
	maxBytes int64
}

func newWindow(maxAge time.Duration, maxBytes int64) *window {
	return &window{base: map[resource.PointerKey]resource.Resource{}, maxAge: maxAge, maxBytes: maxBytes}
}

// reset starts the window over from base, as of at and rev.
func (w *window) reset(base map[resource.PointerKey]resource.Resource, at time.Time, rev uint64) {
	w.base, w.baseAt, w.baseRev = base, at, rev
	clear(w.entries)
	w.entries, w.head, w.bytes = w.entries[:0], 0, 0
}

// add adds a change in its place (by revision) and trims the window. A
// change older than the window's start goes into base.
func (w *window) add(e entry, now time.Time) {
	if e.rev != 0 && e.rev <= w.baseRev && e.by != ByWorld {
		w.apply(&e)
		return
	}
	w.entries = append(w.entries, e)
	for i := len(w.entries) - 1; i > w.head && w.entries[i].before(&w.entries[i-1]); i-- {
		w.entries[i], w.entries[i-1] = w.entries[i-1], w.entries[i]
	}
	w.bytes += e.size
	w.trim(now)
}

// trim lets the changes older than maxAge, and the oldest ones while the
// window holds more than maxBytes, go into base.
func (w *window) trim(now time.Time) {
	for w.head < len(w.entries) {
		e := &w.entries[w.head]
		old := now.Sub(e.at) > w.maxAge
		if !old && w.bytes <= w.maxBytes {
			break
		}
		w.apply(e)
		w.baseAt, w.baseRev = e.at, max(w.baseRev, e.rev)
		if old {
			w.baseAt = now.Add(-w.maxAge)
		}
		w.bytes -= e.size
		*e = entry{}
		w.head++
	}
	if w.head == len(w.entries) {
		w.entries, w.head = w.entries[:0], 0
	} else if w.head > 1024 && w.head > len(w.entries)/2 {
		n := copy(w.entries, w.entries[w.head:])
		clear(w.entries[n:])
		w.entries, w.head = w.entries[:n], 0
	}
	if w.baseAt.Before(now.Add(-w.maxAge)) && w.head == len(w.entries) {
		w.baseAt = now.Add(-w.maxAge)
	}
}

// apply applies a change to base.
func (w *window) apply(e *entry) {
	if e.res == nil {
		return
	}
	key := resource.PointerOf(e.res.Metadata())
	if e.op == OpDestroy {
		delete(w.base, key)
	} else {
		w.base[key] = e.res
	}
}

// view is a copy of what a recording needs of the window.
type view struct {
	base    []resource.Resource
	at      time.Time
	rev     uint64
	entries []entry
}

func (w *window) view() view {
	v := view{base: make([]resource.Resource, 0, len(w.base)), at: w.baseAt, rev: w.baseRev}
	for _, r := range w.base {
		v.base = append(v.base, r)
	}
	v.entries = append([]entry(nil), w.entries[w.head:]...)
	return v
}

// from moves the view's start to the first change at or after t: the
// changes before it go into the starting state.
func (v *view) from(t time.Time) {
	i := 0
	for i < len(v.entries) && v.entries[i].at.Before(t) {
		i++
	}
	if i == 0 {
		if v.at.Before(t) {
			v.at = t
		}
		return
	}
	m := make(map[resource.PointerKey]resource.Resource, len(v.base))
	for _, r := range v.base {
		m[resource.PointerOf(r.Metadata())] = r
	}
	w := window{base: m}
	for j := range v.entries[:i] {
		w.apply(&v.entries[j])
		v.rev = max(v.rev, v.entries[j].rev)
	}
	v.base = v.base[:0]
	for _, r := range m {
		v.base = append(v.base, r)
	}
	v.entries = v.entries[i:]
	v.at = t
}
