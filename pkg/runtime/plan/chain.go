package plan

import (
	"cmp"
	"slices"

	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
)

// commit is a controller's write in the trace, with the change that
// caused the reconcile it was made in.
type commit struct {
	seq uint64
	// version is the version the commit wrote (for a destroy, the version
	// it destroyed); 0 when the state could not tell.
	version    uint64
	controller string
	op         string
	cause      trace.Ref
}

// explain fills each change's writers and causal chain from the trace
// after mark, and marks the changes the proposed change names (rule PL5).
func explain(changes []ResourceChange, ring *trace.Ring, mark uint64, c Change) {
	evs, _ := ring.Since(mark, nil)
	commits := map[resource.PointerKey][]commit{}
	// The cause of each controller's reconcile under way, per worker of a
	// QController of several (a commit's is its own worker's).
	type runner struct {
		controller string
		worker     uint32
	}
	causes := map[runner]trace.Ref{}
	for _, e := range evs {
		switch e.Type {
		case trace.ReconcileStart:
			causes[runner{e.Controller, e.Worker}] = e.Cause
		case trace.Commit:
			key := refKey(e.Resource)
			cause := causes[runner{e.Controller, e.Worker}]
			commits[key] = append(commits[key], commit{seq: e.Seq, version: e.Resource.Version, controller: e.Controller, op: e.Op, cause: cause})
		}
	}
	for _, cs := range commits {
		inVersionOrder(cs)
	}
	proposed := map[resource.PointerKey]bool{}
	for _, r := range c.Set {
		proposed[resource.PointerOf(r.Metadata())] = true
	}
	for _, p := range c.Remove {
		proposed[resource.PointerOf(p)] = true
	}
	for i := range changes {
		rc := &changes[i]
		rc.Proposed = proposed[rc.Pointer]
		for _, w := range commits[rc.Pointer] {
			if !slices.Contains(rc.Writers, w.controller) {
				rc.Writers = append(rc.Writers, w.controller)
			}
		}
		if len(rc.Writers) == 0 && !rc.Proposed {
			rc.Writers = ownerOf(rc)
		}
		if cs := commits[rc.Pointer]; len(cs) > 0 && !rc.Proposed {
			rc.Chain = chain(rc.Pointer, cs[0], commits, proposed)
		}
	}
}

// ownerOf names the owner of a change's resource as its writer, when the
// trace has none of its writes (a controller's CleanupOutputs destroys
// what it owns without a write of its own): rule C4, a controller writes
// as itself.
func ownerOf(rc *ResourceChange) []string {
	r := rc.After
	if r == nil {
		r = rc.Before
	}
	if owner := r.Metadata().Owner(); owner != "" {
		return []string{owner}
	}
	return nil
}

func refKey(r trace.Ref) resource.PointerKey {
	return resource.PointerOf(resource.NewPointer(r.Namespace, r.Type, r.ID))
}

// inVersionOrder sorts one resource's commits into the order the state
// made them. The trace receives a commit once its write returned, so a
// write it caused (another controller woken by the change) can come
// first in the trace: within each life of the resource (up to and
// including its destroy, in the trace's order) the commits go by the
// version they wrote, a destroy last. A life with a commit of unknown
// version keeps the trace's order.
func inVersionOrder(cs []commit) {
	for start := 0; start < len(cs); {
		end := start
		for end < len(cs) && cs[end].op != "destroy" {
			end++
		}
		if end < len(cs) {
			end++ // the destroy ends the life
		}
		life := cs[start:end]
		if !slices.ContainsFunc(life, func(c commit) bool { return c.version == 0 }) {
			slices.SortStableFunc(life, func(a, b commit) int {
				return cmp.Or(cmp.Compare(a.version, b.version), cmp.Compare(rank(a), rank(b)))
			})
		}
		start = end
	}
}

// rank puts a destroy after the write of the version it destroyed.
func rank(c commit) int {
	if c.op == "destroy" {
		return 1
	}
	return 0
}

// chain walks back from first, a write of ptr: the controller that made
// it, the change that caused its reconcile, the write that made that
// change, ... up to a change of the proposed change (an outside write:
// the trace has no commit of it), or one the trace does not explain. It
// returns the steps from the proposed change on.
func chain(ptr resource.PointerKey, first commit, commits map[resource.PointerKey][]commit, proposed map[resource.PointerKey]bool) []string {
	var steps []string
	for c, cur := first, ptr; len(steps) < 32; {
		steps = append(steps, c.controller+" "+c.op+" "+cur.String())
		if c.cause.IsZero() {
			break
		}
		cur = refKey(c.cause)
		next, ok := writeOf(commits[cur], c.cause.Version, c.seq)
		if !ok {
			if proposed[cur] {
				steps = append(steps, cur.String()+" (the change)")
			} else {
				steps = append(steps, cur.String())
			}
			break
		}
		c = next
	}
	slices.Reverse(steps)
	return steps
}

// writeOf returns the commit among cs (one resource's) that made the
// change of version v: its destroy when the trace has one before seq (a
// change caused by a destroy names the version destroyed), else the write
// of v — the trace's last before seq when several lives wrote it — or,
// with v unknown (0), the trace's last commit before seq. None: an
// outside write made it.
func writeOf(cs []commit, v, seq uint64) (commit, bool) {
	if v == 0 {
		return lastBefore(cs, seq)
	}
	var found commit
	ok := false
	for _, c := range cs {
		if c.version == v && c.op == "destroy" && c.seq < seq {
			return c, true
		}
		if c.version == v && c.op != "destroy" && (!ok || c.seq < seq) {
			found, ok = c, true
		}
	}
	return found, ok
}

// lastBefore returns the last commit before seq.
func lastBefore(cs []commit, seq uint64) (commit, bool) {
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].seq < seq {
			return cs[i], true
		}
	}
	return commit{}, false
}
