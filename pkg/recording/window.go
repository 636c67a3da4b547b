package recording

import (
	"cmp"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
)

// change is a change as the recorder hands it to its window: res is the
// state's shared snapshot (S7), read and never changed.
type change struct {
	at        time.Time
	rev       uint64
	by        By
	op        Op
	writer    string
	res       resource.Resource
	action    string
	value     []byte
	size      int64
	coalesced bool
}

// worldRead is a world read's extra: what was read and what it returned.
type worldRead struct {
	name  string
	value []byte
}

// entry is one change in the window, without pointers (the garbage
// collector does not scan the window): its resource is a slot of the
// window's resource table, its writer a name of the window's names, and
// an outside change's resource (the only one the window keeps: a
// controller's change is made again by a replay) or a world action's
// name an index into extras.
type entry struct {
	at    int64
	rev   uint64
	seq   uint64
	ver   uint64
	size  int64
	slot  uint32
	extra uint32
	name  uint16
	// dom is the revision domain of the change's kind (revisionDomains).
	dom uint16
	by  By
	op  Op
	// coalesced is set when the change stands for several the recorder
	// did not see one by one (its watch fell behind, rule S12).
	coalesced bool
}

// noExtra is the extra of an entry that has none.
const noExtra = ^uint32(0)

// compareEntries orders two entries as the state applied them: by
// revision, and a world action after the changes of the revision it was
// noted at; entries of a state that does not number its changes (and
// changes of one revision) keep their order of arrival.
func compareEntries(a, b entry) int {
	if a.rev == 0 || b.rev == 0 {
		return cmp.Compare(a.seq, b.seq)
	}
	return cmp.Or(cmp.Compare(a.rev, b.rev), cmp.Compare(worldLast(a), worldLast(b)), cmp.Compare(a.seq, b.seq))
}

func worldLast(e entry) int {
	if e.by == ByWorld {
		return 1
	}
	return 0
}

// checkpoint is the state at one point of the window: each slot's
// resource then (nil: none), when, at which revision (over several
// revision domains, the highest, and each domain's in revs), and how many
// entries the window had seen then.
type checkpoint struct {
	res  []resource.Resource
	at   time.Time
	rev  uint64
	revs []uint64
	seq  uint64
	// gen is the window's generation (reset starts a new one).
	gen uint64
}

// holds reports whether the checkpoint already holds entry e (a change
// that arrived after it was taken, from a kind whose watch lagged): a
// numbered change when its revision is at most the checkpoint's of its
// domain, another when it arrived before the checkpoint was taken. A
// world change is before the checkpoint when it was noted before the
// checkpoint was taken, at or below its revision when both are numbered
// by one sequence (one noted later at the same revision, the state
// quiet meanwhile, is after it).
func (c *checkpoint) holds(e *entry) bool {
	switch {
	case e.by == ByWorld:
		return e.seq < c.seq && (e.rev == 0 || c.revs != nil || e.rev <= c.rev)
	case e.rev == 0:
		return e.seq < c.seq
	case c.revs != nil:
		return e.rev <= c.revs[e.dom]
	}
	return e.rev <= c.rev
}

// after reports whether c was taken after o.
func (c *checkpoint) after(o *checkpoint) bool {
	if c.revs != nil || c.rev == 0 {
		return c.seq > o.seq
	}
	return c.rev > o.rev
}

// window is a recording's window as a take makes it of the recorder's
// (rawWindow.view), bounded as rule RC3 says: the state now (cur), two
// checkpoints of it (prev, the window's start, and last), and every
// change since prev, in their order of arrival (sorted by compareEntries
// in a view). When last is older than half the window's age, or half its
// bytes came in since last, a new checkpoint is taken: last becomes prev,
// and the changes before it leave. Resources are slots of one table
// (slots), so that the state now and each checkpoint are slices.
type window struct {
	slots  slotTable
	cur    chunked[resource.Resource]
	curRev uint64
	// doms are the revision domains of the kinds (nil: one domain), and
	// curRevs each domain's revision now (revisionDomains).
	doms    map[resource.KindKey]uint16
	curRevs []uint64
	names   writerNames
	extras  chunked[any]
	prev    checkpoint
	last    checkpoint
	// lastAt is last.at in Unix nanoseconds.
	lastAt int64
	// entries are the changes since prev.
	entries log
	seq     uint64
	bytes   int64
	// sinceLast are the bytes of the changes since last.
	sinceLast int64
	// marks are the checkpoints of recordings under way (Record), kept
	// up to date like prev and last.
	marks map[*checkpoint]struct{}
	// gen counts the resets.
	gen      uint64
	maxAge   time.Duration
	maxBytes int64
}

func newWindow(maxAge time.Duration, maxBytes int64) *window {
	return &window{slots: newSlotTable(), marks: map[*checkpoint]struct{}{}, maxAge: maxAge, maxBytes: maxBytes}
}

