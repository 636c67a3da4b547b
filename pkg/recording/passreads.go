package recording

import (
	"cmp"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
)

// nameLocked returns the number of the controller name in l.names,
// adding it (looked up by its bytes' address first: a controller's name
// is one string for all its calls); l.mu is held.
func (l *passLog) nameLocked(name string) uint32 {
	for i, n := range l.names {
		if sameData(n, name) {
			return uint32(i)
		}
	}
	for i, n := range l.names {
		if n == name {
			return uint32(i)
		}
	}
	l.names = append(l.names, name)
	return uint32(len(l.names) - 1)
}

// Read implements runtime.PassTap: a read of the pass numbered pass of
// controller saw revision rev (rule RC13).
func (l *passLog) Read(controller string, pass uint64, index uint32, rev uint64, kind resource.KindKey, item resource.PointerKey) {
	l.mu.Lock()
	kh := l.kindHashOfLocked(kind.Namespace(), kind.Type())
	if l.passReads == nil {
		l.passReads = make([]readEntry, readLogSize)
	}
	l.passReads[l.nextRead] = readEntry{pass: pass, rev: rev, kind: kh, ctrl: l.nameLocked(controller), index: index}
	setItem(&l.readItems, readLogSize, l.nextRead, item)
	l.nextRead = (l.nextRead + 1) % len(l.passReads)
	l.mu.Unlock()
}

// passKey is a pass: its controller's number and its own.
type passKey struct {
	ctrl uint32
	pass uint64
}

// passes returns the passes whose reads the log holds and of which a read
// saw revision from or later (the window's: an older pass read a state
// before the recording's), with how many commits each made, ordered by
// their first read's revision (a controller's in the order they ran);
// a read's kind is one of kinds (zero for another).
func (l *passLog) passes(from uint64, kinds []Kind) []Pass {
	byHash := make(map[uint64]resource.KindKey, len(kinds))
	for _, k := range kinds {
		byHash[l.kindHash(k.Namespace, k.Type)] = resource.KindOf(resource.NewKind(k.Namespace, k.Type))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	at := map[passKey]int{}
	var out []Pass
	var keys []passKey
	for i := range l.passReads {
		j := (l.nextRead + i) % len(l.passReads)
		e := l.passReads[j]
		if e.pass == 0 {
			continue
		}
		k := passKey{e.ctrl, e.pass}
		n, ok := at[k]
		if !ok {
			n = len(out)
			at[k] = n
			p := Pass{Controller: l.names[e.ctrl]}
			if l.readItems != nil {
				p.Item = l.readItems[j]
			}
			out, keys = append(out, p), append(keys, k)
		}
		out[n].Reads = append(out[n].Reads, PassRead{Index: e.index, Revision: e.rev, Kind: byHash[e.kind]})
	}
	for _, e := range l.ring {
		if n, ok := at[passKey{e.ctrl, e.pass}]; ok && e.pass != 0 {
			out[n].Commits++
		}
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	idx = slices.DeleteFunc(idx, func(i int) bool { return out[i].Reads[len(out[i].Reads)-1].Revision < from })
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
