package inmem

import (
	"cmp"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
)

// The spill keeps what a lagging kind watcher would otherwise lose when the
// history ring overwrites records it has not read yet.
//
// A kind watcher whose position is the record about to be overwritten
// "joins" the spill: from then on every record leaving the ring is folded,
// per resource, into the newest spill generation — one map write per
// overwritten record, whatever the number of lagging watchers. A
// generation maps an ID to the state the resource had when its first
// folded change began (old) and the state after its newest folded change
// (new), unfiltered; each watcher applies its own query when it drains.
//
// Watchers that join at different times need different "old" states, so a
// watcher joining while the newest generation already holds records starts
// a new generation. A watcher drains the generations from the one it joined
// up to the newest, combining them per resource (oldest old, newest new),
// and returns to the ring at its oldest record, which was never folded.
// When no watcher references a generation any more it is merged into its
// predecessor (or dropped when it is the oldest), so there are never more
// generations than lagging watchers, and each holds at most one entry per
// resource: the spill is bounded by the number of resources, not by the
// number of writes.

// spillGen is one spill generation. Guarded by the kind store's mu.
type spillGen struct {
	entries map[resource.ID]spillEntry
	refs    int // watchers that joined at this generation
}

// spillEntry is the coalesced change of one resource.
type spillEntry struct {
	old resource.Resource // state before the first change; nil when absent
	new resource.Resource // state after the newest change; nil when absent
	// last is the state the first destroy among the changes destroyed:
	// the last stored state of the life old belongs to (nil: no destroy).
	last resource.Resource
	seq  uint64 // seq of the newest change
	gone uint64 // seq of the newest destroy among the changes; 0: none
	// rev and goneRev are the revisions of the changes seq and gone.
	rev, goneRev uint64
}

// foldEntry adds the change r to the coalesced change e (ok: e is set) and
// reports whether the result is still worth delivering: a resource absent
// before and after is not.
func foldEntry(e spillEntry, ok bool, r *record) (spillEntry, bool) {
	if !ok {
		e = spillEntry{old: r.old}
	}
	e.new = r.new
	e.seq, e.rev = r.seq, r.rev
	if r.new == nil {
		e.gone, e.goneRev = r.seq, r.rev
		if e.last == nil {
			e.last = r.old
		}
	}
	return e, e.old != nil || e.new != nil
}

// combineEntries combines the coalesced change of an older span with the
// one of the newer span that follows it.
func combineEntries(older, newer spillEntry) (spillEntry, bool) {
	newer.old = older.old
	if newer.gone == 0 {
		newer.gone, newer.goneRev = older.gone, older.goneRev
	}
	if older.last != nil {
		newer.last = older.last
	}
	return newer, newer.old != nil || newer.new != nil
}

// coalesced is a spill entry handed to a watcher for delivery.
type coalesced struct {
	spillEntry
	id resource.ID
}

// fold adds a record leaving the ring to the generation. A resource that
// was absent before the generation's first change and is absent again is
// forgotten: nobody who joined here or later has seen it.
func (g *spillGen) fold(r *record) {
	id := r.ID()
	e, ok := g.entries[id]
	if e, ok = foldEntry(e, ok, r); ok {
		g.entries[id] = e
	} else {
		delete(g.entries, id)
	}
}

// joinGenLocked returns the generation a watcher joining now starts at:
// the newest one when nothing was folded into it yet, else a new one.
func (ks *kindStore) joinGenLocked() *spillGen {
	if n := len(ks.spill); n > 0 && len(ks.spill[n-1].entries) == 0 {
		return ks.spill[n-1]
	}
	g := ks.spare
	ks.spare = nil
	if g == nil {
		g = &spillGen{entries: map[resource.ID]spillEntry{}}
	}
	ks.spill = append(ks.spill, g)
	return g
}

