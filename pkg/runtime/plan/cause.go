package plan

import (
	"maps"
	"slices"
	"strings"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// readers is what the daemon's controllers read, from its dependency
// graph: the input kinds of each controller (an empty namespace: any), and
// which controllers are QControllers; and from its System, the
// controllers that act on the world and those that observe it (sorted).
type readers struct {
	inputs            map[string][]resource.KindKey
	queued            map[string]bool
	actors, observers []string
}

// readersOf returns the readers of the graph g.
func readersOf(g *controller.DependencyGraph) readers {
	rd := readers{inputs: map[string][]resource.KindKey{}, queued: map[string]bool{}}
	for _, e := range g.Edges {
		switch e.EdgeType {
		case controller.EdgeOutputExclusive, controller.EdgeOutputShared:
			continue
		case controller.EdgeInputQPrimary, controller.EdgeInputQMapped, controller.EdgeInputQMappedDestroyReady:
			rd.queued[e.ControllerName] = true
		}
		k := resource.KindOf(resource.NewKind(e.ResourceNamespace, e.ResourceType))
		rd.inputs[e.ControllerName] = append(rd.inputs[e.ControllerName], k)
	}
	return rd
}

// reads reports whether the controller reads the kind of p.
func (rd readers) reads(controller string, p resource.PointerKey) bool {
	return slices.ContainsFunc(rd.inputs[controller], func(k resource.KindKey) bool {
		return k.Type() == p.Type() && (k.Namespace() == "" || k.Namespace() == p.Namespace())
	})
}

// phaseChains are the causal chains of the writes of one phase (rule
// PL5). A resource's link is its first write in the phase; its cause is,
// for a QController's write in a reconcile, the change its reconcile was
// for (the trace names it exactly: the reconcile's item), and for a
// Controller's or a QController's RunHook's, one of the changes of the
// phase of a kind it reads: a pass may have coalesced several, a hook
// reads what it will, and which of them the trace names depends on
// timing. An observer's write that no change of the phase explains
// follows the phase's world actions, taken by the actor the change
// reached first.
// The chain is the shortest from a root, ties going to the cause of the
// written resource's ID, then to the first in kind and ID order: the same
// change gives the same chains on every run.
// The roots are the proposed resource of a phase of the change, or, for
// the daemon's settling before it (the drift), every resource of the live
// state.
type phaseChains struct {
	roots []resource.PointerKey // sorted
	// label follows a root in a chain: "(the change)".
	label  string
	first  map[resource.PointerKey]commit // each resource's first write in the phase
	parent map[resource.PointerKey]source
	depth  map[resource.PointerKey]int // the links from a root, of each resource reached
	// world is, for an observer's write the phase's world actions
	// explain, the link of those actions ("actor action; action").
	world map[resource.PointerKey]string
	// origin is, for a QController's write the phase does not explain,
	// the change its reconcile was for.
	origin map[resource.PointerKey]resource.PointerKey
}

// source is what a resource's write follows from: a root, or another
// resource's write in the phase.
type source struct {
	p    resource.PointerKey
	root bool
}

// chainsOf returns the chains of phase k of phases, from the commits of
// each resource (in the order the state made them) and the phase's world
// actions acts (sorted).
func chainsOf(phases []phase, k int, commits map[resource.PointerKey][]commit, rd readers, acts []string) *phaseChains {
	root := phases[k].proposed
	first := map[resource.PointerKey]commit{}
	for p, cs := range commits {
		if i := slices.IndexFunc(cs, func(c commit) bool { return phaseOf(phases, c.seq) == k }); i >= 0 && p != root {
			first[p] = cs[i]
		}
	}
	return newChains([]resource.PointerKey{root}, "(the change)", first, rd, acts)
}

// newChains returns the chains from roots (sorted; label follows them) of
// the writes first (each resource's first in the phase), with the
// phase's world actions acts (sorted).
func newChains(roots []resource.PointerKey, label string, first map[resource.PointerKey]commit, rd readers, acts []string) *phaseChains {
	pc := &phaseChains{roots: roots, label: label, first: first, parent: map[resource.PointerKey]source{},
		origin: map[resource.PointerKey]resource.PointerKey{}, depth: map[resource.PointerKey]int{}, world: map[resource.PointerKey]string{}}
	nodes := slices.SortedFunc(maps.Keys(pc.first), comparePointers)
	pc.spread(rd, nodes, roots, true)
	if len(acts) > 0 {
		pc.spread(rd, nodes, pc.observed(rd, nodes, acts), false)
	}
	for _, n := range nodes {
		if w, reached := pc.first[n], pc.reached(n); !reached && rd.queued[w.controller] && !w.cause.IsZero() && refKey(w.cause) != n {
			pc.origin[n] = refKey(w.cause)
		}
	}
	return pc
}

// spread reaches, level after level from level (the roots, when roots is
// set), each of nodes a reached resource's change can have caused (a
// resource once, from the first level that can have, and in it from the
// resource of its ID, else from the first in kind and ID order).
func (pc *phaseChains) spread(rd readers, nodes, level []resource.PointerKey, roots bool) {
	for len(level) > 0 {
		var next []resource.PointerKey
		for _, n := range nodes {
			if pc.reached(n) {
				continue
			}
			if i := pc.causeIn(rd, n, level); i >= 0 {
				pc.parent[n] = source{p: level[i], root: roots}
				next = append(next, n)
			}
		}
		for _, n := range next {
			pc.depth[n] = pc.depthOf(pc.parent[n]) + 1
		}
		level, roots = next, false
	}
}

// causeIn returns the index in level of what n's write follows from: of
// those that can have caused it, the one of n's ID ("eth1"'s LinkSpec
// for eth1's LinkStatus), else the first; -1 when none can have.
func (pc *phaseChains) causeIn(rd readers, n resource.PointerKey, level []resource.PointerKey) int {
	if i := slices.IndexFunc(level, func(m resource.PointerKey) bool { return m.ID() == n.ID() && pc.causedBy(rd, n, m) }); i >= 0 {
		return i
	}
	return slices.IndexFunc(level, func(m resource.PointerKey) bool { return pc.causedBy(rd, n, m) })
}

// depthOf is the links from a root of what a write follows from.
func (pc *phaseChains) depthOf(s source) int {
	if s.root {
		return 0
	}
	return pc.depth[s.p]
}

func (pc *phaseChains) reached(p resource.PointerKey) bool {
	_, ok := pc.depth[p]
	return ok
}

// observed links each observer's write not reached yet to the world
// actions acts, taken by the actor reached first (the fewest links from
// a root: an actor that reads a root's kind is at none; ties to the first
// by name, then by its write's kind and ID), and returns them: none when
// no actor was reached.
func (pc *phaseChains) observed(rd readers, nodes []resource.PointerKey, acts []string) []resource.PointerKey {
	actor, from, best := "", source{}, -1
	for _, a := range rd.actors {
		if i := slices.IndexFunc(pc.roots, func(r resource.PointerKey) bool { return rd.reads(a, r) }); i >= 0 && best != 0 {
			actor, from, best = a, source{p: pc.roots[i], root: true}, 0
		}
		for _, n := range nodes {
			if d, ok := pc.depth[n]; ok && pc.first[n].controller == a && (best < 0 || d-1 < best) {
				actor, from, best = a, pc.parent[n], d-1
			}
		}
	}
	if best < 0 {
		return nil
	}
	var level []resource.PointerKey
	for _, n := range nodes {
		if !pc.reached(n) && slices.Contains(rd.observers, pc.first[n].controller) {
			pc.parent[n], pc.depth[n] = from, best+2
			pc.world[n] = actor + " " + strings.Join(acts, "; ")
			level = append(level, n)
		}
	}
	return level
}

// causedBy reports whether the change of m can have caused n's first
// write in the phase.
func (pc *phaseChains) causedBy(rd readers, n, m resource.PointerKey) bool {
	w := pc.first[n]
	if rd.queued[w.controller] && !w.hook {
		return !w.cause.IsZero() && refKey(w.cause) == m
	}
	return m != n && rd.reads(w.controller, m)
}

// of returns the chain of p, a resource written in the phase, from a
// root on ("LinkSpecs(config/eth0) (the change)"): each link a resource
// and its first write in the phase, and before an observer's write the
// world actions it follows ("LinkApplyController kernel: set the MTU of
// eth0 to 1400"). A write neither the phase's roots nor its world actions
// explain starts its chain (after the change a QController's reconcile
// was for, when it has one).
func (pc *phaseChains) of(p resource.PointerKey) []string {
	var steps []string
	for cur := p; ; {
		w := pc.first[cur]
		steps = append(steps, w.controller+" "+w.op+" "+cur.String())
		if acts, ok := pc.world[cur]; ok {
			steps = append(steps, acts)
		}
		src, ok := pc.parent[cur]
		switch {
		case !ok:
			if o, ok := pc.origin[cur]; ok {
				steps = append(steps, o.String())
			}
		case src.root:
			steps = append(steps, src.p.String()+" "+pc.label)
		default:
			cur = src.p
			continue
		}
		slices.Reverse(steps)
		return steps
	}
}
