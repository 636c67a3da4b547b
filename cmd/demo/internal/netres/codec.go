package netres

import (
	"strings"

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

// aliases names a demo type's aliases: its short name and its plural
// (the type's first part), lower case; and the columns a table of it
// prints (resgraphctl get).
func aliases(typ resource.Type, cols []definition.Column) definition.Definition {
	plural, _, _ := strings.Cut(typ, ".")
	return definition.Definition{Aliases: []string{strings.ToLower(DisplayName(typ)), strings.ToLower(plural)}, Columns: cols}
}

// ResourceDefinition implements definition.Provider.
func (LinkSpecDef) ResourceDefinition() definition.Definition {
	return aliases(LinkSpecType, columns("MTU", ".MTU", "Addresses", ".Addresses", "Gateway", ".Gateway"))
}

// ResourceDefinition implements definition.Provider.
func (KernelLinkDef) ResourceDefinition() definition.Definition {
	return aliases(KernelLinkType, columns("Up", ".Up", "MTU", ".MTU", "Index", ".Index", "MAC", ".HardwareAddr"))
}

// ResourceDefinition implements definition.Provider.
func (LinkStatusDef) ResourceDefinition() definition.Definition {
	return aliases(LinkStatusType, columns("Up", ".Up", "MTU", ".MTU", "Index", ".Index", "MAC", ".HardwareAddr"))
}

// ResourceDefinition implements definition.Provider.
func (AddressSpecDef) ResourceDefinition() definition.Definition {
	return aliases(AddressSpecType, columns("Address", ".Address", "Link", ".Link", "Gateway", ".Gateway"))
}

// ResourceDefinition implements definition.Provider.
func (RouteSpecDef) ResourceDefinition() definition.Definition {
	return aliases(RouteSpecType, columns("Destination", ".Destination", "Gateway", ".Gateway", "Link", ".Link", "Origin", ".Origin", "Metric", ".Metric"))
}

// ResourceDefinition implements definition.Provider.
func (ResolverConfigDef) ResourceDefinition() definition.Definition {
	return aliases(ResolverConfigType, columns("Servers", ".Servers", "Links", ".Links"))
}

// columns returns the columns named and pathed by pairs: name, path, ...
func columns(pairs ...string) []definition.Column {
	cs := make([]definition.Column, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		cs = append(cs, definition.Column{Name: pairs[i], Path: pairs[i+1]})
	}
	return cs
}
