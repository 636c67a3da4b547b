package scenario

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"

	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// link is a link the workload writes intents for, with the addresses,
// gateway, routes and DNS servers its intents pick from.
type link struct {
	name      string
	addresses []string
	gateway   string
	routes    []netres.RouteIntent
	dns       []string
}

var links = []link{
	{name: "eth0", addresses: []string{"10.0.0.2/24", "fd00:0:0:1::2/64"}, gateway: "10.0.0.1", dns: []string{"10.0.0.53", "fd00:0:0:1::53"}},
	{name: "eth1", addresses: []string{"192.168.50.10/24"}, routes: []netres.RouteIntent{
		{Destination: netip.MustParsePrefix("192.168.60.0/24"), Gateway: netip.MustParseAddr("192.168.50.1"), Metric: 50},
		{Destination: netip.MustParsePrefix("10.200.0.0/16"), Gateway: netip.MustParseAddr("192.168.50.254")},
	}, dns: []string{"192.168.50.53", "10.0.0.53"}},
	{name: "wlan0", addresses: []string{"172.16.5.20/20"}, dns: []string{"1.1.1.1"}},
}

// linkSpec draws an intent for link id: an MTU, a subset of its
// addresses, its gateway or none, a subset of its routes and DNS servers.
func linkSpec(id resource.ID, rng *rand.Rand) resource.Resource {
	l := links[slices.IndexFunc(links, func(l link) bool { return l.name == id })]
	ls := netres.NewLinkSpec(l.name)
	s := ls.TypedSpec()
	s.MTU = []int{1500, 9000}[rng.IntN(2)]
	for _, a := range l.addresses {
		if rng.IntN(4) > 0 {
			s.Addresses = append(s.Addresses, netip.MustParsePrefix(a))
		}
	}
	if l.gateway != "" && rng.IntN(2) == 0 {
		s.Gateway = netip.MustParseAddr(l.gateway)
	}
	for _, r := range l.routes {
		if rng.IntN(2) == 0 {
			s.Routes = append(s.Routes, r)
		}
	}
	for _, d := range l.dns {
		if rng.IntN(2) == 0 {
			s.DNSServers = append(s.DNSServers, netip.MustParseAddr(d))
		}
	}
	return ls
}

// Simulation is the agent's simulation scenario: its controllers on the
// real Runtime under the simulator, over a fake kernel that refuses each
// new link once; a random workload of link intents written, rewritten and
// deleted, cables unplugged and plugged in, every fault on; after every
// step the teardown order the finalizers promise holds, and once the
// workload is done the agent converges to what the intents and the
// kernel's carriers ask for. With a Recording (the -sim.recording flag),
// the fake kernel starts with the recording's links and its carrier
// changes are the recording's.
func Simulation() sim.Scenario {
	var ids []resource.ID
	for _, l := range links {
		ids = append(ids, l.name)
	}
	return sim.Scenario{
		Name: "demo",
		// The daemon's Runtime options, and its types (for
		// -sim.recording files).
		Options: controllers.Options(),
		Codec:   netres.Codec(),
		Setup: func(w *sim.World) (sim.System, error) {
			// The world: a kernel that refuses each new link once, with
			// the links of the state the run starts from (a recording's).
			// Its change notifications reach KernelLinkObserver when the
			// schedule says.
			initial := controllers.KernelLinks(w.Initial())
			k := kernel.New(kernel.Config{FailFirst: 1, Links: initial})
			notify := w.Relay("kernel", k.Notify())
			var actions []sim.Action
			for _, l := range links {
				for _, up := range []bool{false, true} {
					actions = append(actions, sim.Action{
						Name: fmt.Sprintf("cable of %s %s", l.name, map[bool]string{false: "unplugged", true: "plugged in"}[up]),
						Do: func(context.Context) error {
							k.SetCable(l.name, up)
							return nil
						},
					})
				}
			}
			actions = append(actions, carrierActions(k, initial)...)
			return sim.System{
				Register: func(e controller.Engine) error {
					return controllers.Register(e, k, controllers.WithKernelNotify(notify), controllers.WithKernelRead(kernelRead(w, k)))
				},
				Actions: actions,
				Final:   func(v sim.View) error { return converged(v, k) },
			}, nil
		},
		Workload: sim.Generate(24, sim.Template{IDs: ids, New: linkSpec}),
		Faults:   sim.AllFaults(),
		Seeds:    20,
		Invariants: []sim.Invariant{
			{Name: "a LinkStatus goes before its LinkSpec", Check: statusHasSpec},
			{Name: "an AddressSpec goes before its LinkStatus", Check: addressHasStatus},
			{Name: "a RouteSpec goes before the AddressSpec it goes through", Check: routeHasAddress},
		},
		// The kernel numbers links in the order they are created, which
		// the schedule decides, and derives their MAC addresses from its
		// seed, which a recorded daemon's kernel does not share: the final
		// states are compared without them.
		Canonical: func(r resource.Resource) resource.Resource {
			switch r := r.(type) {
			case *netres.LinkStatus:
				c := r.DeepCopy().(*netres.LinkStatus)
				c.TypedSpec().Index, c.TypedSpec().HardwareAddr = 0, ""
				return c
			case *netres.KernelLink:
				c := r.DeepCopy().(*netres.KernelLink)
				c.TypedSpec().Index, c.TypedSpec().HardwareAddr = 0, ""
				return c
			}
			return r
		},
	}
}

