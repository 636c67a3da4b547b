package plan

import (
	"slices"

	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
)

// commit is a controller's write in the trace, with the change that
// caused the reconcile it was made in.
type commit struct {
	seq        uint64
	controller string
	op         string
	cause      trace.Ref
}

// explain fills each change's writers and causal chain from the trace
// after mark, and marks the changes the proposed change names (rule PL5).
func explain(changes []ResourceChange, ring *trace.Ring, mark uint64, c Change) {
	evs, _ := ring.Since(mark, nil)
	commits := map[resource.PointerKey][]commit{}
	causes := map[string]trace.Ref{}
	for _, e := range evs {
		switch e.Type {
		case trace.ReconcileStart:
			causes[e.Controller] = e.Cause
		case trace.Commit:
			key := refKey(e.Resource)
			commits[key] = append(commits[key], commit{seq: e.Seq, controller: e.Controller, op: e.Op, cause: causes[e.Controller]})
		}
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
			rc.Chain = chain(rc.Pointer, cs[0].seq+1, commits, proposed)
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

// chain walks back from the first write of ptr (the last before seq):
// the controller that made it, the change that caused its reconcile, the
// write that made that change, ... up to a change of the proposed change
// (an outside write: the trace has no commit of it), or one the trace
// does not explain. It returns the steps from the proposed change on.
func chain(ptr resource.PointerKey, seq uint64, commits map[resource.PointerKey][]commit, proposed map[resource.PointerKey]bool) []string {
	var steps []string
	// Each step goes to an earlier commit (seq decreases): the walk ends.
	for cur := ptr; len(steps) < 32; {
		c, ok := lastBefore(commits[cur], seq)
		if !ok {
			if proposed[cur] {
				steps = append(steps, cur.String()+" (the change)")
			} else {
				steps = append(steps, cur.String())
			}
			break
		}
		steps = append(steps, c.controller+" "+c.op+" "+cur.String())
		if c.cause.IsZero() {
			break
		}
		cur, seq = refKey(c.cause), c.seq
	}
	slices.Reverse(steps)
	return steps
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
