package netres

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/resource"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func sampleSpec() LinkSpecSpec {
	return LinkSpecSpec{
		MTU:        1500,
		Addresses:  []netip.Prefix{netip.MustParsePrefix("10.0.0.2/24"), netip.MustParsePrefix("10.0.0.3/24"), netip.MustParsePrefix("fd00::2/64")},
		Gateway:    netip.MustParseAddr("10.0.0.1"),
		Routes:     []RouteIntent{{Destination: netip.MustParsePrefix("192.168.1.0/24"), Gateway: netip.MustParseAddr("10.0.0.254"), Metric: 10}, {Destination: netip.MustParsePrefix("fd01::/48"), Gateway: netip.MustParseAddr("fd00::1"), Metric: 20}},
		DNSServers: []netip.Addr{netip.MustParseAddr("10.0.0.53")},
	}
}

func TestDeepCopySharesNothing(t *testing.T) {
	r := NewLinkSpec("eth0")
	*r.TypedSpec() = sampleSpec()
	c := r.DeepCopy().(*LinkSpec)
	require.True(t, resource.Equal(r, c))
	c.TypedSpec().Addresses[0] = netip.MustParsePrefix("1.2.3.4/8")
	c.TypedSpec().Routes[0].Metric = 99
	c.TypedSpec().DNSServers[0] = netip.MustParseAddr("9.9.9.9")
	assert.Equal(t, sampleSpec(), *r.TypedSpec())
	assert.False(t, resource.Equal(r, c))

	rc := NewResolverConfig()
	rc.TypedSpec().Servers = []netip.Addr{netip.MustParseAddr("1.1.1.1")}
	rc.TypedSpec().Links = []string{"eth0"}
	rcc := rc.DeepCopy().(*ResolverConfig)
	rcc.TypedSpec().Servers[0] = netip.MustParseAddr("8.8.8.8")
	rcc.TypedSpec().Links[0] = "x"
	assert.Equal(t, "1.1.1.1", rc.TypedSpec().Servers[0].String())
	assert.Equal(t, "eth0", rc.TypedSpec().Links[0])
}

func TestEqualComparesEveryField(t *testing.T) {
	a := sampleSpec()
	assert.True(t, a.Equal(sampleSpec()))
	for name, mut := range map[string]func(*LinkSpecSpec){
		"mtu":       func(s *LinkSpecSpec) { s.MTU = 9000 },
		"gateway":   func(s *LinkSpecSpec) { s.Gateway = netip.Addr{} },
		"addresses": func(s *LinkSpecSpec) { s.Addresses = s.Addresses[:1] },
		"routes":    func(s *LinkSpecSpec) { s.Routes[1].Metric = 1 },
		"dns":       func(s *LinkSpecSpec) { s.DNSServers = nil },
	} {
		b := sampleSpec()
		mut(&b)
		assert.False(t, a.Equal(b), name)
	}
	assert.False(t, a.Equal(42), "another type is never equal")
}

func TestIDsAndNames(t *testing.T) {
	assert.Equal(t, "eth0/10.0.0.2-24", AddressID("eth0", netip.MustParsePrefix("10.0.0.2/24")))
	assert.Equal(t, "eth0/fd00::-64", RouteID("eth0", netip.MustParsePrefix("fd00::/64")))
	assert.Equal(t, "AddressSpec(network/eth0/x)", Describe(resource.NewPointer(Namespace, AddressSpecType, "eth0/x")))
	assert.Equal(t, "Other.type", DisplayName("Other.type"))
	seen := map[string]bool{}
	for _, k := range Kinds() {
		assert.Equal(t, NamespaceOf(k.Type()), k.Namespace())
		name := DisplayName(k.Type())
		assert.NotEqual(t, k.Type(), name, "every demo kind has a short name")
		assert.False(t, seen[name])
		seen[name] = true
	}
	assert.Len(t, seen, 6)
	assert.Equal(t, LinkSpecType, (*LinkSpec)(nil).Definition().Type)
}

