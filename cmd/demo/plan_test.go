package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/plan"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"

	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// TestPlan_TheRealOutcomeIsThePlan: a change planned against the running
// agent's live state (a link deleted, another one's MTU changed, a new
// one), then made for real, leads the agent to the state the plan said,
// resources for resources (versions and times aside); and the live state
// did not change while the plan ran.
func TestPlan_TheRealOutcomeIsThePlan(t *testing.T) {
	in, err := loadIntent("")
	require.NoError(t, err)
	d, _ := startDaemon(t, config{Intent: in, DeleteLink: ""})
	ctx := context.Background()
	settle(t, d)
	before := liveState(t, d.state)

	wlan := linkSpecOf(t, d.state, "wlan0")
	wlan.TypedSpec().MTU = 1400
	eth2 := netres.NewLinkSpec("eth2")
	eth2.TypedSpec().MTU = 1500
	eth2.TypedSpec().Addresses = []netip.Prefix{netip.MustParsePrefix("10.9.0.2/24")}
	eth2.TypedSpec().Gateway = netip.MustParseAddr("10.9.0.1")
	change := plan.Change{
		Set:    []resource.Resource{wlan, eth2},
		Remove: []resource.Pointer{resource.NewPointer(netres.ConfigNamespace, netres.LinkSpecType, "eth1")},
	}
	p, err := plan.Make(ctx, d.state, controllers.PlanDaemon(), change)
	require.NoError(t, err)
	require.True(t, p.Converged, p.Why)
	require.Empty(t, p.Drift, "the agent was at its fixed point")
	require.NoError(t, sameIgnoringVersions(before, liveState(t, d.state)), "PL1: the plan wrote nothing live")
	var text bytes.Buffer
	require.NoError(t, p.WriteText(&text))
	t.Logf("the plan:\n%s", text.String())
	assert.Contains(t, p.World, "kernel: delete link eth1")
	assert.Contains(t, p.World, "kernel: create link eth2 (MTU 1500)")
	assert.Contains(t, text.String(), "  ~ KernelLinks.net.resgraph.dev(network/wlan0) (by KernelLinkObserver)\n"+
		"      spec.MTU: 1500 → 1400\n"+
		"      because: LinkSpecs.net.resgraph.dev(config/wlan0) (the change) → LinkApplyController kernel: set the MTU of wlan0 to 1400 → "+
		"KernelLinkObserver modify KernelLinks.net.resgraph.dev(network/wlan0)\n", "PL5: the observer's write follows the world action")
	// PL3 and PL5: each KernelLink the kernel's observer writes is in its
	// own resource's stretch (the plan waited for the observer), its
	// cleanup's destroy included.
	assert.Contains(t, text.String(), "      because: LinkSpecs.net.resgraph.dev(config/eth2) (the change) → LinkApplyController kernel: create link eth2 (MTU 1500) → "+
		"KernelLinkObserver modify KernelLinks.net.resgraph.dev(network/eth2)\n")
	assert.Contains(t, text.String(), "      because: LinkSpecs.net.resgraph.dev(config/eth1) (the change) → LinkApplyController kernel: delete link eth1 → "+
		"KernelLinkObserver teardown KernelLinks.net.resgraph.dev(network/eth1)\n")

	require.NoError(t, d.state.Update(ctx, wlan.DeepCopy(), state.WithUpdateOwner("")))
	require.NoError(t, d.state.Create(ctx, eth2.DeepCopy()))
	require.NoError(t, d.state.TeardownAndDestroy(ctx, change.Remove[0]))
	settle(t, d)
	require.NoError(t, sameIgnoringVersions(p.Final, liveState(t, d.state)), "the real outcome is the plan's")
}

// TestPlan_ApplyPlanPrintsTheDeletedLink: `demo apply --plan` of an
// intent without eth1 says eth1's resources go, in order, and the kernel
// link with them, each with its chain (those CleanupOutputs destroys
// too).
func TestPlan_ApplyPlanPrintsTheDeletedLink(t *testing.T) {
	file := filepath.Join(t.TempDir(), "next.json")
	require.NoError(t, os.WriteFile(file, []byte(withoutEth1), 0o600))
	var out bytes.Buffer
	require.NoError(t, planCmd(context.Background(), &out, file, ""))
	for _, want := range []string{
		"- LinkSpecs.net.resgraph.dev(config/eth1) (proposed)",
		"- LinkStatuses.net.resgraph.dev(network/eth1) (by LinkApplyController",
		"- RouteSpecs.net.resgraph.dev(network/eth1/192.168.60.0-24) (by StaticRouteController)",
		"spec.Servers: - 192.168.50.53",
		"kernel: delete link eth1",
		// PL5: a CleanupOutputs destroy has its chain, through the
		// kernel's action for the observer's.
		"- KernelLinks.net.resgraph.dev(network/eth1) (by KernelLinkObserver)\n" +
			"      because: LinkSpecs.net.resgraph.dev(config/eth1) (the change) → LinkApplyController kernel: delete link eth1 → " +
			"KernelLinkObserver teardown KernelLinks.net.resgraph.dev(network/eth1)\n",
		"- RouteSpecs.net.resgraph.dev(network/eth1/10.200.0.0-16) (by StaticRouteController)\n" +
			"      because: LinkSpecs.net.resgraph.dev(config/eth1) (the change) → StaticRouteController teardown RouteSpecs.net.resgraph.dev(network/eth1/10.200.0.0-16)\n",
		"Plan: 0 to create, 1 to update, 6 to destroy, 1 world action.",
		"The daemon reaches its fixed point.",
	} {
		assert.Contains(t, out.String(), want)
	}
}

