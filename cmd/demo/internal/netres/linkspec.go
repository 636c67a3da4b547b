package netres

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// LinkSpecType is the type of [LinkSpec].
const LinkSpecType resource.Type = "LinkSpecs.net.resgraph.dev"

// LinkSpec is the user's intent for one link; its ID is the link name. Users
// (the intent file) write it; no controller does.
type LinkSpec = typed.Resource[LinkSpecSpec, LinkSpecDef]

// LinkSpecDef defines [LinkSpec].
type LinkSpecDef struct{}

// Definition implements typed.DefinitionProvider.
func (LinkSpecDef) Definition() typed.Definition {
	return typed.Definition{Type: LinkSpecType, DefaultNamespace: ConfigNamespace}
}

// NewLinkSpec returns an empty LinkSpec for the link name.
func NewLinkSpec(name string) *LinkSpec {
	return typed.New[LinkSpecSpec, LinkSpecDef](resource.NewMetadata(ConfigNamespace, LinkSpecType, name, resource.VersionUndefined), LinkSpecSpec{})
}

// LinkSpecSpec is what the user wants for a link.
type LinkSpecSpec struct {
	// Gateway is the default gateway reached through this link; the zero
	// Addr means none. It is on-link: inside one of Addresses.
	Gateway netip.Addr
	// Addresses are the addresses to configure, with their prefix length.
	Addresses []netip.Prefix
	// Routes are the static routes through this link.
	Routes []RouteIntent
	// DNSServers are the resolvers this link's network provides.
	DNSServers []netip.Addr
	// MTU is the link MTU.
	MTU int
}

// RouteIntent is one static route of a [LinkSpecSpec].
type RouteIntent struct {
	Destination netip.Prefix
	Gateway     netip.Addr
	Metric      uint32
}

// DeepCopy returns a copy sharing no slice with s.
func (s LinkSpecSpec) DeepCopy() LinkSpecSpec {
	c := s
	c.Addresses = slices.Clone(s.Addresses)
	c.Routes = slices.Clone(s.Routes)
	c.DNSServers = slices.Clone(s.DNSServers)
	return c
}

// Equal reports whether o is a LinkSpecSpec equal to s.
func (s LinkSpecSpec) Equal(o any) bool {
	x, ok := o.(LinkSpecSpec)
	return ok && s.MTU == x.MTU && s.Gateway == x.Gateway &&
		slices.Equal(s.Addresses, x.Addresses) && slices.Equal(s.Routes, x.Routes) &&
		slices.Equal(s.DNSServers, x.DNSServers)
}

// String summarizes the spec for a log line.
func (s LinkSpecSpec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mtu=%d addresses=%v", s.MTU, s.Addresses)
	if s.Gateway.IsValid() {
		fmt.Fprintf(&b, " gateway=%s", s.Gateway)
	}
	if len(s.Routes) > 0 {
		fmt.Fprintf(&b, " routes=%d", len(s.Routes))
	}
	if len(s.DNSServers) > 0 {
		fmt.Fprintf(&b, " dns=%v", s.DNSServers)
	}
	return b.String()
}