// reset starts the window over from the state of the resources rs, as of
// at and rev; over several revision domains (doms not nil), as of each
// domain's revision in revs.
func (w *window) reset(rs []resource.Resource, at time.Time, rev uint64, doms map[resource.KindKey]uint16, revs []uint64) {
	w.names.reset()
	w.cur.reset()
	w.extras.reset()
	w.slots.reset()
	for _, r := range rs {
		*w.cur.at(int(w.slot(r.Metadata()))) = r
	}
	w.curRev, w.doms, w.curRevs = rev, doms, revs
	w.gen++
	w.setLast(at)
	w.prev = w.last
	w.entries.reset()
	w.bytes, w.sinceLast = 0, 0
	clear(w.marks)
}

// slot returns the slot of the resource md names, adding it.
func (w *window) slot(md *resource.Metadata) uint32 {
	s, added := w.slots.lookup(md)
	if added {
		w.cur.append(nil)
	}
	return s
}

// replaced returns, for an update (op) to res, the version of its
// resource in the state now (which the update replaces: the window holds
// every change since its start, in order, and the state at its start);
// nil for another change, or a resource the window does not hold.
func (w *window) replaced(op commitOp, res resource.Resource) resource.Resource {
	if op != committedUpdate {
		return nil
	}
	return *w.cur.at(int(w.slot(res.Metadata())))
}

// checkpoint returns a checkpoint of the state now.
func (w *window) checkpoint(at time.Time) checkpoint {
	return checkpoint{res: w.cur.flat(), at: at, rev: w.curRev, revs: slices.Clone(w.curRevs), seq: w.seq, gen: w.gen}
}

// setLast takes the last checkpoint now.
func (w *window) setLast(at time.Time) {
	w.last = w.checkpoint(at)
	w.lastAt = at.UnixNano()
}

// add adds a change: to the state now, to the checkpoints that were
// taken after it (a lagging kind's change), and to the changes unless
// the window's start already holds it.
func (w *window) add(c *change) {
	e := entry{at: c.at.UnixNano(), rev: c.rev, seq: w.seq, by: c.by, op: c.op, size: c.size, extra: noExtra, coalesced: c.coalesced}
	w.seq++
	if c.res != nil {
		md := c.res.Metadata()
		e.slot, e.ver = w.slot(md), md.Version().Value()
		now := c.res
		if c.op == OpDestroy {
			now = nil
		}
		*w.cur.at(int(e.slot)) = now
		w.curRev = max(w.curRev, c.rev)
		if w.doms != nil {
			e.dom = w.doms[resource.KindOf(md)]
			w.curRevs[e.dom] = max(w.curRevs[e.dom], c.rev)
		}
		if e.rev == 0 || w.doms != nil || e.rev <= w.last.rev {
			w.late(&w.last, &e, now) // prev is older than last: it holds e only if last does
			w.late(&w.prev, &e, now)
		}
		if len(w.marks) > 0 {
			for m := range w.marks {
				w.late(m, &e, now)
			}
		}
		if w.prev.holds(&e) {
			return
		}
		if c.by != ByController {
			e.extra = w.extra(c.res)
		}
	} else if c.op == OpRead {
		e.extra = w.extra(worldRead{name: c.action, value: c.value})
	} else {
		e.extra = w.extra(c.action)
	}
	e.name = w.names.number(c.writer)
	w.entries.append(e)
	w.bytes += e.size
	w.sinceLast += e.size
	if e.at-w.lastAt >= int64(w.maxAge/2) || w.sinceLast >= w.maxBytes/2 {
		w.roll(c.at)
	}
}

// tracked returns the checkpoints a late change may have to go into.
func (w *window) tracked() []*checkpoint {
	out := []*checkpoint{&w.prev, &w.last}
	for m := range w.marks {
		out = append(out, m)
	}
	return out
}

// late puts a change into a checkpoint that holds it although it was
// taken before the change arrived (a lagging kind's change). A
// checkpoint taken before the slot existed is shorter.
func (w *window) late(cp *checkpoint, e *entry, r resource.Resource) {
	if !cp.holds(e) {
		return
	}
	for uint32(len(cp.res)) <= e.slot {
		cp.res = append(cp.res, nil)
	}
	cp.res[e.slot] = r
}

func (w *window) extra(x any) uint32 {
	return uint32(w.extras.append(x))
}

// roll takes a new checkpoint when the last one is older than half the
// window's age or half its bytes came in since; the changes before the
// previous one then leave the window.
func (w *window) roll(now time.Time) {
	if now.Sub(w.last.at) < w.maxAge/2 && w.sinceLast < w.maxBytes/2 {
		return
	}
	w.prev = w.last
	w.setLast(now)
	w.sinceLast = 0
	extras := 0
	w.entries.keep(func(e *entry) bool {
		if w.prev.holds(e) {
			w.bytes -= e.size
			return false
		}
		if e.extra != noExtra {
			extras++
		}
		return true
	})
	w.compact(extras)
	w.compactSlots()
}

