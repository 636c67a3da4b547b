package netres

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/definition"
)

// Codec returns a codec registry of every demo resource type (their
// definitions with it: aliases for the CLI and change files), for a
// recording's file and a change file.
func Codec() *codec.Registry {
	reg := codec.NewRegistry()
	codec.MustRegister[LinkSpecSpec, LinkSpecDef](reg)
	codec.MustRegister[KernelLinkSpec, KernelLinkDef](reg)
	codec.MustRegister[LinkStatusSpec, LinkStatusDef](reg)
	codec.MustRegister[AddressSpecSpec, AddressSpecDef](reg)
	codec.MustRegister[RouteSpecSpec, RouteSpecDef](reg)
	codec.MustRegister[ResolverConfigSpec, ResolverConfigDef](reg)
	return reg
}

// aliases names a demo type's aliases: its short name, lower case, and
// its plural.
func aliases(typ resource.Type) definition.Definition {
	short := DisplayName(typ)
	lower := []rune(short)
	for i, r := range lower {
		if r >= 'A' && r <= 'Z' {
			lower[i] = r + 'a' - 'A'
		}
	}
	return definition.Definition{Aliases: []string{string(lower), string(lower) + "s"}}
}

// ResourceDefinition implements definition.Provider.
func (LinkSpecDef) ResourceDefinition() definition.Definition { return aliases(LinkSpecType) }

// ResourceDefinition implements definition.Provider.
func (KernelLinkDef) ResourceDefinition() definition.Definition { return aliases(KernelLinkType) }

// ResourceDefinition implements definition.Provider.
func (LinkStatusDef) ResourceDefinition() definition.Definition { return aliases(LinkStatusType) }

// ResourceDefinition implements definition.Provider.
func (AddressSpecDef) ResourceDefinition() definition.Definition { return aliases(AddressSpecType) }

// ResourceDefinition implements definition.Provider.
func (RouteSpecDef) ResourceDefinition() definition.Definition { return aliases(RouteSpecType) }

// ResourceDefinition implements definition.Provider.
func (ResolverConfigDef) ResourceDefinition() definition.Definition {
	return aliases(ResolverConfigType)
}
