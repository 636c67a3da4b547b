package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"

	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// changeRE matches a change-log line: verb, short type, ID, and the rest.
var changeRE = regexp.MustCompile(`state (created|updated|destroyed) +([A-Za-z]+)\((?:network|config)/([^)]*)\)(.*)$`)

// checkCommitOrder replays a change log (which is in commit order) and
// returns every violation of the ordering rules the finalizers enforce:
// a dependent is created only while its parent is held by the cleanup
// controller, and a parent is destroyed only after its dependents.
func checkCommitOrder(log string) []string {
	var (
		bad         []string
		heldStatus  = map[string]bool{}   // link -> LinkStatus held by LinkStatusCleanupController
		heldAddr    = map[string]bool{}   // address ID -> held by AddressCleanupController
		statuses    = map[string]bool{}   // link -> LinkStatus exists
		addrs       = map[string]string{} // address ID -> link
		routeVia    = map[string]string{} // route ID -> address ID
		routeSrcRE  = regexp.MustCompile(` dev (\S+) src (\S+) `)
		finalizerRE = regexp.MustCompile(`finalizers=\[([^\]]*)\]`)
	)
	for i, line := range strings.Split(log, "\n") {
		m := changeRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		verb, kind, id, rest := m[1], m[2], m[3], m[4]
		fail := func(format string, args ...any) {
			bad = append(bad, fmt.Sprintf("line %d (%s %s %s): %s", i+1, verb, kind, id, fmt.Sprintf(format, args...)))
		}
		fins, finsChanged := "", false
		if f := finalizerRE.FindStringSubmatch(rest); f != nil {
			fins, finsChanged = f[1], true
		}
		switch kind {
		case "LinkStatus":
			switch verb {
			case "created":
				statuses[id], heldStatus[id] = true, false
			case "updated":
				if finsChanged {
					heldStatus[id] = strings.Contains(fins, controllers.LinkStatusCleanupControllerName)
				}
			case "destroyed":
				for a, link := range addrs {
					if link == id {
						fail("address %s still exists", a)
					}
				}
				delete(statuses, id)
				delete(heldStatus, id)
			}
		case "AddressSpec":
			link := id[:strings.Index(id, "/")]
			switch verb {
			case "created":
				if !heldStatus[link] {
					fail("LinkStatus %s is not held", link)
				}
				addrs[id], heldAddr[id] = link, false
			case "updated":
				if finsChanged {
					heldAddr[id] = strings.Contains(fins, controllers.AddressCleanupControllerName)
				}
			case "destroyed":
				for r, a := range routeVia {
					if a == id {
						fail("route %s still goes through it", r)
					}
				}
				delete(addrs, id)
				delete(heldAddr, id)
			}
		case "RouteSpec":
			switch verb {
			case "created":
				src := routeSrcRE.FindStringSubmatch(rest)
				if src == nil {
					fail("no source in %q", rest)
					continue
				}
				via := ""
				for a := range addrs {
					if strings.HasPrefix(a, src[1]+"/"+src[2]+"-") {
						via = a
					}
				}
				switch {
				case via == "":
					fail("source address %s on %s does not exist", src[2], src[1])
				case !heldAddr[via]:
					fail("address %s is not held", via)
				}
				routeVia[id] = via
			case "destroyed":
				delete(routeVia, id)
			}
		case "LinkSpec":
			if verb == "destroyed" && statuses[id] {
				fail("LinkStatus %s still exists", id)
			}
		}
	}
	return bad
}

func TestCommitOrderObeysTheFinalizers(t *testing.T) {
	d, out := startDaemon(t, sampleConfig(t))
	waitConverged(t, d)

	// A flap cycle on every link, then a deletion.
	for _, link := range convergedLinks {
		require.True(t, d.kernel.SetCarrier(link, false))
		eventually(t, d, link+" addresses gone", func() (bool, string) {
			s := takeSnapshot(t, d.state)
			for id, a := range s.addresses {
				if a.TypedSpec().Link == link {
					return false, id
				}
			}
			return true, ""
		})
		require.True(t, d.kernel.SetCarrier(link, true))
		waitConverged(t, d)
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	require.NoError(t, d.state.TeardownAndDestroy(ctx, resource.NewPointer(netres.ConfigNamespace, netres.LinkSpecType, "eth0")))

	log := out.String()
	require.NotEmpty(t, linesWith(log, "destroyed", "LinkSpec(config/eth0)"))
	require.Empty(t, checkCommitOrder(log))
}

func TestCommitOrderCheckerCatchesViolations(t *testing.T) {
	// The checker itself, on hand-written logs that break each rule.
	line := func(s string) string { return "10:00:00.000 INFO state " + s + "\n" }
	tests := map[string]struct{ log, want string }{
		"address before its status is held": {
			line("created    LinkStatus(network/eth0) v1: up") +
				line("created    AddressSpec(network/eth0/10.0.0.2-24) v1: 10.0.0.2/24 dev eth0"),
			"LinkStatus eth0 is not held",
		},
		"route through an address not held": {
			line("created    LinkStatus(network/eth0) v1: up") +
				line("updated    LinkStatus(network/eth0) v2: finalizers=[LinkStatusCleanupController]") +
				line("created    AddressSpec(network/eth0/10.0.0.2-24) v1: 10.0.0.2/24 dev eth0") +
				line("created    RouteSpec(network/eth0/0.0.0.0-0) v1: 0.0.0.0/0 via 10.0.0.1 dev eth0 src 10.0.0.2 metric 1024 (gateway)"),
			"address eth0/10.0.0.2-24 is not held",
		},
		"address destroyed before its route": {
			line("created    LinkStatus(network/eth0) v1: up") +
				line("updated    LinkStatus(network/eth0) v2: finalizers=[LinkStatusCleanupController]") +
				line("created    AddressSpec(network/eth0/10.0.0.2-24) v1: 10.0.0.2/24 dev eth0") +
				line("updated    AddressSpec(network/eth0/10.0.0.2-24) v2: finalizers=[AddressCleanupController]") +
				line("created    RouteSpec(network/eth0/0.0.0.0-0) v1: 0.0.0.0/0 via 10.0.0.1 dev eth0 src 10.0.0.2 metric 1024 (gateway)") +
				line("destroyed  AddressSpec(network/eth0/10.0.0.2-24)"),
			"route eth0/0.0.0.0-0 still goes through it",
		},
		"status destroyed before its address": {
			line("created    LinkStatus(network/eth0) v1: up") +
				line("updated    LinkStatus(network/eth0) v2: finalizers=[LinkStatusCleanupController]") +
				line("created    AddressSpec(network/eth0/10.0.0.2-24) v1: 10.0.0.2/24 dev eth0") +
				line("destroyed  LinkStatus(network/eth0)"),
			"address eth0/10.0.0.2-24 still exists",
		},
		"spec destroyed before its status": {
			line("created    LinkStatus(network/eth0) v1: up") + line("destroyed  LinkSpec(config/eth0)"),
			"LinkStatus eth0 still exists",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			bad := checkCommitOrder(tt.log)
			require.Len(t, bad, 1, "%v", bad)
			require.Contains(t, bad[0], tt.want)
		})
	}
}
