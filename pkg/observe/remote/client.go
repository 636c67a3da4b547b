package remote

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/grpc"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/remote/internal/pb"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Client asks a [Server] for explanations, the dependency graph and the
// daemon's health. It is cheap: it contacts nobody until a call. Its
// errors are [*Error]s for what the server refused (rule OB2).
type Client struct {
	c pb.ObserverClient
}

// NewClient returns a client of the server on conn.
func NewClient(conn grpc.ClientConnInterface) *Client {
	return &Client{c: pb.NewObserverClient(conn)}
}

// Explain asks why the resource ptr is as it is (observe.Observer.Explain).
func (c *Client) Explain(ctx context.Context, ptr resource.Pointer) (explain.Resource, error) {
	var x explain.Resource
	if ptr == nil {
		return x, &Error{st: invalidStatus("explain: nil resource pointer")}
	}
	m, err := c.c.ExplainResource(ctx, &pb.ExplainResourceRequest{Namespace: ptr.Namespace(), Type: ptr.Type(), Id: ptr.ID()})
	if err != nil {
		return x, fromStatus(err)
	}
	return x, decodeExplanation(m, &x)
}

// ExplainController explains the controller name from its side
// (observe.Observer.ExplainController).
func (c *Client) ExplainController(ctx context.Context, name string) (explain.Controller, error) {
	var x explain.Controller
	m, err := c.c.ExplainController(ctx, &pb.ExplainControllerRequest{Name: name})
	if err != nil {
		return x, fromStatus(err)
	}
	return x, decodeExplanation(m, &x)
}

func decodeExplanation(m *pb.Explanation, x any) error {
	if err := json.Unmarshal(m.GetJson(), x); err != nil {
		return fmt.Errorf("explain: the server's answer is not an explanation: %w", err)
	}
	return nil
}

// Graph returns the served Runtime's controller/resource dependency graph.
// An edge type the client does not know (a newer server's) is an error
// naming it.
func (c *Client) Graph(ctx context.Context) (*controller.DependencyGraph, error) {
	m, err := c.c.Graph(ctx, &pb.GraphRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	g := &controller.DependencyGraph{Edges: make([]controller.DependencyEdge, 0, len(m.GetEdges()))}
	for _, e := range m.GetEdges() {
		t, ok := edgeTypes[e.GetEdgeType()]
		if !ok {
			return nil, fmt.Errorf("graph: the server sent an edge type this client does not know: %q (controller %s, type %s)", e.GetEdgeType(), e.GetController(), e.GetType())
		}
		g.Edges = append(g.Edges, controller.DependencyEdge{
			ControllerName: e.GetController(), ResourceNamespace: e.GetNamespace(), ResourceType: e.GetType(),
			ResourceID: e.GetId(), EdgeType: t, NoWriter: e.GetNoWriter(),
		})
	}
	return g, nil
}

// edgeTypes maps the names of the edge types to them.
var edgeTypes = func() map[string]controller.DependencyEdgeType {
	m := map[string]controller.DependencyEdgeType{}
	for t := controller.EdgeOutputExclusive; t <= controller.EdgeInputQMappedDestroyReady; t++ {
		m[t.String()] = t
	}
	return m
}()

// Health returns the daemon's health checks. A daemon that serves none
// answers Unimplemented.
func (c *Client) Health(ctx context.Context) ([]Check, error) {
	m, err := c.c.Health(ctx, &pb.HealthRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	cs := make([]Check, 0, len(m.GetChecks()))
	for _, k := range m.GetChecks() {
		cs = append(cs, Check{Probe: Probe(k.GetProbe()), Name: k.GetName(), OK: k.GetOk(), Message: k.GetMessage()})
	}
	return cs, nil
}
