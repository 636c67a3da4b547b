package netres

import (
	"net/netip"
	"strings"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// AddressSpecType is the type of [AddressSpec].
const AddressSpecType resource.Type = "AddressSpecs.net.resgraph.dev"

// AddressSpec is an address to configure on a link that is up; its ID is
// [AddressID] and it carries [LinkLabel].
type AddressSpec = typed.Resource[AddressSpecSpec, AddressSpecDef]

// AddressSpecDef defines [AddressSpec].
type AddressSpecDef struct{}

// Definition implements typed.DefinitionProvider.
func (AddressSpecDef) Definition() typed.Definition {
	return typed.Definition{Type: AddressSpecType, DefaultNamespace: Namespace}
}

// NewAddressSpec returns an empty AddressSpec with the given ID.
func NewAddressSpec(id resource.ID) *AddressSpec {
	return typed.New[AddressSpecSpec, AddressSpecDef](resource.NewMetadata(Namespace, AddressSpecType, id, resource.VersionUndefined), AddressSpecSpec{})
}

// AddressID is the ID of the address addr on link: "eth0/10.0.0.2-24" (the
// prefix's "/" becomes "-").
func AddressID(link string, addr netip.Prefix) resource.ID {
	return link + "/" + strings.Replace(addr.String(), "/", "-", 1)
}

// AddressSpecSpec is one address of a link.
type AddressSpecSpec struct {
	// Address is the address with its prefix length.
	Address netip.Prefix
	// Gateway is the link's default gateway when it lies inside Address
	// (the zero Addr otherwise): the default route is derived from it.
	Gateway netip.Addr
	// Link is the link name.
	Link string
}

// String summarizes the spec for a log line.
func (s AddressSpecSpec) String() string {
	out := s.Address.String() + " dev " + s.Link
	if s.Gateway.IsValid() {
		out += " (gateway " + s.Gateway.String() + " on-link)"
	}
	return out
}