func TestGatewayGoesToTheFirstAddressThatContainsIt(t *testing.T) {
	addrs := PlanAddresses("eth0", sampleSpec())
	require.Len(t, addrs, 3)
	assert.Equal(t, netip.MustParseAddr("10.0.0.1"), addrs[0].Gateway)
	assert.False(t, addrs[1].Gateway.IsValid(), "only one address carries the gateway")
	assert.False(t, addrs[2].Gateway.IsValid())
	for _, a := range addrs {
		assert.Equal(t, "eth0", a.Link)
	}
}

func TestDefaultRouteOnlyFromGatewayAddress(t *testing.T) {
	addrs := PlanAddresses("eth0", sampleSpec())
	r, ok := PlanDefaultRoute(addrs[0])
	require.True(t, ok)
	assert.Equal(t, RouteSpecSpec{
		Destination: netip.MustParsePrefix("0.0.0.0/0"), Gateway: netip.MustParseAddr("10.0.0.1"),
		Source: netip.MustParseAddr("10.0.0.2"), Link: "eth0", Origin: OriginGateway, Metric: DefaultRouteMetric,
	}, r)
	_, ok = PlanDefaultRoute(addrs[1])
	assert.False(t, ok)

	v6, ok := PlanDefaultRoute(AddressSpecSpec{Link: "eth0", Address: netip.MustParsePrefix("fd00::2/64"), Gateway: netip.MustParseAddr("fd00::1")})
	require.True(t, ok)
	assert.Equal(t, "::/0", v6.Destination.String())
}

func TestStaticRoutesWaitForTheirAddress(t *testing.T) {
	spec := sampleSpec()
	all := PlanAddresses("eth0", spec)
	routes := PlanStaticRoutes("eth0", spec, all)
	require.Len(t, routes, 2)
	assert.Equal(t, AddressID("eth0", all[0].Address), routes[0].AddressID)
	assert.Equal(t, netip.MustParseAddr("10.0.0.2"), routes[0].Route.Source)
	assert.Equal(t, uint32(10), routes[0].Route.Metric)
	assert.Equal(t, OriginStatic, routes[0].Route.Origin)
	assert.Equal(t, AddressID("eth0", all[2].Address), routes[1].AddressID)

	onlyV6 := PlanStaticRoutes("eth0", spec, all[2:])
	require.Len(t, onlyV6, 1, "a route whose gateway no present address contains is left out")
	assert.Equal(t, "fd01::/48", onlyV6[0].Route.Destination.String())
	assert.Empty(t, PlanStaticRoutes("eth0", spec, nil))
}

func TestResolverMergesInLinkOrderWithoutDuplicates(t *testing.T) {
	ip := netip.MustParseAddr
	got := PlanResolver([]LinkDNS{
		{Link: "wlan0", Servers: []netip.Addr{ip("1.1.1.1"), ip("10.0.0.53")}},
		{Link: "eth1"},
		{Link: "eth0", Servers: []netip.Addr{ip("10.0.0.53"), ip("10.0.0.54")}},
	})
	assert.Equal(t, []netip.Addr{ip("10.0.0.53"), ip("10.0.0.54"), ip("1.1.1.1")}, got.Servers)
	assert.Equal(t, []string{"eth0", "wlan0"}, got.Links, "links without servers do not count")
	assert.True(t, PlanResolver(nil).Equal(ResolverConfigSpec{}))
}

// TestCodec_RegistersEveryKindWithItsAliases: every demo kind encodes and
// decodes, and its short name and its plural (the type's first part)
// resolve.
func TestCodec_RegistersEveryKindWithItsAliases(t *testing.T) {
	reg := Codec()
	for _, k := range Kinds() {
		require.True(t, reg.Registered(k.Type()), k.Type())
		plural, _, _ := strings.Cut(k.Type(), ".")
		for _, name := range []string{strings.ToLower(DisplayName(k.Type())), strings.ToLower(plural)} {
			d, err := reg.Definitions().Resolve(name)
			require.NoError(t, err)
			require.Equal(t, k.Type(), d.Type)
		}
	}
	ls := NewLinkSpec("eth0")
	ls.TypedSpec().MTU = 9000
	ls.TypedSpec().Addresses = []netip.Prefix{netip.MustParsePrefix("10.0.0.2/24")}
	b, err := reg.Encode(ls)
	require.NoError(t, err)
	back, err := reg.Decode(b)
	require.NoError(t, err)
	require.True(t, resource.Equal(ls, back))
}