// drainLocked hands w everything folded since it joined the spill: the
// entries of each generation from the one it joined to the newest, oldest
// generation first, appended to dst in no other order, and reports whether
// they come from more than one generation (a resource may then have one
// entry per generation, which the caller combines, oldest first, with
// combineEntries). It puts w back on the ring at its oldest record, which
// was never folded.
//
// Only copying the entries is done under the lock; combining them and
// sorting them by seq is the caller's, outside it, so that the kind's
// writers do not wait on a slow watcher's drain (docs/performance.md,
// "Draining the spill").
func (ks *kindStore) drainLocked(w *kindWatcher, dst []coalesced) ([]coalesced, bool) {
	from := slices.Index(ks.spill, w.gen)
	gens := ks.spill[from:]
	n := 0
	for _, g := range gens {
		n += len(g.entries)
	}
	dst = slices.Grow(dst, n)
	for _, g := range gens {
		for id, e := range g.entries {
			dst = append(dst, coalesced{spillEntry: e, id: id})
		}
	}
	multi := len(gens) > 1
	ks.releaseGenLocked(w.gen)
	w.gen = nil
	pos := ks.oldest(ks.seq)
	w.pos.Store(pos)
	w.released.Store(pos)
	ks.minPos = min(ks.minPos, pos)
	return dst, multi
}

// sortCoalesced orders coalesced changes as the changes were applied
// (ascending seq; seqs are distinct). When the seqs span a range not much
// wider than their number, as after a catch-up, it places them by seq in
// linear time, in place; otherwise it sorts them. scratch is reused
// between calls and returned.
func sortCoalesced(cs []coalesced, scratch []int32) []int32 {
	if len(cs) < 2 {
		return scratch
	}
	lo, hi := cs[0].seq, cs[0].seq
	for _, c := range cs[1:] {
		lo, hi = min(lo, c.seq), max(hi, c.seq)
	}
	if span := hi - lo + 1; span <= uint64(4*len(cs)+4096) {
		if need := int(span) + len(cs); cap(scratch) < need {
			scratch = make([]int32, need)
		}
		slots, ranks := scratch[:span], scratch[span:int(span)+len(cs)]
		for i := range slots {
			slots[i] = -1
		}
		for i, c := range cs {
			slots[c.seq-lo] = int32(i)
		}
		r := int32(0)
		for _, i := range slots {
			if i >= 0 {
				ranks[i] = r
				r++
			}
		}
		// Move each change to its rank, following the permutation's
		// cycles: no copy of cs is allocated.
		for i := range cs {
			for j := ranks[i]; j != int32(i); j = ranks[i] {
				cs[i], cs[j] = cs[j], cs[i]
				ranks[i], ranks[j] = ranks[j], j
			}
		}
		return scratch
	}
	slices.SortFunc(cs, func(a, b coalesced) int { return cmp.Compare(a.seq, b.seq) })
	return scratch
}

// releaseGenLocked drops one watcher's reference to g. A generation nobody
// references is merged into its predecessor, or dropped when it is the
// oldest (the watchers of later generations do not need it).
func (ks *kindStore) releaseGenLocked(g *spillGen) {
	g.refs--
	if g.refs > 0 {
		return
	}
	i := slices.Index(ks.spill, g)
	unused := g.entries
	if i > 0 {
		prev := ks.spill[i-1]
		merged, tookNewer := mergeGens(prev.entries, g.entries)
		if tookNewer {
			unused = prev.entries
		}
		prev.entries = merged
	}
	ks.spill = slices.Delete(ks.spill, i, i+1)
	g.entries = nil
	if unused != nil && ks.spare == nil && len(unused) <= spareEntries {
		clear(unused)
		g.entries = unused
		ks.spare = g
	}
}

// spareEntries is the size of the largest spill generation kept for reuse
// once empty: a Go map keeps the memory of its largest size, so a
// generation that held a whole kind's resources (a watcher that fell far
// behind a burst) is let go rather than kept, empty, for the next lag.
const spareEntries = maxLag

// mergeGens combines an older and a newer generation (oldest old, newest
// new per resource) into whichever map is larger, and returns it and
// whether it is the newer one.
func mergeGens(older, newer map[resource.ID]spillEntry) (map[resource.ID]spillEntry, bool) {
	if len(older) >= len(newer) {
		for id, n := range newer {
			keep := true
			if o, ok := older[id]; ok {
				n, keep = combineEntries(o, n)
			}
			if keep {
				older[id] = n
			} else {
				delete(older, id)
			}
		}
		return older, false
	}
	for id, o := range older {
		n, ok := newer[id]
		if !ok {
			newer[id] = o
			continue
		}
		if n, ok = combineEntries(o, n); ok {
			newer[id] = n
		} else {
			delete(newer, id)
		}
	}
	return newer, true
}
