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
	// hook is set for a write made outside the reconciles of its
	// controller and worker: for a QController, a write of its RunHook.
	hook bool
}

// phase is the stretch of the trace in which the daemon settled after one
// resource of the proposed change was written: every write in it follows
// from that resource.
type phase struct {
	from     uint64 // the trace's last record before the resource's write
	proposed resource.PointerKey
	world    int // the world actions taken before the resource's write
}

// explain fills each change's writers and causal chain from the trace of
// the phases and the world's actions (those of the System's log), and
// marks the changes the proposed change names (rule PL5).
func explain(changes []ResourceChange, ring *trace.Ring, phases []phase, rd readers, c Change, actions []string) {
	proposed := map[resource.PointerKey]bool{}
	for _, r := range c.Set {
		proposed[resource.PointerOf(r.Metadata())] = true
	}
	for _, p := range c.Remove {
		proposed[resource.PointerOf(p)] = true
	}
	var commits map[resource.PointerKey][]commit
	if len(phases) > 0 {
		commits = commitsSince(ring, phases[0].from, 0)
	}
	chains := make([]*phaseChains, len(phases))
	for i := range changes {
		rc := &changes[i]
		rc.Proposed = proposed[rc.Pointer]
		cs := commits[rc.Pointer]
		explainOne(rc, cs, func() *phaseChains {
			k := phaseOf(phases, cs[0].seq)
			if chains[k] == nil {
				chains[k] = chainsOf(phases, k, commits, rd, phaseActions(actions, phases, k))
			}
			return chains[k]
		})
	}
}

// explainDrift fills each drift change's writers and causal chain from
// the trace up to mark (the daemon settling before the change), its
// chains from the resources of the live state initial, with the world
// actions acts taken then (rule PL5).
func explainDrift(drift []ResourceChange, ring *trace.Ring, mark uint64, rd readers, initial []resource.Resource, acts []string) {
	if len(drift) == 0 {
		return
	}
	commits := commitsSince(ring, 0, mark)
	var pc *phaseChains
	for i := range drift {
		rc := &drift[i]
		explainOne(rc, commits[rc.Pointer], func() *phaseChains {
			if pc == nil {
				roots := make([]resource.PointerKey, len(initial))
				for i, r := range initial {
					roots[i] = resource.PointerOf(r.Metadata())
				}
				slices.SortFunc(roots, comparePointers)
				first := make(map[resource.PointerKey]commit, len(commits))
				for p, cs := range commits {
					first[p] = cs[0]
				}
				pc = newChains(roots, "(in the live state)", first, rd, slices.Sorted(slices.Values(acts)))
			}
			return pc
		})
	}
}

// explainOne fills rc's writers from its commits cs (its owner when it
// has none: the trace lost them) and, when it has some and is not
// proposed, its chain from those of its phase (chains returns them).
func explainOne(rc *ResourceChange, cs []commit, chains func() *phaseChains) {
	for _, w := range cs {
		if !slices.Contains(rc.Writers, w.controller) {
			rc.Writers = append(rc.Writers, w.controller)
		}
	}
	if len(rc.Writers) == 0 && !rc.Proposed {
		rc.Writers = ownerOf(rc)
	}
	if len(cs) > 0 && !rc.Proposed {
		rc.Chain = chains().of(rc.Pointer)
	}
}

// phaseActions returns the world actions of phase k of phases, sorted.
func phaseActions(actions []string, phases []phase, k int) []string {
	end := len(actions)
	if k+1 < len(phases) {
		end = phases[k+1].world
	}
	return slices.Sorted(slices.Values(actions[phases[k].world:end]))
}

// runner is a controller's worker (0: its only one, or none).
type runner struct {
	controller string
	worker     uint32
}

// reconcile is a runner's reconcile open in the trace: the item it is of
// (a QController's; none for a Controller's pass) and its cause.
type reconcile struct {
	item  trace.Ref
	cause trace.Ref
}

