package intent

import (
	"fmt"
	"io"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
	"github.com/resgraph/resgraph/pkg/resource"
)

// DryRun writes what applying the intent would create: one LinkSpec per link
// and, for each link once it is up, the resources the controllers derive
// from it (computed by the same functions the controllers use).
func (in *Intent) DryRun(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("%s: valid, %d link(s); applying it would create:\n", in.File, len(in.Links))
	var dns []netres.LinkDNS
	for _, l := range in.Links {
		ew.printf("  %-44s %s\n", netres.Describe(resource.NewPointer(netres.ConfigNamespace, netres.LinkSpecType, l.Name)), l.Spec)
		ew.printf("    once %s is up, the controllers derive:\n", l.Name)
		ew.printf("      %-42s %s\n", netres.Describe(resource.NewPointer(netres.Namespace, netres.LinkStatusType, l.Name)), "(observed from the kernel)")
		addrs := netres.PlanAddresses(l.Name, l.Spec)
		for _, a := range addrs {
			ew.printf("      %-42s %s\n", netres.Describe(resource.NewPointer(netres.Namespace, netres.AddressSpecType, netres.AddressID(l.Name, a.Address))), a)
		}
		for _, a := range addrs {
			if r, ok := netres.PlanDefaultRoute(a); ok {
				ew.printf("      %-42s %s\n", netres.Describe(resource.NewPointer(netres.Namespace, netres.RouteSpecType, netres.RouteID(l.Name, r.Destination))), r)
			}
		}
		for _, r := range netres.PlanStaticRoutes(l.Name, l.Spec, addrs) {
			ew.printf("      %-42s %s\n", netres.Describe(resource.NewPointer(netres.Namespace, netres.RouteSpecType, netres.RouteID(l.Name, r.Route.Destination))), r.Route)
		}
		dns = append(dns, netres.LinkDNS{Link: l.Name, Servers: l.Spec.DNSServers})
	}
	ew.printf("  with every link up: %-23s %s\n", netres.Describe(resource.NewPointer(netres.Namespace, netres.ResolverConfigType, netres.ResolverConfigID)), netres.PlanResolver(dns))
	ew.printf("dry run: nothing was written\n")
	return ew.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
