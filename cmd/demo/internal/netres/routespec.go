package netres

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// RouteSpecType is the type of [RouteSpec].
const RouteSpecType resource.Type = "RouteSpecs.net.resgraph.dev"

// RouteSpec is a route through a link that is up; its ID is [RouteID] and it
// carries [LinkLabel]. Two controllers write RouteSpecs (a shared output):
// static routes from the intent and default routes from gateways.
type RouteSpec = typed.Resource[RouteSpecSpec, RouteSpecDef]

// RouteSpecDef defines [RouteSpec].
type RouteSpecDef struct{}

// Definition implements typed.DefinitionProvider.
func (RouteSpecDef) Definition() typed.Definition {
	return typed.Definition{Type: RouteSpecType, DefaultNamespace: Namespace}
}

// NewRouteSpec returns an empty RouteSpec with the given ID.
func NewRouteSpec(id resource.ID) *RouteSpec {
	return typed.New[RouteSpecSpec, RouteSpecDef](resource.NewMetadata(Namespace, RouteSpecType, id, resource.VersionUndefined), RouteSpecSpec{})
}

// RouteID is the ID of the route to dst through link: "eth1/192.168.10.0-24".
func RouteID(link string, dst netip.Prefix) resource.ID {
	return link + "/" + strings.Replace(dst.String(), "/", "-", 1)
}

// Route origins.
const (
	OriginStatic  = "static"  // from the intent's routes
	OriginGateway = "gateway" // the default route via the link's gateway
)

// RouteSpecSpec is one route.
type RouteSpecSpec struct {
	Destination netip.Prefix
	Gateway     netip.Addr
	Source      netip.Addr // preferred source: the on-link address
	Link        string
	Origin      string // OriginStatic or OriginGateway
	Metric      uint32
}

// String summarizes the spec for a log line.
func (s RouteSpecSpec) String() string {
	return fmt.Sprintf("%s via %s dev %s src %s metric %d (%s)", s.Destination, s.Gateway, s.Link, s.Source, s.Metric, s.Origin)
}
