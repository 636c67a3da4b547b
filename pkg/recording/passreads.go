package recording

import (
	"cmp"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
)

// Read implements runtime.PassTap: a read of the pass numbered pass of
// controller saw revision rev (rule RC13).
func (l *passLog) Read(controller string, pass uint64, index uint32, rev uint64, kind resource.KindKey, item resource.PointerKey) {
	e := readEntry{pass: pass, rev: rev, kind: l.kindHashOf(kind.Namespace(), kind.Type()), ctrl: l.nameOf(controller), index: index}
	w := e.words()
	l.reads.put(&w, item)
}

// batchIndex is the number in its pass of the entry of the reads ring
// that is a batch the pass took (Took), not a read.
const batchIndex = 1<<32 - 1

// Took implements runtime.BatchTap: the pass numbered pass of controller
// took a batch of changes at revision rev or below (rule RC13).
func (l *passLog) Took(controller string, pass uint64, rev uint64) {
	e := readEntry{pass: pass, rev: rev, ctrl: l.nameOf(controller), index: batchIndex}
	w := e.words()
	l.reads.put(&w, resource.PointerKey{})
}

// passKey is a pass: its controller's number and its own.
type passKey struct {
	ctrl uint32
	pass uint64
}

// passes returns the passes whose reads the log holds and of which a read
// saw revision from or later (the window's: an older pass read a state
// before the recording's) or that made one of the commits in (by resource
// hash and version: the window's; a pass may read before the window's
// start and commit in it), with how many commits each made, ordered by
// their first read's revision (a controller's in the order they ran);
// a read's kind is one of kinds (zero for another).
func (l *passLog) passes(from uint64, kinds []Kind, in map[[2]uint64]bool) []Pass {
	byHash := make(map[uint64]resource.KindKey, len(kinds))
	for _, k := range kinds {
		byHash[l.kindHash(k.Namespace, k.Type)] = resource.KindOf(resource.NewKind(k.Namespace, k.Type))
	}
	names := l.namesNow()
	at := map[passKey]int{}
	var out []Pass
	var keys []passKey
	l.reads.each(func(w *[ringWords]uint64, item resource.PointerKey) {
		e := readEntryOf(w)
		if e.pass == 0 || int(e.ctrl) >= len(names) {
			return
		}
		k := passKey{e.ctrl, e.pass}
		n, ok := at[k]
		if !ok {
			n = len(out)
			at[k] = n
			out, keys = append(out, Pass{Controller: names[e.ctrl], Item: item}), append(keys, k)
		}
		if e.index == batchIndex {
			out[n].Batch = e.rev
			return
		}
		out[n].Reads = append(out[n].Reads, PassRead{Index: e.index, Revision: e.rev, Kind: byHash[e.kind]})
	})
	for i := range out { // a pass that took a batch and read nothing: none
		if len(out[i].Reads) == 0 {
			out[i].Batch = 0
		}
	}
	committed := make([]bool, len(out)) // a commit of the pass is in
	l.commits.each(func(w *[ringWords]uint64, _ resource.PointerKey) {
		e := passEntryOf(w)
		if n, ok := at[passKey{e.ctrl, e.pass}]; ok && e.pass != 0 {
			out[n].Commits++
			committed[n] = committed[n] || in[[2]uint64{e.key, e.version}]
		}
	})
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	idx = slices.DeleteFunc(idx, func(i int) bool {
		return len(out[i].Reads) == 0 || !committed[i] && out[i].Reads[len(out[i].Reads)-1].Revision < from
	})
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(out[a].Reads[0].Revision, out[b].Reads[0].Revision), cmp.Compare(keys[a].ctrl, keys[b].ctrl), cmp.Compare(keys[a].pass, keys[b].pass))
	})
	kept := make([]Pass, 0, len(idx))
	for _, i := range idx {
		out[i].Reads = inOrder(out[i].Reads)
		kept = append(kept, out[i])
	}
	return kept
}

// inOrder returns a pass's reads ordered by their number, each number
// once (the first logged): reads of one pass made on two goroutines at
// once (destroy.Wrap's forwarder and the controller it wraps) may be
// logged out of their numbers' order, and a read numbered just before a
// pass started may be logged in it.
func inOrder(reads []PassRead) []PassRead {
	slices.SortStableFunc(reads, func(a, b PassRead) int { return cmp.Compare(a.Index, b.Index) })
	return slices.CompactFunc(reads, func(a, b PassRead) bool { return a.Index == b.Index })
}

// commitsOf returns the controllers' commits among a view's entries, by
// resource hash and version (what passes takes).
func (l *passLog) commitsOf(entries []viewEntry) map[[2]uint64]bool {
	in := map[[2]uint64]bool{}
	for _, e := range entries {
		if e.by == ByController {
			in[[2]uint64{l.hash(e.key), e.ver}] = true
		}
	}
	return in
}
