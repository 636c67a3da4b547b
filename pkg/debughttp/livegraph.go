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
	statuses := map[string]*observe.ControllerStatus{}
	counting := false
	for i := range m.Controllers {
		s := &m.Controllers[i]
		statuses[s.Name] = s
		counting = counting || s.Metrics.Edges != nil
	}
	var depEdges []controller.DependencyEdge
	if g != nil {
		depEdges = g.Edges
	}
	// readers[type][namespace] are the controllers with a (not
	// destroy-ready) input of the kind.
	readers := map[string]map[string][]string{}
	// ownNS[controller][type] are the namespaces of its destroy-ready
	// inputs: its own outputs.
	ownNS := map[string]map[string][]string{}
	for _, e := range depEdges {
		if e.EdgeType.IsOutput() {
			continue
		}
		if isDestroyReady(e.EdgeType) {
			addTo(ownNS, e.ControllerName, e.ResourceType, e.ResourceNamespace)
			continue
		}
		addTo(readers, e.ResourceType, e.ResourceNamespace, e.ControllerName)
	}

	edges := []LiveEdge{}
	resources := map[string]*LiveNode{}
	noWriter := map[string]bool{}
	resource := func(ns, typ string) string {
		id := resourceNodeID(ns, typ)
		if resources[id] == nil {
			resources[id] = &LiveNode{ID: id, Kind: LiveNodeResource, Name: typ, Namespace: ns}
		}
		return id
	}
	count := func(ctrl string, edgeType, ns, typ, id string) *uint64 {
		s := statuses[ctrl]
		if s == nil {
			return nil
		}
		for _, c := range s.Metrics.Edges {
			if c.EdgeType == edgeType && c.Namespace == ns && c.Type == typ && c.ID == id {
				n := c.Count
				return &n
			}
		}
		if counting {
			var zero uint64
			return &zero
		}
		return nil
	}
	for _, e := range depEdges {
		ctrl, typ, et := e.ControllerName, e.ResourceType, e.EdgeType.String()
		if !e.EdgeType.IsOutput() {
			if e.NoWriter {
				noWriter[resource(e.ResourceNamespace, typ)] = true
			}
			edges = append(edges, LiveEdge{
				From: resource(e.ResourceNamespace, typ), To: controllerNodeID(ctrl), Controller: ctrl,
				EdgeType: et, ID: e.ResourceID, Count: count(ctrl, et, e.ResourceNamespace, typ, e.ResourceID),
				ns: e.ResourceNamespace, typ: typ,
			})
			continue
		}
		var namespaces []string
		if e.ResourceNamespace != "" {
			namespaces = append(namespaces, e.ResourceNamespace) // declared
		}
		if s := statuses[ctrl]; s != nil {
			for _, c := range s.Metrics.Edges {
				if c.EdgeType == et && c.Type == typ {
					namespaces = append(namespaces, c.Namespace)
				}
			}
		}
		namespaces = append(namespaces, ownNS[ctrl][typ]...)
		inferred := len(namespaces) == 0
		if inferred {
			for ns, by := range readers[typ] {
				if !slices.Contains(by, ctrl) {
					namespaces = append(namespaces, ns)
				}
			}
			if len(namespaces) == 0 {
				namespaces = []string{""}
			}
		}
		slices.Sort(namespaces)
		for _, ns := range slices.Compact(namespaces) {
			to := resource(ns, typ)
			edges = append(edges, LiveEdge{
				From: controllerNodeID(ctrl), To: to, Controller: ctrl, EdgeType: et,
				Count: count(ctrl, et, ns, typ, ""), Inferred: inferred,
				ns: ns, typ: typ,
			})
		}
	}

	names := map[string]bool{}
	for _, s := range m.Controllers {
		names[s.Name] = true
	}
	for _, e := range depEdges {
		names[e.ControllerName] = true
	}
	nodes := make([]LiveNode, 0, len(names)+len(resources))
	for _, name := range slices.Sorted(maps.Keys(names)) {
		n := LiveNode{ID: controllerNodeID(name), Kind: LiveNodeController, Name: name}
		if s := statuses[name]; s != nil && s.Leadership != nil {
			class := MarkStandby
			if s.Leadership.Role == observe.RoleLeader {
				class = MarkLeader
			}
			n.Marks = append(n.Marks, LiveMark{Text: s.Leadership.Role.String(), Class: class, Title: s.Leadership.String()})
		}
		if s := statuses[name]; s != nil && s.HotLoop != "" {
			n.Marks = append(n.Marks, LiveMark{Text: "hot loop", Class: MarkHotLoop, Title: s.HotLoop})
		}
		nodes = append(nodes, n)
	}
	routed := map[string]uint64{}
	for _, k := range m.Kinds {
		routed[resourceNodeID(k.Namespace, k.Type)] = k.EventsRouted
	}
	res := make([]LiveNode, 0, len(resources))
	for id, n := range resources {
		if c, ok := routed[id]; ok {
			n.Changes = &c
		}
		if noWriter[id] {
			n.Marks = append(n.Marks, LiveMark{Text: "no writer", Class: MarkNoWriter,
				Title: "no controller writes this kind; only outside writers wake its readers"})
		}
		res = append(res, *n)
	}
	slices.SortFunc(res, func(a, b LiveNode) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return append(nodes, res...), edges
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