// kernelRead is how KernelLinkObserver reads the kernel: in a replay that
// must match its recording, the links the recorded agent read, each where
// it read them (sim.World.Observed); else the fake kernel's own (also
// when a recorded read does not decode).
func kernelRead(w *sim.World, k *kernel.Kernel) func() []kernel.Link {
	observed := w.Observed(kernel.LinksRead, controllers.KernelLinkObserverName)
	return func() []kernel.Link {
		if b, ok := observed(); ok {
			if links, err := kernel.DecodeLinks(b); err == nil {
				return links
			}
		}
		return k.Links()
	}
}

// carrierActions are the carrier changes the agent's kernel makes on its
// own (kernel.CarrierAction: what a recording of the agent notes), for the
// links of the workload and of the starting state. The fake kernel makes
// each as a cable change, which a link created later keeps: a recorded
// carrier change of a link that a faulted run creates later than
// production did still leaves the run where production was. Only a
// recording (or a Script) names them.
func carrierActions(k *kernel.Kernel, initial []kernel.Link) []sim.Action {
	names := map[string]bool{}
	for _, l := range links {
		names[l.name] = true
	}
	for _, l := range initial {
		names[l.Name] = true
	}
	var out []sim.Action
	for _, name := range slices.Sorted(maps.Keys(names)) {
		for _, up := range []bool{false, true} {
			out = append(out, sim.Action{Name: kernel.CarrierAction(name, up), Named: true, Do: func(context.Context) error {
				k.SetCable(name, up)
				return nil
			}})
		}
	}
	return out
}

func statusHasSpec(v sim.View) error {
	for _, st := range sim.List[*netres.LinkStatus](v) {
		if _, ok := sim.Get[*netres.LinkSpec](v, st.Metadata().ID()); !ok {
			return fmt.Errorf("%s exists without its LinkSpec", resource.String(st))
		}
	}
	return nil
}

func addressHasStatus(v sim.View) error {
	for _, a := range sim.List[*netres.AddressSpec](v) {
		if _, ok := sim.Get[*netres.LinkStatus](v, a.TypedSpec().Link); !ok {
			return fmt.Errorf("%s exists without the LinkStatus of %s", resource.String(a), a.TypedSpec().Link)
		}
	}
	return nil
}