// curLive returns how many resources the state now holds.
func (w *window) curLive() int {
	n := 0
	for i := range w.cur.len() {
		if *w.cur.at(i) != nil {
			n++
		}
	}
	return n
}

// compactSlots drops the slots of resources nothing holds any more (gone
// from the state, from the checkpoints and from the changes), once they
// are most of them: a daemon whose resources come and go keeps a table
// the size of what it holds.
func (w *window) compactSlots() {
	if w.slots.len() < 4096 || 2*w.curLive() > w.slots.len() {
		return // the state now alone holds most slots
	}
	used := make([]bool, w.slots.len())
	live := 0
	use := func(s uint32) {
		if !used[s] {
			used[s] = true
			live++
		}
	}
	for _, cp := range append(w.tracked(), &checkpoint{res: w.cur.flat()}) {
		for s, r := range cp.res {
			if r != nil {
				use(uint32(s))
			}
		}
	}
	for i := range w.entries.len() {
		if e := w.entries.at(i); e.by != ByWorld {
			use(e.slot)
		}
	}
	if 2*live > w.slots.len() {
		return
	}
	remap := w.slots.keep(used)
	remapped := func(rs []resource.Resource) []resource.Resource {
		out := make([]resource.Resource, live)
		for s, r := range rs {
			if r != nil {
				out[remap[s]] = r
			}
		}
		return out
	}
	for _, cp := range w.tracked() {
		cp.res = remapped(cp.res)
	}
	w.cur.set(remapped(w.cur.flat()))
	for i := range w.entries.len() {
		if e := w.entries.at(i); e.by != ByWorld {
			e.slot = remap[e.slot]
		}
	}
}

// compact drops the extras no entry refers to any more, once they are
// most of them; live entries refer to one.
func (w *window) compact(live int) {
	if w.extras.len() < 1024 || live > w.extras.len()/2 {
		return
	}
	extras := make([]any, 0, live)
	for i := range w.entries.len() {
		if e := w.entries.at(i); e.extra != noExtra {
			extras = append(extras, *w.extras.at(int(e.extra)))
			e.extra = uint32(len(extras) - 1)
		}
	}
	w.extras.set(extras)
}

// mark returns a checkpoint of the state now, for a recording that starts
// now (Recorder.Record), kept up to date until unmark.
func (w *window) mark(now time.Time) *checkpoint {
	m := w.checkpoint(now)
	w.marks[&m] = struct{}{}
	return &m
}

// view is a copy of what a recording needs of the window: the state at
// its start, the changes after it (in order), and the state now.
type view struct {
	start   checkpoint
	initial []resource.Resource
	entries []viewEntry
	final   []resource.Resource
}

// viewEntry is an entry with its pointers.
type viewEntry struct {
	entry
	key    resource.PointerKey
	writer string
	res    resource.Resource
	action string
	value  []byte
}

// view returns the window from its start, or from the checkpoint from
// when that one is still in the window.
func (w *window) view(from *checkpoint) view {
	start := w.prev
	if from != nil && from.gen == w.gen && from.after(&start) {
		start = *from
	}
	v := view{start: start, initial: nonNil(start.res), final: nonNil(w.cur.flat())}
	keys := w.slots.keys()
	for i := range w.entries.len() {
		e := *w.entries.at(i)
		if start.holds(&e) {
			continue
		}
		ve := viewEntry{entry: e}
		if e.by != ByWorld {
			ve.key = keys[e.slot]
		}
		ve.writer = w.names.of(e.name)
		if e.extra != noExtra {
			switch x := (*w.extras.at(int(e.extra))).(type) {
			case resource.Resource:
				ve.res = x
			case string:
				ve.action = x
			case worldRead:
				ve.action, ve.value = x.name, x.value
			}
		}
		v.entries = append(v.entries, ve)
	}
	sortEntries(v.entries, w.doms != nil)
	return v
}

// sortEntries orders a view's entries as the state applied them
// (compareEntries). Over several revision domains (multi) a revision
// orders only the changes of its domain: the entries are put in the
// order of their times, then each domain's (and the world's) are put in
// their own order in the places that domain's entries took.
func sortEntries(es []viewEntry, multi bool) {
	byState := func(a, b viewEntry) int { return compareEntries(a.entry, b.entry) }
	if !multi {
		slices.SortFunc(es, byState)
		return
	}
	slices.SortFunc(es, func(a, b viewEntry) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
	places := map[int][]int{}
	for i := range es {
		g := int(es[i].dom)
		if es[i].by == ByWorld {
			g = -1
		}
		places[g] = append(places[g], i)
	}
	for _, at := range places {
		part := make([]viewEntry, len(at))
		for j, i := range at {
			part[j] = es[i]
		}
		slices.SortFunc(part, byState)
		for j, i := range at {
			es[i] = part[j]
		}
	}
}

func nonNil(rs []resource.Resource) []resource.Resource {
	out := make([]resource.Resource, 0, len(rs))
	for _, r := range rs {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}
