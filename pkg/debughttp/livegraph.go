package debughttp

import (
	"cmp"
	"maps"
	"slices"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
)

func controllerNodeID(name string) string { return "controller:" + name }

func resourceNodeID(ns, typ string) string { return "resource:" + ns + "/" + typ }

// key is the edge's key in liveCounters.
func (e *LiveEdge) key() string { return edgeKey(e.Controller, e.EdgeType, e.ns, e.typ, e.ID) }

// buildLiveGraph returns the nodes and edges of the live graph of g with
// the counts of m: a node per controller and per resource kind (namespace
// and type). An output edge that names no namespace is drawn to the
// namespaces the controller was seen writing, or those its destroy-ready
// inputs name (they are its own outputs), or else — inferred — those
// where other controllers read the type, except where it reads the type
// itself (a controller that reads T in one namespace and writes T writes
// another one: a merge).
func buildLiveGraph(g *controller.DependencyGraph, m observe.Metrics) ([]LiveNode, []LiveEdge) {
	var deps []controller.DependencyEdge
	if g != nil {
		deps = g.Edges
	}
	b := newLiveBuilder(m, deps)
	for _, e := range deps {
		if e.EdgeType.IsOutput() {
			b.addOutput(e)
		} else {
			b.addInput(e)
		}
	}
	return append(b.controllerNodes(m, deps), b.resourceNodes(m.Kinds)...), b.edges
}

// liveBuilder builds the live graph: what it knows of the controllers
// (statuses, readers, own outputs) and what it has built so far.
type liveBuilder struct {
	statuses map[string]*observe.ControllerStatus
	// counting is set when the metrics count edges.
	counting bool
	// readers[type][namespace] are the controllers with a (not
	// destroy-ready) input of the kind; ownNS[controller][type] are the
	// namespaces of its destroy-ready inputs: its own outputs.
	readers, ownNS map[string]map[string][]string
	resources      map[string]*LiveNode
	noWriter       map[string]bool
	edges          []LiveEdge
}

func newLiveBuilder(m observe.Metrics, deps []controller.DependencyEdge) *liveBuilder {
	b := &liveBuilder{
		statuses: map[string]*observe.ControllerStatus{}, readers: map[string]map[string][]string{},
		ownNS: map[string]map[string][]string{}, resources: map[string]*LiveNode{}, noWriter: map[string]bool{},
		edges: []LiveEdge{},
	}
	for i := range m.Controllers {
		s := &m.Controllers[i]
		b.statuses[s.Name] = s
		b.counting = b.counting || s.Metrics.Edges != nil
	}
	for _, e := range deps {
		switch {
		case e.EdgeType.IsOutput():
		case isDestroyReady(e.EdgeType):
			addTo(b.ownNS, e.ControllerName, e.ResourceType, e.ResourceNamespace)
		default:
			addTo(b.readers, e.ResourceType, e.ResourceNamespace, e.ControllerName)
		}
	}
	return b
}

// resource returns the ID of the node of a kind, adding the node.
func (b *liveBuilder) resource(ns, typ string) string {
	id := resourceNodeID(ns, typ)
	if b.resources[id] == nil {
		b.resources[id] = &LiveNode{ID: id, Kind: LiveNodeResource, Name: typ, Namespace: ns}
	}
	return id
}

// count is an edge's count: nil when the controller is unknown or the
// metrics do not count edges.
func (b *liveBuilder) count(ctrl string, edgeType, ns, typ, id string) *uint64 {
	s := b.statuses[ctrl]
	if s == nil {
		return nil
	}
	for _, c := range s.Metrics.Edges {
		if c.EdgeType == edgeType && c.Namespace == ns && c.Type == typ && c.ID == id {
			n := c.Count
			return &n
		}
	}
	if b.counting {
		var zero uint64
		return &zero
	}
	return nil
}

// addInput draws an input edge: from the kind to the controller.
func (b *liveBuilder) addInput(e controller.DependencyEdge) {
	ctrl, typ, et := e.ControllerName, e.ResourceType, e.EdgeType.String()
	if e.NoWriter {
		b.noWriter[b.resource(e.ResourceNamespace, typ)] = true
	}
	b.edges = append(b.edges, LiveEdge{
		From: b.resource(e.ResourceNamespace, typ), To: controllerNodeID(ctrl), Controller: ctrl,
		EdgeType: et, ID: e.ResourceID, Count: b.count(ctrl, et, e.ResourceNamespace, typ, e.ResourceID),
		ns: e.ResourceNamespace, typ: typ,
	})
}

