package sim

import (
	"cmp"
	"slices"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
)

// passKey names the passes of a controller, or of one QController item.
type passKey struct {
	controller string
	item       resource.PointerKey
}

// lastReads returns, for each controller's commit of rec in order, the
// revision of the state its pass read before it committed. A pass reads
// each kind as it was at the revision the read says (recording rule
// RC13): the newest of its reads' revisions (of those older than the
// commit) at which every kind it read was as the read saw it (no commit
// of the kind between the two; a read served by a cache behind the others
// saw an older revision, which may be the one) is the state it saw, which
// is returned (or, of an incremental pass whose batch of changes came
// before it, the batch's revision: the pass handled the changes of its
// batch, taken before its reads, and those routed between the two are the
// next pass's). When there is none and the pass is a QController item's
// run, the newest at which no resource of its item's ID changed since
// the read saw it (an item's run reads its own resources: a change of
// another item's between its reads is no change of what it read). When
// there is still none, no single state is what it saw, and it is the
// commit's Read, its pass's first read, as it is where the recording
// holds no passes (a version-3 file) or the commit's pass is not found:
// a pass is found in order among its controller's (or item's) passes
// that committed, whose first read is the commit's Read.
func lastReads(rec *recording.Recording) []uint64 {
	queues := map[passKey][]*passLeft{}
	for i := range rec.Passes {
		p := &rec.Passes[i]
		if p.Commits > 0 {
			k := passKey{p.Controller, p.Item}
			queues[k] = append(queues[k], &passLeft{p: p, left: p.Commits})
		}
	}
	changed := kindRevisions(rec)
	var out []uint64
	for _, c := range rec.Changes {
		if c.By != recording.ByController {
			continue
		}
		read := c.Read
		k := passKey{c.Writer, c.Item}
		if q := queues[k]; len(q) > 0 && c.Read != 0 && q[0].p.Reads[0].Revision == c.Read {
			if newest, ok := q[0].newestBefore(c.Revision, changed, ""); ok {
				read = newest
			} else if newest, ok := q[0].newestBefore(c.Revision, changed, c.Item.ID()); ok && c.Item.Type() != "" {
				read = newest // an item's run: only its item's resources count
			}
			if b := q[0].p.Batch; b != 0 && b < read {
				read = b // an incremental pass handled the changes of its batch
			}
			if q[0].left--; q[0].left == 0 {
				queues[k] = q[1:]
			}
		}
		out = append(out, read)
	}
	return out
}

// kindChange is a commit of a kind: its revision and its resource's ID.
type kindChange struct {
	rev uint64
	id  resource.ID
}

// kindRevisions returns the commits of rec by kind, in the order of
// their revisions.
func kindRevisions(rec *recording.Recording) map[resource.KindKey][]kindChange {
	out := map[resource.KindKey][]kindChange{}
	for _, c := range rec.Changes {
		if c.By != recording.ByWorld {
			k := resource.KindOf(c.Pointer)
			out[k] = append(out[k], kindChange{rev: c.Revision, id: c.Pointer.ID()})
		}
	}
	for _, revs := range out {
		slices.SortStableFunc(revs, func(a, b kindChange) int { return cmp.Compare(a.rev, b.rev) })
	}
	return out
}

// passLeft is a recorded pass and how many of its commits are not yet
// matched.
type passLeft struct {
	p    *recording.Pass
	left int
}

// newestBefore returns the newest revision below rev at which the pass
// saw the state as its reads below rev saw it (a read at rev or later
// came after the commit at rev): the newest of its reads' revisions at
// which no kind it read had changed since the read saw it, nor changed
// before the read saw it since that revision (a read served by a cache
// behind the others saw its kind as it was at the older revision), and
// whether there is one (changed: each kind's commits). With an item ID,
// only the commits of resources of that ID count.
func (l *passLeft) newestBefore(rev uint64, changed map[resource.KindKey][]kindChange, item resource.ID) (uint64, bool) {
	var cands []uint64
	for _, rd := range l.p.Reads {
		if rd.Revision < rev || len(cands) == 0 {
			cands = append(cands, rd.Revision)
		}
	}
	slices.Sort(cands)
	for i := len(cands) - 1; i >= 0; i-- {
		if l.sawAt(cands[i], rev, changed, item) {
			return cands[i], true
		}
	}
	return 0, false
}

// sawAt reports whether every read of the pass below rev saw its kind as
// it was at revision at: no commit of the kind (of a resource of ID
// item, when item is set) between the read's revision and at.
func (l *passLeft) sawAt(at, rev uint64, changed map[resource.KindKey][]kindChange, item resource.ID) bool {
	for _, rd := range l.p.Reads {
		if rd.Revision >= rev || rd.Kind == (resource.KindKey{}) {
			continue
		}
		lo, hi := min(rd.Revision, at), max(rd.Revision, at)
		revs := changed[rd.Kind]
		i, _ := slices.BinarySearchFunc(revs, lo+1, func(c kindChange, r uint64) int { return cmp.Compare(c.rev, r) })
		for ; i < len(revs) && revs[i].rev <= hi; i++ {
			if item == "" || revs[i].id == item {
				return false // the kind changed between the read and at
			}
		}
	}
	return true
}
