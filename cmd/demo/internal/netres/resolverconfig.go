package netres

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// ResolverConfigType is the type of [ResolverConfig].
const ResolverConfigType resource.Type = "ResolverConfigs.net.resgraph.dev"

// ResolverConfigID is the ID of the one ResolverConfig.
const ResolverConfigID resource.ID = "resolvers"

// ResolverConfig is the system resolver configuration: the DNS servers of
// every link that is up. There is exactly one, with ID [ResolverConfigID].
type ResolverConfig = typed.Resource[ResolverConfigSpec, ResolverConfigDef]

// ResolverConfigDef defines [ResolverConfig].
type ResolverConfigDef struct{}

// Definition implements typed.DefinitionProvider.
func (ResolverConfigDef) Definition() typed.Definition {
	return typed.Definition{Type: ResolverConfigType, DefaultNamespace: Namespace}
}

// NewResolverConfig returns the empty ResolverConfig.
func NewResolverConfig() *ResolverConfig {
	return typed.New[ResolverConfigSpec, ResolverConfigDef](resource.NewMetadata(Namespace, ResolverConfigType, ResolverConfigID, resource.VersionUndefined), ResolverConfigSpec{})
}

// ResolverConfigSpec lists DNS servers in order of preference.
type ResolverConfigSpec struct {
	// Servers are the DNS servers, without duplicates, in link-name order
	// and, within a link, in intent order.
	Servers []netip.Addr
	// Links are the links that contributed servers, sorted.
	Links []string
}

// DeepCopy returns a copy sharing no slice with s.
func (s ResolverConfigSpec) DeepCopy() ResolverConfigSpec {
	return ResolverConfigSpec{Servers: slices.Clone(s.Servers), Links: slices.Clone(s.Links)}
}

// Equal reports whether o is a ResolverConfigSpec equal to s.
func (s ResolverConfigSpec) Equal(o any) bool {
	x, ok := o.(ResolverConfigSpec)
	return ok && slices.Equal(s.Servers, x.Servers) && slices.Equal(s.Links, x.Links)
}

// String summarizes the spec for a log line.
func (s ResolverConfigSpec) String() string {
	return fmt.Sprintf("servers=%v from=%v", s.Servers, s.Links)
}