// TestPlan_ThePlanIsTheSameOnEveryRun: `demo apply --plan` of the same
// intent, run many times, prints the same plan byte for byte (rule PL5:
// the causal chains do not depend on which changes a controller's pass
// coalesced, which differs between runs, nor on when the kernel woke its
// observer): an intent that deletes eth1, and one that changes wlan0's
// MTU (the KernelLink's chain goes through the kernel's action).
func TestPlan_ThePlanIsTheSameOnEveryRun(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join("testdata", "intent.json"))
	require.NoError(t, err)
	wlan0MTU1400 := strings.Replace(string(sample), `"name": "wlan0",`, `"name": "wlan0", "mtu": 1400,`, 1)
	require.NotEqual(t, string(sample), wlan0MTU1400)
	for _, c := range []struct {
		intent string
		runs   int
		want   string
	}{
		{withoutEth1, 12, "because:"},
		{wlan0MTU1400, 6, "LinkApplyController kernel: set the MTU of wlan0 to 1400 → KernelLinkObserver modify KernelLinks.net.resgraph.dev(network/wlan0)"},
	} {
		file := filepath.Join(t.TempDir(), "next.json")
		require.NoError(t, os.WriteFile(file, []byte(c.intent), 0o600))
		var first string
		for i := range c.runs {
			var out bytes.Buffer
			require.NoError(t, planCmd(context.Background(), &out, file, ""))
			if i == 0 {
				first = out.String()
				require.Contains(t, first, c.want)
				continue
			}
			require.Equal(t, first, out.String(), "run %d of the same plan", i+1)
		}
	}
}

// withoutEth1 is the sample intent without eth1.
const withoutEth1 = `{"links": [
  {"name": "eth0", "mtu": 1500, "addresses": ["10.0.0.2/24", "fd00:0:0:1::2/64"], "gateway": "10.0.0.1", "dns": ["10.0.0.53", "fd00:0:0:1::53"]},
  {"name": "wlan0", "addresses": ["172.16.5.20/20"], "dns": ["1.1.1.1"]}
]}`

// settle waits until the agent is idle, its KernelLinks are the kernel's
// links (the kernel wakes its observer on a channel of its own, which the
// Runtime's idleness does not cover), and its state stays the same
// across two waits.
func settle(t *testing.T, d *daemon) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	var last []resource.Resource
	for {
		runtimetest.Settle(t, d.engine)
		now := liveState(t, d.state)
		if kernelMirrored(t, d) && last != nil && sameIgnoringVersions(last, now) == nil {
			return
		}
		last = now
		require.False(t, time.Now().After(deadline), "the agent never settled")
		time.Sleep(10 * time.Millisecond) // the observer's next pass is the kernel's to trigger
	}
}

// kernelMirrored reports whether the KernelLinks are the kernel's links.
func kernelMirrored(t *testing.T, d *daemon) bool {
	l, err := d.state.List(context.Background(), resource.NewKind(netres.Namespace, netres.KernelLinkType))
	require.NoError(t, err)
	links := d.kernel.Links()
	if len(links) != len(l.Items) {
		return false
	}
	for i, kl := range l.Items {
		s, k := kl.(*netres.KernelLink).TypedSpec(), links[i]
		if kl.Metadata().ID() != k.Name || s.Up != k.Up || s.MTU != k.MTU || s.Index != k.Index {
			return false
		}
	}
	return true
}

// sameIgnoringVersions compares two states resource by resource: the same
// pointers, each with the same owner, phase, finalizers, labels,
// annotations and spec (versions and times aside).
func sameIgnoringVersions(want, got []resource.Resource) error {
	w, g := map[string]resource.Resource{}, map[string]resource.Resource{}
	for _, r := range want {
		w[resource.String(r)] = r
	}
	for _, r := range got {
		g[resource.String(r)] = r
	}
	var diffs []string
	for k, x := range w {
		y, ok := g[k]
		switch {
		case !ok:
			diffs = append(diffs, "missing "+k)
		default:
			md := x.Metadata().Copy()
			md.SetVersion(y.Metadata().Version())
			if !md.Equal(*y.Metadata()) || !resource.SpecEqual(x.Spec(), y.Spec()) {
				diffs = append(diffs, fmt.Sprintf("%s: want %s %s, got %s %s", k, x.Metadata(), resource.SpecString(x), y.Metadata(), resource.SpecString(y)))
			}
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			diffs = append(diffs, "extra "+k)
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		return errors.New(strings.Join(diffs, "\n"))
	}
	return nil
}

func liveState(t *testing.T, st state.State) []resource.Resource {
	t.Helper()
	var out []resource.Resource
	for _, k := range netres.Kinds() {
		l, err := st.List(context.Background(), k)
		require.NoError(t, err)
		out = append(out, l.Items...)
	}
	return out
}

func linkSpecOf(t *testing.T, st state.State, name string) *netres.LinkSpec {
	t.Helper()
	r, err := st.Get(context.Background(), resource.NewPointer(netres.ConfigNamespace, netres.LinkSpecType, name))
	require.NoError(t, err)
	return r.(*netres.LinkSpec)
}
