package intent

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const samplePath = "../../testdata/intent.json"

func TestSampleIsValid(t *testing.T) {
	in, err := Load(samplePath)
	require.NoError(t, err)
	require.Len(t, in.Links, 3)
	assert.Equal(t, []string{"eth0", "wlan0", "eth1"}, []string{in.Links[0].Name, in.Links[1].Name, in.Links[2].Name}, "file order is kept")

	eth0 := in.Links[0].Spec
	assert.Equal(t, 1500, eth0.MTU)
	assert.Equal(t, netip.MustParseAddr("10.0.0.1"), eth0.Gateway)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.2/24"), netip.MustParsePrefix("fd00:0:0:1::2/64")}, eth0.Addresses)

	wlan0 := in.Links[1].Spec
	assert.Equal(t, DefaultMTU, wlan0.MTU, "mtu defaults")
	assert.False(t, wlan0.Gateway.IsValid())

	eth1 := in.Links[2].Spec
	require.Len(t, eth1.Routes, 2)
	assert.Equal(t, uint32(50), eth1.Routes[0].Metric)
	assert.Equal(t, uint32(DefaultRouteMetric), eth1.Routes[1].Metric, "metric defaults")
}

func TestInvalidFilesNameFileLineAndField(t *testing.T) {
	// Each row is one rule of the format; want are substrings of the error.
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"empty file", "", []string{"f.json:1:1: the file is empty"}},
		{"truncated", "{\n  \"links\": [\n", []string{"f.json:3:1: invalid JSON: unexpected end of file"}},
		{"syntax error line and column", "{\n  \"links\": [\n    {\"name\": \"eth0\",}\n  ]\n}", []string{"f.json:3:21: invalid JSON: invalid character '}'"}},
		{"trailing data", "{\"links\": []}\n{}", []string{"f.json:2:1: invalid JSON: unexpected data after the top-level value"}},
		{"not an object", `[]`, []string{"f.json:1:1: must be an object, got an array"}},
		{"links required", `{}`, []string{"f.json:1:1: links: required field is missing"}},
		{"unknown field", "{\"links\": [\n {\"name\": \"eth0\", \"mut\": 1500}]}", []string{`f.json:2:19: links[0].mut: unknown field (known fields: "addresses", "dns", "gateway", "mtu", "name", "routes")`}},
		{"duplicate field", `{"links": [{"name": "a", "name": "b"}]}`, []string{"f.json:1:26: links[0].name: duplicate field"}},
		{"wrong type", `{"links": [{"name": "eth0", "mtu": "1500"}]}`, []string{"f.json:1:36: links[0].mtu: must be an integer, got a string"}},
		{"not an integer", `{"links": [{"name": "eth0", "mtu": 1500.5}]}`, []string{"links[0].mtu: must be an integer, got 1500.5"}},
		{"null", `{"links": [{"name": null}]}`, []string{"links[0].name: must be a string, got null"}},
		{"name required", `{"links": [{"mtu": 1500}]}`, []string{"f.json:1:12: links[0].name: required field is missing"}},
		{"name empty", `{"links": [{"name": ""}]}`, []string{"links[0].name: must not be empty"}},
		{"name invalid", `{"links": [{"name": "eth/0"}]}`, []string{`links[0].name: "eth/0" is not a link name`}},
		{"name too long", `{"links": [{"name": "abcdefghijklmnop"}]}`, []string{`is not a link name`}},
		{"duplicate link", "{\"links\": [{\"name\": \"eth0\"},\n {\"name\": \"eth0\"}]}", []string{`f.json:2:11: links[1].name: duplicate link name "eth0" (first declared at links[0].name)`}},
		{"mtu range", `{"links": [{"name": "eth0", "mtu": 70000}]}`, []string{"links[0].mtu: must be between 68 and 65535, got 70000"}},
		{"mtu ipv6", `{"links": [{"name": "eth0", "mtu": 1000, "addresses": ["fd00::1/64"]}]}`, []string{"links[0].mtu: must be at least 1280 on a link with IPv6 addresses"}},
		{"bad address", `{"links": [{"name": "eth0", "addresses": ["10.0.0.300/24"]}]}`, []string{`links[0].addresses[0]: "10.0.0.300/24" is not an address with a prefix length`}},
		{"address without prefix", `{"links": [{"name": "eth0", "addresses": ["10.0.0.2"]}]}`, []string{`links[0].addresses[0]: "10.0.0.2" is not an address with a prefix length`}},
		{"not unicast", `{"links": [{"name": "eth0", "addresses": ["224.0.0.1/4"]}]}`, []string{"links[0].addresses[0]: 224.0.0.1 is not a global or private unicast address"}},
		{"duplicate address", `{"links": [{"name": "eth0", "addresses": ["10.0.0.2/24", "10.0.0.2/24"]}]}`, []string{"links[0].addresses[1]: duplicate address 10.0.0.2/24"}},
		{"address on two links", `{"links": [{"name": "a", "addresses": ["10.0.0.2/24"]}, {"name": "b", "addresses": ["10.0.0.2/16"]}]}`, []string{"links[1].addresses[0]: address 10.0.0.2 is already declared at links[0].addresses[0]"}},
		{"gateway not on-link", `{"links": [{"name": "eth0", "addresses": ["10.0.0.2/24"], "gateway": "10.9.0.1"}]}`, []string{"links[0].gateway: gateway 10.9.0.1 is not on-link"}},
		{"gateway is own address", `{"links": [{"name": "eth0", "addresses": ["10.0.0.2/24"], "gateway": "10.0.0.2"}]}`, []string{"links[0].gateway: gateway 10.0.0.2 is one of the link's own addresses"}},
		{"gateway not an IP", `{"links": [{"name": "eth0", "gateway": "router"}]}`, []string{`links[0].gateway: "router" is not an IP address`}},
		{"route destination host bits", `{"links": [{"name": "eth0", "addresses": ["10.0.0.2/24"], "routes": [{"destination": "192.168.1.1/24", "gateway": "10.0.0.1"}]}]}`, []string{"links[0].routes[0].destination: 192.168.1.1/24 has host bits set; the network is 192.168.1.0/24"}},
		{"route default", `{"links": [{"name": "eth0", "addresses": ["10.0.0.2/24"], "routes": [{"destination": "0.0.0.0/0", "gateway": "10.0.0.1"}]}]}`, []string{`links[0].routes[0].destination: a default route comes from the link's "gateway" field`}},
		{"route gateway required", `{"links": [{"name": "eth0", "routes": [{"destination": "192.168.1.0/24"}]}]}`, []string{"links[0].routes[0].gateway: required field is missing"}},
		{"route gateway off-link", `{"links": [{"name": "eth0", "addresses": ["10.0.0.2/24"], "routes": [{"destination": "192.168.1.0/24", "gateway": "10.1.0.1"}]}]}`, []string{"links[0].routes[0].gateway: gateway 10.1.0.1 is not on-link"}},
		{"route family mismatch", `{"links": [{"name": "eth0", "addresses": ["10.0.0.2/24"], "routes": [{"destination": "fd01::/64", "gateway": "10.0.0.1"}]}]}`, []string{"links[0].routes[0].gateway: gateway 10.0.0.1 and destination fd01::/64 are of different address families"}},
		{"route duplicate", `{"links": [{"name": "eth0", "addresses": ["10.0.0.2/24"], "routes": [{"destination": "192.168.1.0/24", "gateway": "10.0.0.1"}, {"destination": "192.168.1.0/24", "gateway": "10.0.0.3"}]}]}`, []string{"links[0].routes[1].destination: duplicate route to 192.168.1.0/24"}},
		{"route metric", `{"links": [{"name": "eth0", "addresses": ["10.0.0.2/24"], "routes": [{"destination": "192.168.1.0/24", "gateway": "10.0.0.1", "metric": 0}]}]}`, []string{"links[0].routes[0].metric: must be between 1 and 65535, got 0"}},
		{"dns invalid", `{"links": [{"name": "eth0", "dns": ["dns.example"]}]}`, []string{`links[0].dns[0]: "dns.example" is not an IP address`}},
		{"dns duplicate", `{"links": [{"name": "eth0", "dns": ["1.1.1.1", "1.1.1.1"]}]}`, []string{"links[0].dns[1]: duplicate DNS server 1.1.1.1"}},
		{"dns unspecified", `{"links": [{"name": "eth0", "dns": ["0.0.0.0"]}]}`, []string{"links[0].dns[0]: 0.0.0.0 cannot be a DNS server"}},
		{"every problem is listed, in file order", "{\"links\": [\n{\"name\": \"\", \"mtu\": 1},\n{\"name\": \"b\", \"dns\": [\"x\"]}]}", []string{
			"f.json:2:10: links[0].name: must not be empty\nf.json:2:21: links[0].mtu: must be between 68 and 65535, got 1\nf.json:3:23: links[1].dns[0]: \"x\" is not an IP address",
		}},
		{"columns count characters", "{\"links\": [{\"name\": \"é\", \"x\": 1}]}", []string{"f.json:1:26: links[0].x: unknown field"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Parse("f.json", []byte(tt.doc))
			require.Error(t, err)
			assert.Nil(t, in, "an invalid file yields no intent at all")
			assert.True(t, state.IsInvalidError(err), "an invalid file is an invalid-input error")
			var ie *Error
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, "f.json", ie.File)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestLoadNamesTheFileWhenUnreadable(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.json"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.json")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestDryRunShowsEverythingTheControllersDerive(t *testing.T) {
	in, err := Load(samplePath)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, in.DryRun(&buf))
	out := buf.String()
	for _, want := range []string{
		"LinkSpec(config/eth0)",
		"LinkStatus(network/eth1)",
		"AddressSpec(network/eth0/10.0.0.2-24)",
		"AddressSpec(network/eth0/fd00:0:0:1::2-64)",
		"RouteSpec(network/eth0/0.0.0.0-0)",
		"RouteSpec(network/eth1/192.168.60.0-24)",
		"RouteSpec(network/eth1/10.200.0.0-16)",
		"ResolverConfig(network/resolvers)",
		"servers=[10.0.0.53 fd00:0:0:1::53 192.168.50.53 1.1.1.1]",
		"nothing was written",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "RouteSpec(network/wlan0", "a link without gateway or routes gets no route")
}

func TestPlanMatchesIntent(t *testing.T) {
	in, err := Load(samplePath)
	require.NoError(t, err)
	addrs := netres.PlanAddresses("eth0", in.Links[0].Spec)
	require.Len(t, addrs, 2)
	assert.Equal(t, netip.MustParseAddr("10.0.0.1"), addrs[0].Gateway, "the IPv4 gateway sits on the IPv4 address")
	assert.False(t, addrs[1].Gateway.IsValid())
}