// addOutput draws an output edge to each namespace the controller writes
// the type in (see buildLiveGraph).
func (b *liveBuilder) addOutput(e controller.DependencyEdge) {
	ctrl, typ, et := e.ControllerName, e.ResourceType, e.EdgeType.String()
	namespaces, inferred := b.outputNamespaces(e)
	for _, ns := range namespaces {
		b.edges = append(b.edges, LiveEdge{
			From: controllerNodeID(ctrl), To: b.resource(ns, typ), Controller: ctrl, EdgeType: et,
			Count: b.count(ctrl, et, ns, typ, ""), Inferred: inferred,
			ns: ns, typ: typ,
		})
	}
}

// outputNamespaces returns the namespaces of an output edge, sorted, and
// whether they are inferred from the readers of its type.
func (b *liveBuilder) outputNamespaces(e controller.DependencyEdge) ([]string, bool) {
	ctrl, typ, et := e.ControllerName, e.ResourceType, e.EdgeType.String()
	var namespaces []string
	if e.ResourceNamespace != "" {
		namespaces = append(namespaces, e.ResourceNamespace) // declared
	}
	if s := b.statuses[ctrl]; s != nil {
		for _, c := range s.Metrics.Edges {
			if c.EdgeType == et && c.Type == typ {
				namespaces = append(namespaces, c.Namespace)
			}
		}
	}
	namespaces = append(namespaces, b.ownNS[ctrl][typ]...)
	inferred := len(namespaces) == 0
	if inferred {
		for ns, by := range b.readers[typ] {
			if !slices.Contains(by, ctrl) {
				namespaces = append(namespaces, ns)
			}
		}
		if len(namespaces) == 0 {
			namespaces = []string{""}
		}
	}
	slices.Sort(namespaces)
	return slices.Compact(namespaces), inferred
}

// controllerNodes returns a node per controller (of the metrics or of the
// graph), sorted by name, marked with its leadership and hot loop.
func (b *liveBuilder) controllerNodes(m observe.Metrics, deps []controller.DependencyEdge) []LiveNode {
	names := map[string]bool{}
	for _, s := range m.Controllers {
		names[s.Name] = true
	}
	for _, e := range deps {
		names[e.ControllerName] = true
	}
	nodes := make([]LiveNode, 0, len(names)+len(b.resources))
	for _, name := range slices.Sorted(maps.Keys(names)) {
		n := LiveNode{ID: controllerNodeID(name), Kind: LiveNodeController, Name: name}
		if s := b.statuses[name]; s != nil && s.Leadership != nil {
			class := MarkStandby
			if s.Leadership.Role == observe.RoleLeader {
				class = MarkLeader
			}
			n.Marks = append(n.Marks, LiveMark{Text: s.Leadership.Role.String(), Class: class, Title: s.Leadership.String()})
		}
		if s := b.statuses[name]; s != nil && s.HotLoop != "" {
			n.Marks = append(n.Marks, LiveMark{Text: "hot loop", Class: MarkHotLoop, Title: s.HotLoop})
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// resourceNodes returns the kinds' nodes, sorted by namespace and type,
// with the changes routed of each and the mark of a kind no controller
// writes.
func (b *liveBuilder) resourceNodes(kinds []observe.KindMetrics) []LiveNode {
	routed := map[string]uint64{}
	for _, k := range kinds {
		routed[resourceNodeID(k.Namespace, k.Type)] = k.EventsRouted
	}
	res := make([]LiveNode, 0, len(b.resources))
	for id, n := range b.resources {
		if c, ok := routed[id]; ok {
			n.Changes = &c
		}
		if b.noWriter[id] {
			n.Marks = append(n.Marks, LiveMark{Text: "no writer", Class: MarkNoWriter,
				Title: "no controller writes this kind; only outside writers wake its readers"})
		}
		res = append(res, *n)
	}
	slices.SortFunc(res, func(a, b LiveNode) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return res
}

func isDestroyReady(t controller.DependencyEdgeType) bool {
	return t == controller.EdgeInputDestroyReady || t == controller.EdgeInputQMappedDestroyReady
}

// addTo appends v to m[a][b].
func addTo(m map[string]map[string][]string, a, b, v string) {
	if m[a] == nil {
		m[a] = map[string][]string{}
	}
	m[a][b] = append(m[a][b], v)
}
