package netres

import (
	"cmp"
	"net/netip"
	"slices"
)

// DefaultRouteMetric is the metric of a default route derived from a
// gateway.
const DefaultRouteMetric = 1024

// PlanAddresses returns the addresses to configure on link when it is up, in
// intent order. The link's gateway is attached to the first address of its
// family whose prefix contains it.
func PlanAddresses(link string, spec LinkSpecSpec) []AddressSpecSpec {
	out := make([]AddressSpecSpec, 0, len(spec.Addresses))
	gwTaken := false
	for _, p := range spec.Addresses {
		a := AddressSpecSpec{Link: link, Address: p}
		if !gwTaken && spec.Gateway.IsValid() && p.Contains(spec.Gateway) {
			a.Gateway = spec.Gateway
			gwTaken = true
		}
		out = append(out, a)
	}
	return out
}

// PlanDefaultRoute returns the default route derived from an address that
// carries the link's gateway, and false for an address that does not.
func PlanDefaultRoute(addr AddressSpecSpec) (RouteSpecSpec, bool) {
	if !addr.Gateway.IsValid() {
		return RouteSpecSpec{}, false
	}
	dst := netip.PrefixFrom(netip.IPv4Unspecified(), 0)
	if addr.Gateway.Is6() {
		dst = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
	}
	return RouteSpecSpec{
		Destination: dst,
		Gateway:     addr.Gateway,
		Source:      addr.Address.Addr(),
		Link:        addr.Link,
		Origin:      OriginGateway,
		Metric:      DefaultRouteMetric,
	}, true
}

// PlannedRoute is a static route and the ID of the address it depends on
// (its gateway is reachable through that address).
type PlannedRoute struct {
	Route     RouteSpecSpec
	AddressID string
}

// PlanStaticRoutes returns the static routes of link that can be configured
// given the addresses present on it: a route whose gateway lies in none of
// addrs is left out until such an address exists.
func PlanStaticRoutes(link string, spec LinkSpecSpec, addrs []AddressSpecSpec) []PlannedRoute {
	var out []PlannedRoute
	for _, r := range spec.Routes {
		i := slices.IndexFunc(addrs, func(a AddressSpecSpec) bool { return a.Address.Contains(r.Gateway) })
		if i < 0 {
			continue
		}
		out = append(out, PlannedRoute{
			Route: RouteSpecSpec{
				Destination: r.Destination,
				Gateway:     r.Gateway,
				Source:      addrs[i].Address.Addr(),
				Link:        link,
				Origin:      OriginStatic,
				Metric:      r.Metric,
			},
			AddressID: AddressID(link, addrs[i].Address),
		})
	}
	return out
}

// LinkDNS is the DNS servers of one link that is up.
type LinkDNS struct {
	Link    string
	Servers []netip.Addr
}

// PlanResolver merges the DNS servers of the links that are up: links in
// name order, servers in intent order, each server once (first link wins).
// Links without servers do not appear in Links.
func PlanResolver(links []LinkDNS) ResolverConfigSpec {
	sorted := slices.Clone(links)
	slices.SortFunc(sorted, func(a, b LinkDNS) int { return cmp.Compare(a.Link, b.Link) })
	var out ResolverConfigSpec
	for _, l := range sorted {
		if len(l.Servers) == 0 {
			continue
		}
		out.Links = append(out.Links, l.Link)
		for _, s := range l.Servers {
			if !slices.Contains(out.Servers, s) {
				out.Servers = append(out.Servers, s)
			}
		}
	}
	return out
}