func routeHasAddress(v sim.View) error {
	addrs := sim.List[*netres.AddressSpec](v)
	for _, r := range sim.List[*netres.RouteSpec](v) {
		rs := r.TypedSpec()
		if !slices.ContainsFunc(addrs, func(a *netres.AddressSpec) bool {
			as := a.TypedSpec()
			return as.Link == rs.Link && as.Address.Addr() == rs.Source
		}) {
			return fmt.Errorf("%s exists without the address %s it goes through", resource.String(r), rs.Source)
		}
	}
	return nil
}

// converged checks the agent's converged state against its intents and
// the kernel: every intent's link configured with its MTU and carrier,
// the planned addresses and routes of exactly the links that are up, the
// resolver's servers those of the links up, nothing else.
func converged(v sim.View, k *kernel.Kernel) error {
	kernelLinks := map[string]kernel.Link{}
	for _, l := range k.Links() {
		kernelLinks[l.Name] = l
	}
	specs := sim.List[*netres.LinkSpec](v)
	wantAddrs, wantRoutes := map[resource.ID]netres.AddressSpecSpec{}, map[resource.ID]netres.RouteSpecSpec{}
	var dns []netres.LinkDNS
	for _, s := range specs {
		name := s.Metadata().ID()
		kl, ok := kernelLinks[name]
		if !ok || kl.MTU != s.TypedSpec().MTU {
			return fmt.Errorf("the kernel's link %s is %+v, its intent MTU %d", name, kl, s.TypedSpec().MTU)
		}
		delete(kernelLinks, name)
		st, ok := sim.Get[*netres.LinkStatus](v, name)
		if !ok || st.TypedSpec().Up != kl.Up || st.TypedSpec().MTU != kl.MTU {
			return fmt.Errorf("LinkStatus %s does not say the kernel's %+v", name, kl)
		}
		if !kl.Up {
			continue
		}
		planned := netres.PlanAddresses(name, *s.TypedSpec())
		for _, a := range planned {
			wantAddrs[netres.AddressID(name, a.Address)] = a
			if r, ok := netres.PlanDefaultRoute(a); ok {
				wantRoutes[netres.RouteID(name, r.Destination)] = r
			}
		}
		for _, pr := range netres.PlanStaticRoutes(name, *s.TypedSpec(), planned) {
			wantRoutes[netres.RouteID(name, pr.Route.Destination)] = pr.Route
		}
		dns = append(dns, netres.LinkDNS{Link: name, Servers: s.TypedSpec().DNSServers})
	}
	if len(kernelLinks) > 0 {
		return fmt.Errorf("the kernel has links no intent asks for: %v", kernelLinks)
	}
	if err := sameSet("AddressSpec", sim.List[*netres.AddressSpec](v), wantAddrs); err != nil {
		return err
	}
	if err := sameSet("RouteSpec", sim.List[*netres.RouteSpec](v), wantRoutes); err != nil {
		return err
	}
	if rc, ok := sim.Get[*netres.ResolverConfig](v, netres.ResolverConfigID); ok {
		if want := netres.PlanResolver(dns); !rc.TypedSpec().Equal(want) {
			return fmt.Errorf("ResolverConfig %v, want %v", rc.TypedSpec(), want)
		}
	} else if len(specs) > 0 {
		return fmt.Errorf("no ResolverConfig")
	}
	return nil
}

// sameSet checks that the resources of a kind are exactly want, by ID and
// spec.
func sameSet[R interface {
	resource.Resource
	TypedSpec() *S
}, S comparable](kind string, have []R, want map[resource.ID]S) error {
	for _, r := range have {
		id := r.Metadata().ID()
		w, ok := want[id]
		if !ok {
			return fmt.Errorf("%s %s is not wanted: %v", kind, id, *r.TypedSpec())
		}
		if *r.TypedSpec() != w {
			return fmt.Errorf("%s %s is %v, want %v", kind, id, *r.TypedSpec(), w)
		}
	}
	for id := range want {
		if !slices.ContainsFunc(have, func(r R) bool { return r.Metadata().ID() == id }) {
			return fmt.Errorf("%s %s is missing", kind, id)
		}
	}
	return nil
}
