package transform

import (
	"fmt"
	"slices"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Incremental passes (rule G3 of docs/generic-controllers.md): a pass woken by changes of the inputs
// processes the inputs the Runtime's change log names (changelog.Source),
// with the inputs not done (failing, or waiting for an output to go),
// reading each with a Get: it costs what changed, not every input. A pass
// lists every input instead (a full pass) when the log cannot say what
// changed — the first pass of a Run, after a re-list of the input kind or
// an overflow of the log, under a Runtime that keeps no log — when the
// controller has extra inputs (every wake-up transforms every input), while
// the orphan outputs are still to be looked for, and when the changes are
// more than half of the inputs known (a list is then cheaper).

// changed takes the change log's batch and returns the IDs of the inputs
// to process incrementally, sorted and unique, with true; false when the
// pass is a full one.
func (p *pass[I, O]) changed() ([]resource.ID, bool) {
	rs := p.rs
	src, ok := p.r.(changelog.Source)
	if !ok {
		return nil, false
	}
	rs.changes = src.TakeChanges(rs.changes)
	rs.sizeLog(p.r)
	if p.all || rs.changes.Full || !rs.orphansChecked {
		return nil, false
	}
	ids := rs.changes.IDs(resource.KindOf(p.c.inKind))
	if len(ids)+len(rs.notDone) > len(rs.entries)/2 {
		return nil, false
	}
	for id := range rs.notDone {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return slices.Compact(ids), true
}

// changes processes the inputs ids (sorted, unique) as they are now: each
// one read with a Get, processed against its entry (a new one gets an
// entry: appended in place when it comes after every entry, else merged
// in at the end), and one that is gone or no longer selected by the input
// list options is swept. It returns false when the pass stopped early (ctx
// done), and the error of a read that failed otherwise than with "not
// found" (the Run fails: its restart starts with a full pass).
func (p *pass[I, O]) changes(ids []resource.ID) (bool, error) {
	rs := p.rs
	rs.entries = growFor(rs.entries, pastLast(&rs.ids, rs.entries, ids))
	var added []entry
	gone := -1
	var ptrs []resource.PointerKey
	readOnly := []state.GetOption{state.WithReadOnlyGet()}
	stopped := false
	at := 0 // the entries before at have IDs before id (see seek)
	for k, id := range ids {
		if p.ctx.Err() != nil {
			stopped = true // the entries stay sorted and whole
			break
		}
		if len(ptrs) == 0 {
			// One allocation per ptrChunk reads, not per read; not one
			// for the whole pass, which would all stay alive until its end.
			ptrs = make([]resource.PointerKey, min(len(ids)-k, ptrChunk))
		}
		ptr := &ptrs[0]
		ptrs = ptrs[1:]
		*ptr = p.c.inKey(id)
		res, err := p.r.Get(p.ctx, ptr, readOnly...)
		if err != nil && !state.IsNotFoundError(err) {
			return false, fmt.Errorf("get input %s: %w", resource.PointerString(ptr), err)
		}
		i, known := seek(&rs.ids, rs.entries, at, id)
		at = i // the next ID is after this one (ids are sorted and unique)
		if err != nil || !p.c.listed(res.Metadata()) {
			if known {
				p.sweep(&rs.entries[i], id)
				rs.entries[i].key = idKey{} // compacted below
				gone = firstOf(gone, i)
			}
			continue
		}
		if known {
			p.input(res, &rs.entries[i], true)
			continue
		}
		if n := len(rs.entries); n == 0 || rs.ids.view(&rs.entries[n-1].key) < id {
			// Past the last entry (ids are sorted): appended in place,
			// the entries stay sorted.
			rs.entries = append(rs.entries, entry{key: rs.ids.key(id)})
			p.input(res, &rs.entries[n], false)
			continue
		}
		e := entry{key: rs.ids.key(id)}
		p.input(res, &e, false)
		added = append(added, e)
	}
	if gone >= 0 {
		rs.entries = compact(rs.entries, gone)
	}
	rs.entries = insertSorted(&rs.ids, rs.entries, added)
	rs.ids.compact(rs.entries)
	return !stopped, nil
}

// sizeLog asks the change log of r (changelog.Sizer) to hold as many IDs
// as a pass processes incrementally — half the inputs known — so that it
// overflows into a full pass only where the pass would be a full one
// anyway (the log never holds fewer than its own limit). It asks whenever
// the number of entries changed.
func (rs *runState) sizeLog(r controller.Runtime) {
	want := len(rs.entries) / 2
	if want == rs.logSize {
		return
	}
	if s, ok := r.(changelog.Sizer); ok {
		s.SizeChanges(want)
		rs.logSize = want
	}
}

// listed reports whether an input is one the input list would hold: the
// list options are applied by List unless the controller applies them
// itself (filterInController), and then every input is listed.
func (c *Controller[I, O]) listed(md *resource.Metadata) bool {
	if c.filterInController() || len(c.opts.listOptions) == 0 {
		return true
	}
	return c.filter.LabelQueries.Matches(*md.Labels()) && c.filter.IDQuery.Matches(md.ID())
}

// inKey returns the PointerKey of the input id. The Pointer NewPointer
// returns is asserted back at once: it does not escape, so that nothing
// is allocated (resource.PointerOf would box it on the heap).
func (c *Controller[I, O]) inKey(id resource.ID) resource.PointerKey {
	return resource.NewPointer(c.inKind.Namespace(), c.inKind.Type(), id).(resource.PointerKey)
}

// track keeps the input id, whose entry is e, in notDone while e is not
// done (id is the input's own ID, kept as a map key).
func (rs *runState) track(id resource.ID, e *entry) {
	switch {
	case !e.done:
		rs.notDone[id] = struct{}{}
	case len(rs.notDone) > 0:
		delete(rs.notDone, id)
	}
}

// pastLast returns how many of ids (sorted) come after the last entry: the
// inputs a pass appends in place, for which it grows the entries once.
func pastLast(a *idArena, entries []entry, ids []resource.ID) int {
	if len(entries) == 0 {
		return len(ids)
	}
	i, found := slices.BinarySearch(ids, a.view(&entries[len(entries)-1].key))
	if found {
		i++
	}
	return len(ids) - i
}

// growFor returns entries with room for n more. Storage that must grow
// at least doubles: a Run whose inputs come a few per incremental pass
// copies, in all, about as many entries as its final storage holds, where
// append's rule for a large slice (a quarter more each time) copies four
// times as many, as garbage that paces the collector. The price is up to half the entries' storage unused (pointer-free:
// never scanned) until a full pass trims it to an eighth (see merge).
func growFor(entries []entry, n int) []entry {
	if cap(entries)-len(entries) >= n {
		return entries
	}
	grown := make([]entry, len(entries), max(len(entries)+n, 2*len(entries)))
	copy(grown, entries)
	return grown
}

// ptrChunk is how many input pointers an incremental pass allocates at a
// time (a Get's pointer may be kept by the Runtime, so it is not reused).
const ptrChunk = 256

// seek returns the index of the entry of id in entries (sorted by ID),
// or where it would be inserted, and whether it is there, given that
// every entry before from has an ID before id. It probes from, then
// from+1, +3, +7, … (doubling the step) and searches between the last two
// probes: a pass whose inputs are sorted as the entries finds each one in
// O(log gap) comparisons from the last one found, not O(log n) — one or
// two comparisons when most inputs changed. Entries before from are not
// read; an entry swept earlier in the pass has an empty ID, before every
// ID.
func seek(a *idArena, entries []entry, from int, id resource.ID) (int, bool) {
	lo, step := from, 1 // the entries before lo are before id
	hi := lo
	for hi < len(entries) && a.view(&entries[hi].key) < id {
		lo, hi = hi+1, hi+step
		step *= 2
	}
	hi = min(hi, len(entries))
	for lo < hi { // entries[lo-1] < id <= entries[hi] (hi: the probe that stopped, or the end)
		m := int(uint(lo+hi) >> 1)
		if a.view(&entries[m].key) < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(entries) && a.view(&entries[lo].key) == id
}

func firstOf(cur, i int) int {
	if cur < 0 || i < cur {
		return i
	}
	return cur
}

// compact drops the entries with an empty ID, the first at from.
func compact(entries []entry, from int) []entry {
	kept := entries[:from]
	for i := from; i < len(entries); i++ {
		if !entries[i].key.empty() {
			kept = append(kept, entries[i])
		}
	}
	clear(entries[len(kept):])
	return kept
}

// insertSorted merges added (sorted by ID, none known) into entries
// (sorted by ID): appended when they all come after the last entry, else
// merged from the back, moving only the entries after the first insert.
func insertSorted(a *idArena, entries, added []entry) []entry {
	if len(added) == 0 {
		return entries
	}
	n := len(entries)
	entries = growFor(entries, len(added))
	if n == 0 || a.view(&entries[n-1].key) < a.view(&added[0].key) {
		return append(entries, added...)
	}
	entries = entries[:n+len(added)]
	i, j := n-1, len(added)-1
	for k := len(entries) - 1; j >= 0; k-- {
		if i >= 0 && a.view(&entries[i].key) > a.view(&added[j].key) {
			entries[k] = entries[i]
			i--
		} else {
			entries[k] = added[j]
			j--
		}
	}
	return entries
}
