package hotloop

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// Finding is a hot loop: a cycle of controllers each writing because of
// the previous one's change.
type Finding struct {
	// Cycle lists the hops in order: Cycle[i].Controller writes
	// Cycle[i].Resources, whose changes make Cycle[i+1].Controller write
	// (and the last's make the first write). It starts with the controller
	// whose name sorts first.
	Cycle []Hop
	// Rate is the loop's rate: the lowest trigger rate (per second) of its
	// hops in the last window it was seen in.
	Rate float64
	// Since is the end of the window in which the loop was flagged; Last
	// the end of the last window it was seen in.
	Since, Last time.Time
	// Ended is set on the report that the loop is gone.
	Ended bool
}

// Hop is one edge of a loop: Controller writes Resources because of the
// previous hop's change, Rate times per second.
type Hop struct {
	Controller string
	// Resources are the resources it wrote because of the previous hop's
	// change, sorted (at most maxResources of them).
	Resources []trace.Ref
	// Rate is the number of such commits per second.
	Rate float64
}

// maxResources bounds the resources a hop lists.
const maxResources = 4

// Controllers returns the controllers of the loop, in cycle order.
func (f *Finding) Controllers() []string {
	out := make([]string, len(f.Cycle))
	for i, s := range f.Cycle {
		out[i] = s.Controller
	}
	return out
}

// Key identifies the loop by its controllers in cycle order (two reports
// of one loop have the same key).
func (f *Finding) Key() string { return strings.Join(f.Controllers(), " → ") }

// String describes the loop as "A writes X → B writes Y → A", naming the
// resources as type(namespace/id).
func (f Finding) String() string {
	if len(f.Cycle) == 0 {
		return ""
	}
	var b strings.Builder
	for _, s := range f.Cycle {
		names := make([]string, len(s.Resources))
		for i, r := range s.Resources {
			names[i] = r.String()
		}
		fmt.Fprintf(&b, "%s writes %s → ", s.Controller, strings.Join(names, ", "))
	}
	b.WriteString(f.Cycle[0].Controller)
	return b.String()
}

// edge is a hot trigger edge between two controllers: the reader wrote
// resources because of the writer's changes.
type edge struct {
	count     int
	resources []trace.Ref
}

// loops returns the loops of the window that ends at end: the cycles of
// the graph of hot edges.
func (d *Detector) loops(end time.Time) []Finding {
	graph := map[string]map[string]*edge{}
	for _, s := range d.hot {
		for _, c := range s.counts {
			if c.writer == 0 || int(c.n) < d.threshold || float64(c.n) <= d.cfg.MinShare*float64(s.total(c.reader)) {
				continue
			}
			writer, reader := d.names[c.writer], d.names[c.reader]
			out := graph[writer]
			if out == nil {
				out = map[string]*edge{}
				graph[writer] = out
			}
			e := out[reader]
			if e == nil {
				e = &edge{}
				out[reader] = e
			}
			e.count += int(c.n)
			e.resources = append(e.resources, d.ref(s.key))
		}
	}
	if len(graph) == 0 {
		return nil
	}
	perSecond := 1 / d.cfg.Window.Seconds()
	var found []Finding
	for _, cycle := range cycles(graph) {
		f := Finding{Last: end}
		for i, c := range cycle {
			// The edge into c: what c wrote because of the previous
			// controller's change.
			e := graph[cycle[(i+len(cycle)-1)%len(cycle)]][c]
			slices.SortFunc(e.resources, compareRefs)
			res := e.resources[:min(len(e.resources), maxResources)]
			rate := float64(e.count) * perSecond
			f.Cycle = append(f.Cycle, Hop{Controller: c, Resources: slices.Clone(res), Rate: rate})
			if i == 0 || rate < f.Rate {
				f.Rate = rate
			}
		}
		found = append(found, f)
	}
	return found
}

func compareRefs(a, b trace.Ref) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Type, b.Type), cmp.Compare(a.ID, b.ID))
}

// cycles returns the elementary cycles of graph that start at their
// smallest node, each once, sorted. Graphs of hot edges are tiny (a few
// controllers), so a depth-first search from each node is enough; the
// search is bounded by maxCycles.
func cycles(graph map[string]map[string]*edge) [][]string {
	nodes := make([]string, 0, len(graph))
	for n := range graph {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	var out [][]string
	for _, start := range nodes {
		var path []string
		onPath := map[string]bool{}
		var visit func(n string)
		visit = func(n string) {
			if len(out) >= maxCycles {
				return
			}
			path = append(path, n)
			onPath[n] = true
			next := make([]string, 0, len(graph[n]))
			for m := range graph[n] {
				next = append(next, m)
			}
			slices.Sort(next)
			for _, m := range next {
				switch {
				case m == start:
					out = append(out, slices.Clone(path))
				case m > start && !onPath[m]:
					visit(m)
				}
			}
			path = path[:len(path)-1]
			onPath[n] = false
		}
		visit(start)
	}
	return out
}

// maxCycles bounds the cycles reported per window.
const maxCycles = 16

func sortFindings(fs []Finding) {
	slices.SortFunc(fs, func(a, b Finding) int { return cmp.Compare(a.Key(), b.Key()) })
}