// commitsSince returns the commits of the trace after mark (up to to,
// when not 0), each resource's in the order the state made them, each
// with the cause of the reconcile it was made in (its own worker's, for a QController of
// several or with a RunHook). A commit made while its runner has no
// reconcile open (a QController's RunHook's: it names no worker while
// its reconciles do, or it comes between a ReconcileEnd and the next
// ReconcileStart) has no reconcile's cause and is marked hook.
func commitsSince(ring *trace.Ring, mark, to uint64) map[resource.PointerKey][]commit {
	evs, _ := ring.Since(mark, nil)
	commits := map[resource.PointerKey][]commit{}
	open := map[runner]reconcile{}
	for _, e := range evs {
		if to != 0 && e.Seq > to {
			break
		}
		switch e.Type {
		case trace.ReconcileStart:
			open[runner{e.Controller, e.Worker}] = reconcile{item: e.Resource, cause: e.Cause}
		case trace.ReconcileEnd:
			endReconcile(open, &e)
		case trace.Commit:
			key := refKey(e.Resource)
			rc, inside := open[runner{e.Controller, e.Worker}]
			commits[key] = append(commits[key], commit{seq: e.Seq, version: e.Resource.Version,
				controller: e.Controller, op: e.Op, cause: rc.cause, hook: !inside})
		}
	}
	for p, cs := range commits {
		commits[p] = inVersionOrder(cs)
	}
	return commits
}

// endReconcile closes the reconcile e ends: a ReconcileEnd names no
// worker, so it is the open reconcile of e's controller of e's item (a
// queue gives an item to one worker at a time).
func endReconcile(open map[runner]reconcile, e *trace.Record) {
	for r, rc := range open {
		if r.controller == e.Controller && rc.item == e.Resource {
			delete(open, r)
			return
		}
	}
}

// phaseOf returns the index of the phase the trace record seq is in.
func phaseOf(phases []phase, seq uint64) int {
	k := 0
	for i, p := range phases {
		if p.from < seq {
			k = i
		}
	}
	return k
}

// ownerOf names the owner of a change's resource as its writer, when the
// trace has none of its writes (a trace that lost records: a
// controller's writes, its CleanupOutputs' included, are traced): rule
// C4, a controller writes as itself.
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

// inVersionOrder returns one resource's commits (cs, in the trace's
// order) in the order the state made them. The trace receives a commit
// once its write returned, so a write it caused (another controller woken
// by the change) can come first in the trace, even the destroy that ends
// the resource's life: within each life of the resource (up to and
// including its destroy) the commits go by the version they wrote, a
// destroy last; a commit traced after the destroy, before the next life's
// first, belongs to the destroyed life when its version is not above the
// version destroyed. A life with a commit of unknown version keeps the
// trace's order.
func inVersionOrder(cs []commit) []commit {
	var lives [][]commit
	open, destroyed := false, uint64(0)
	for _, c := range cs {
		if !open && len(lives) > 0 && c.op != "create" && c.version != 0 && c.version <= destroyed {
			lives[len(lives)-1] = append(lives[len(lives)-1], c) // traced late
			continue
		}
		if !open {
			lives, open = append(lives, nil), true
		}
		lives[len(lives)-1] = append(lives[len(lives)-1], c)
		if c.op == "destroy" {
			open, destroyed = false, c.version
		}
	}
	out := make([]commit, 0, len(cs))
	for _, life := range lives {
		if !slices.ContainsFunc(life, func(c commit) bool { return c.version == 0 }) {
			slices.SortStableFunc(life, func(a, b commit) int {
				return cmp.Or(cmp.Compare(a.version, b.version), cmp.Compare(rank(a), rank(b)))
			})
		}
		out = append(out, life...)
	}
	return out
}

// rank puts a destroy after the write of the version it destroyed.
func rank(c commit) int {
	if c.op == "destroy" {
		return 1
	}
	return 0
}
