package recording

import (
	"cmp"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
)

// Read implements runtime.PassTap: a read of the pass numbered pass of
// controller saw revision rev (rule RC13).
func (l *passLog) Read(controller string, pass uint64, index uint32, rev uint64, kind resource.KindKey, item *resource.PointerKey) {
	c := l.ctrlOf(controller)
	c.mu.Lock()
	k := c.kindLocked(l, &c.lastRead, kind.Namespace(), kind.Type())
	c.reads.put(pass, rev, uint64(k.n)<<32|uint64(index), item)
	c.mu.Unlock()
}

// batchIndex is the number in its pass of the entry of the reads ring
// that is a batch the pass took (Took), not a read.
const batchIndex = 1<<32 - 1

// Took implements runtime.BatchTap: the pass numbered pass of controller
// took a batch of changes at revision rev or below (rule RC13).
func (l *passLog) Took(controller string, pass uint64, rev uint64) {
	c := l.ctrlOf(controller)
	c.mu.Lock()
	c.reads.put(pass, rev, batchIndex, nil)
	c.mu.Unlock()
}

// passKey is a pass: its controller's number and its own.
type passKey struct {
	ctrl uint32
	pass uint64
}

// passes returns the passes whose reads the log holds and of which a read
// saw revision from or later (the window's: an older pass read a state
// before the recording's) or that made one of the commits in (by
// commitKey: the window's; a pass may read before the window's start and
// commit in it), with how many commits each made, ordered by their first
// read's revision (a controller's in the order they ran); a read's kind
// is one of kinds (zero for another).
func (l *passLog) passes(from uint64, kinds []Kind, in map[uint64]bool) []Pass {
	ctrls := l.ctrlsNow()
	commits, reads := make([]ringCopy, len(ctrls)), make([]ringCopy, len(ctrls))
	for i, c := range ctrls {
		commits[i], reads[i] = c.copies()
	}
	byNumber := l.kindsOf(kinds) // after the copies: each kind they name is numbered
	var out []Pass
	var keys []passKey
	var committed []bool // a commit of the pass is in
	for ci, c := range ctrls {
		commits, reads := &commits[ci], &reads[ci]
		at := map[uint64]int{}
		for i := range reads.len() {
			w, item := reads.at(i)
			e := readEntryOf(w)
			if e.pass == 0 {
				continue
			}
			n, ok := at[e.pass]
			if !ok {
				n = len(out)
				at[e.pass] = n
				out, keys = append(out, Pass{Controller: c.name, Item: item}), append(keys, passKey{c.n, e.pass})
				committed = append(committed, false)
			}
			if e.index == batchIndex {
				out[n].Batch = e.rev
				continue
			}
			out[n].Reads = append(out[n].Reads, PassRead{Index: e.index, Revision: e.rev, Kind: byNumber[e.kind]})
		}
		for i := range commits.len() {
			w, _ := commits.at(i)
			e := passEntryOf(w)
			if n, ok := at[e.pass]; ok && e.pass != 0 {
				out[n].Commits++
				committed[n] = committed[n] || in[e.key]
			}
		}
	}
	return keptPasses(out, keys, committed, from)
}

// kindsOf returns the kinds among kinds the log numbered, by number.
func (l *passLog) kindsOf(kinds []Kind) map[uint32]resource.KindKey {
	byNumber := make(map[uint32]resource.KindKey, len(kinds))
	for _, k := range l.kindsNow() {
		if slices.Contains(kinds, Kind{Namespace: k.ns, Type: k.typ}) {
			byNumber[k.n] = resource.KindOf(resource.NewKind(k.ns, k.typ))
		}
	}
	return byNumber
}

// keptPasses returns those of passes (keys name them) that read
// something and either made a commit of the window (committed) or read a
// state at from or later, ordered by their first read's revision, then their
// controller's number and their own; each with its reads in order.
func keptPasses(passes []Pass, keys []passKey, committed []bool, from uint64) []Pass {
	idx := make([]int, len(passes))
	for i := range idx {
		idx[i] = i
	}
	idx = slices.DeleteFunc(idx, func(i int) bool {
		p := &passes[i]
		return len(p.Reads) == 0 || !committed[i] && p.Reads[len(p.Reads)-1].Revision < from
	})
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(passes[a].Reads[0].Revision, passes[b].Reads[0].Revision), cmp.Compare(keys[a].ctrl, keys[b].ctrl), cmp.Compare(keys[a].pass, keys[b].pass))
	})
	kept := make([]Pass, 0, len(idx))
	for _, i := range idx {
		p := passes[i]
		p.Reads = inOrder(p.Reads)
		kept = append(kept, p)
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
// commitKey (what passes takes).
func (l *passLog) commitsOf(entries []viewEntry) map[uint64]bool {
	in := map[uint64]bool{}
	for _, e := range entries {
		if e.by == ByController {
			in[commitKey(l.hash(e.key), e.ver)] = true
		}
	}
	return in
}
