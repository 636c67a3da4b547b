// Package netres declares the resources of the demo network agent: the
// user's intent ([LinkSpec]), what the simulated kernel reports
// ([KernelLink]), the configured link ([LinkStatus]) and what the agent
// derives from them ([AddressSpec], [RouteSpec], [ResolverConfig]).
//
// Every type is a [typed.Resource] in [Namespace], but for LinkSpec, the
// user's intent, in [ConfigNamespace]: the agent's configuration, which a
// daemon may keep on disk (encrypted) while it rebuilds everything else
// in memory at every start. Each spec compares itself
// (an Equal method) and copies itself (a DeepCopy method), so the state and
// the runtime never fall back to reflection for it. The pure functions in
// plan.go compute derived specs from intent; the controllers and the dry-run
// of an intent file share them, so a dry-run shows exactly what the
// controllers write.
//
// [typed.Resource]: github.com/resgraph/resgraph/pkg/resource/typed.Resource
package netres

import "github.com/resgraph/resgraph/pkg/resource"

// Namespace is the namespace of every demo resource but LinkSpec.
const Namespace resource.Namespace = "network"

// ConfigNamespace is the namespace of LinkSpec, the configuration.
const ConfigNamespace resource.Namespace = "config"

// NamespaceOf returns the namespace of the demo resources of type typ.
func NamespaceOf(typ resource.Type) resource.Namespace {
	if typ == LinkSpecType {
		return ConfigNamespace
	}
	return Namespace
}

// LinkLabel is the label that carries the link name on AddressSpec and
// RouteSpec resources, so that they can be listed per link.
const LinkLabel = "net.resgraph.dev/link"

// AddressLabel is the label that carries, on a RouteSpec, the ID of the
// AddressSpec the route goes through (its source address).
const AddressLabel = "net.resgraph.dev/address"

// DisplayName returns the short name of a demo resource type ("LinkSpec"
// for LinkSpecType), or typ itself for a type this package does not declare.
func DisplayName(typ resource.Type) string {
	switch typ {
	case LinkSpecType:
		return "LinkSpec"
	case LinkStatusType:
		return "LinkStatus"
	case KernelLinkType:
		return "KernelLink"
	case AddressSpecType:
		return "AddressSpec"
	case RouteSpecType:
		return "RouteSpec"
	case ResolverConfigType:
		return "ResolverConfig"
	default:
		return typ
	}
}

// Kinds returns the kinds of every demo resource type, in pipeline order.
func Kinds() []resource.Kind {
	return []resource.Kind{
		resource.NewKind(ConfigNamespace, LinkSpecType),
		resource.NewKind(Namespace, KernelLinkType),
		resource.NewKind(Namespace, LinkStatusType),
		resource.NewKind(Namespace, AddressSpecType),
		resource.NewKind(Namespace, RouteSpecType),
		resource.NewKind(Namespace, ResolverConfigType),
	}
}

// Describe formats a demo resource for a log line: its short type name, its
// namespace and ID, e.g. "AddressSpec(network/eth0/10.0.0.2-24)".
func Describe(p resource.Pointer) string {
	return DisplayName(p.Type()) + "(" + p.Namespace() + "/" + p.ID() + ")"
}
