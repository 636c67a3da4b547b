package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/debughttp"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// The sample intent converged: every link up, with these resources.
var (
	convergedLinks     = []string{"eth0", "eth1", "wlan0"}
	convergedAddresses = []string{"eth0/10.0.0.2-24", "eth0/fd00:0:0:1::2-64", "eth1/192.168.50.10-24", "wlan0/172.16.5.20-20"}
	convergedRoutes    = map[string]string{ // ID -> owner
		"eth0/0.0.0.0-0":       controllers.DefaultRouteControllerName,
		"eth1/10.200.0.0-16":   controllers.StaticRouteControllerName,
		"eth1/192.168.60.0-24": controllers.StaticRouteControllerName,
	}
	convergedServers = []string{"10.0.0.53", "fd00:0:0:1::53", "192.168.50.53", "1.1.1.1"}
)

func sampleConfig(t *testing.T) config {
	t.Helper()
	in, err := loadIntent("")
	require.NoError(t, err)
	// No flapping: carriers change only when a test says so. Two refusals
	// per link exercise the retry path.
	return config{Intent: in, Kernel: kernel.Config{FailFirst: 2, Seed: 1}}
}

// converged reports whether s is the sample intent converged, and if not,
// what it is.
func converged(s snapshot) (bool, string) {
	routes := ids(s.routes)
	want := slices.Sorted(maps.Keys(convergedRoutes))
	up := 0
	for _, st := range s.statuses {
		if st.TypedSpec().Up {
			up++
		}
	}
	ok := slices.Equal(ids(s.statuses), convergedLinks) && up == len(convergedLinks) &&
		slices.Equal(ids(s.kernel), convergedLinks) &&
		slices.Equal(ids(s.addresses), convergedAddresses) &&
		slices.Equal(routes, want) &&
		slices.Equal(s.servers(), convergedServers)
	return ok, fmt.Sprintf("statuses=%v (%d up) kernel=%v addresses=%v routes=%v servers=%v",
		ids(s.statuses), up, ids(s.kernel), ids(s.addresses), routes, s.servers())
}

func waitConverged(t *testing.T, d *daemon) {
	t.Helper()
	eventually(t, d, "sample intent converged", func() (bool, string) { return converged(takeSnapshot(t, d.state)) })
}

func TestE1_SampleIntentConverges(t *testing.T) {
	d, _ := startDaemon(t, sampleConfig(t))
	waitConverged(t, d)
	// Once the Runtime settled, every controller has seen the converged
	// state and left it as it is.
	runtimetest.Settle(t, d.engine)
	ok, why := converged(takeSnapshot(t, d.state))
	require.True(t, ok, why)

	s := takeSnapshot(t, d.state)
	for id, owner := range convergedRoutes {
		assert.Equal(t, owner, s.routes[id].Metadata().Owner(), "RouteSpec is a shared output: each controller owns its own routes")
	}
	assert.Equal(t, 9000, s.statuses["eth1"].TypedSpec().MTU, "the MTU reached the kernel")
	assert.Equal(t, "10.0.0.1", s.addresses["eth0/10.0.0.2-24"].TypedSpec().Gateway.String())
	for id, a := range s.addresses {
		link, _ := a.Metadata().Labels().Get(netres.LinkLabel)
		assert.Equal(t, a.TypedSpec().Link, link, id)
	}
	// The finalizers that order a teardown are in place.
	for _, link := range convergedLinks {
		assert.Equal(t, resource.Finalizers{controllers.LinkApplyControllerName}, *s.specs[link].Metadata().Finalizers(), link)
		assert.Equal(t, resource.Finalizers{controllers.LinkStatusCleanupControllerName}, *s.statuses[link].Metadata().Finalizers(), link)
	}
	for id, a := range s.addresses {
		assert.Equal(t, resource.Finalizers{controllers.AddressCleanupControllerName}, *a.Metadata().Finalizers(), id)
	}
	for id, r := range s.routes {
		addr, _ := r.Metadata().Labels().Get(netres.AddressLabel)
		assert.Contains(t, s.addresses, addr, "route %s names the address it goes through", id)
	}
	assert.Empty(t, s.orphans())
}

func TestE2_DeletingALinkTearsDownInOrderAndLeavesNoOrphans(t *testing.T) {
	d, out := startDaemon(t, sampleConfig(t))
	waitConverged(t, d)

	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	require.NoError(t, d.state.TeardownAndDestroy(ctx, resource.NewPointer(netres.ConfigNamespace, netres.LinkSpecType, "eth1")),
		"TeardownAndDestroy returns once every controller released the LinkSpec")

	// By then everything eth1 caused is gone, except what is derived from
	// the kernel afterwards.
	s := takeSnapshot(t, d.state)
	assert.NotContains(t, ids(s.specs), "eth1")
	assert.NotContains(t, ids(s.statuses), "eth1")
	for id, a := range s.addresses {
		assert.NotEqual(t, "eth1", a.TypedSpec().Link, id)
	}
	for id, r := range s.routes {
		assert.NotEqual(t, "eth1", r.TypedSpec().Link, id)
	}
	assert.False(t, slices.ContainsFunc(d.kernel.Links(), func(l kernel.Link) bool { return l.Name == "eth1" }), "the kernel link is deleted")

	eventually(t, d, "no orphan left", func() (bool, string) {
		s := takeSnapshot(t, d.state)
		o := s.orphans()
		if _, ok := s.kernel["eth1"]; ok {
			o = append(o, "KernelLink eth1 still observed")
		}
		if !slices.Equal(s.servers(), []string{"10.0.0.53", "fd00:0:0:1::53", "1.1.1.1"}) {
			o = append(o, fmt.Sprintf("resolver servers %v", s.servers()))
		}
		return len(o) == 0, strings.Join(o, "; ")
	})
	// The change log writes a destroy's line once the state has committed
	// it: the KernelLink may be gone before its line is out, and no change
	// of the state follows to wake a wait on the state.
	require.Eventually(t, func() bool { return len(linesWith(out.String(), "destroyed", "KernelLink(", "/eth1")) > 0 },
		waitFor, time.Millisecond, "the change log's line for the KernelLink's destroy")
	assert.ElementsMatch(t, []string{"eth0/10.0.0.2-24", "eth0/fd00:0:0:1::2-64", "wlan0/172.16.5.20-20"}, ids(takeSnapshot(t, d.state).addresses), "other links are untouched")

	// The change log is in commit order: routes went first, then the
	// address, then the status, then the spec.
	var order []string
	for _, line := range linesWith(out.String(), "destroyed", "/eth1") {
		order = append(order, strings.Fields(line)[4])
	}
	require.Len(t, order, 6, "two routes, one address, status, spec, kernel link:\n%s", strings.Join(order, "\n"))
	pos := func(prefix string) []int {
		var p []int
		for i, o := range order {
			if strings.HasPrefix(o, prefix) {
				p = append(p, i)
			}
		}
		return p
	}
	routes, addrs, status, spec := pos("RouteSpec("), pos("AddressSpec("), pos("LinkStatus("), pos("LinkSpec(")
	require.Len(t, routes, 2)
	require.Len(t, addrs, 1)
	require.Len(t, status, 1)
	require.Len(t, spec, 1)
	assert.Less(t, routes[1], addrs[0], "routes before addresses: %v", order)
	assert.Less(t, addrs[0], status[0], "addresses before the link status: %v", order)
	assert.Less(t, status[0], spec[0], "the link status before the link spec: %v", order)
}

func TestE3_CarrierLossRemovesAddressesAndRoutesUntilItReturns(t *testing.T) {
	d, _ := startDaemon(t, sampleConfig(t))
	waitConverged(t, d)

	require.True(t, d.kernel.SetCarrier("eth0", false))
	eventually(t, d, "eth0 down: no address, no default route, no eth0 DNS", func() (bool, string) {
		s := takeSnapshot(t, d.state)
		st := s.statuses["eth0"]
		ok := st != nil && !st.TypedSpec().Up &&
			slices.Equal(ids(s.addresses), []string{"eth1/192.168.50.10-24", "wlan0/172.16.5.20-20"}) &&
			slices.Equal(ids(s.routes), []string{"eth1/10.200.0.0-16", "eth1/192.168.60.0-24"}) &&
			slices.Equal(s.servers(), []string{"192.168.50.53", "10.0.0.53", "1.1.1.1"})
		return ok, fmt.Sprintf("addresses=%v routes=%v servers=%v", ids(s.addresses), ids(s.routes), s.servers())
	})
	assert.Empty(t, takeSnapshot(t, d.state).orphans())

	require.True(t, d.kernel.SetCarrier("eth0", true))
	waitConverged(t, d)
}

func TestE4_DebugEndpointServesEveryPage(t *testing.T) {
	cfg := sampleConfig(t)
	cfg.Debug = cli.DebugOptions{Addr: "127.0.0.1:0", Insecure: true}
	cfg.ExpvarName = fmt.Sprintf("resgraph_%s_%d", t.Name(), expvarSeq.Add(1)) // expvar names are global and permanent
	d, _ := startDaemon(t, cfg)
	waitConverged(t, d)
	require.NotNil(t, d.DebugAddr())
	base := "http://" + d.DebugAddr().String()

	resp, body := get(t, base+"/debug/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "/debug/controllers")

	resp, body = get(t, base+"/debug/vars")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "application/json")
	var vars map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &vars))
	require.Contains(t, vars, cfg.ExpvarName, "the Runtime's metrics are published")
	var metrics struct {
		Controllers []struct {
			Name       string `json:"name"`
			Reconciles uint64 `json:"reconciles"`
		} `json:"controllers"`
	}
	require.NoError(t, json.Unmarshal(vars[cfg.ExpvarName], &metrics))
	var names []string
	for _, c := range metrics.Controllers {
		names = append(names, c.Name)
	}
	assert.Equal(t, controllers.Names(), names)

	resp, body = get(t, base+"/debug/pprof/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "goroutine")

	resp, body = get(t, base+"/debug/graph")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/vnd.graphviz; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(body, "digraph"), "DOT by default")
	checkDOT(t, body)
	resp, body = get(t, base+"/debug/graph?format=mermaid")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, strings.HasPrefix(body, "flowchart"), body)
	resp, body = get(t, base+"/debug/graph?format=json")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	checkGraphJSON(t, body)
	for _, name := range controllers.Names() {
		assert.Contains(t, body, name)
	}

	resp, body = get(t, base+"/debug/controllers")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	for _, name := range controllers.Names() {
		assert.Contains(t, body, "<td>"+name+"</td>")
	}
	assert.Contains(t, body, "device or resource busy", "the kernel's refusals show as the last error")

	resp, body = get(t, base+"/debug/controllers", "Accept", "application/json")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var doc debughttp.StatusDocument
	require.NoError(t, json.Unmarshal([]byte(body), &doc))
	require.Len(t, doc.Controllers, len(controllers.Names()))
	for _, c := range doc.Controllers {
		assert.Equal(t, observe.LifecycleRunning, c.Lifecycle, c.Name)
		assert.NotZero(t, c.Metrics.Reconciles, c.Name)
		if c.Name == controllers.LinkApplyControllerName {
			assert.Equal(t, observe.FamilyQController, c.Family)
			assert.Contains(t, c.LastError, "device or resource busy")
			assert.False(t, c.LastErrorAt.IsZero())
			assert.NotZero(t, c.Metrics.Requeues, "refused links were retried")
		}
	}
}

var expvarSeq atomic.Int64

func checkGraphJSON(t *testing.T, body string) {
	t.Helper()
	var g struct {
		Version int
		Nodes   []struct{ Kind, Name string }
		Edges   []struct{ Controller, Type, EdgeType string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &g))
	assert.Equal(t, 1, g.Version)
	var shared []string
	for _, e := range g.Edges {
		if e.EdgeType == "OutputShared" {
			shared = append(shared, e.Controller)
		}
	}
	assert.Equal(t, []string{controllers.DefaultRouteControllerName, controllers.StaticRouteControllerName}, shared,
		"two controllers share the RouteSpec output")
}

// checkDOT runs Graphviz on a DOT document when it is installed.
func checkDOT(t *testing.T, dot string) {
	t.Helper()
	path, err := exec.LookPath("dot")
	if err != nil {
		t.Log("dot is not on PATH: not checking the DOT output with Graphviz")
		return
	}
	cmd := exec.CommandContext(t.Context(), path, "-Tsvg")
	cmd.Stdin = strings.NewReader(dot)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "dot -Tsvg: %s", stderr.String())
	assert.Contains(t, string(out), "<svg")
}

func TestChangeLogLinesNameResourceAndVersion(t *testing.T) {
	d, out := startDaemon(t, sampleConfig(t))
	waitConverged(t, d)
	log := out.String()
	for _, want := range []string{
		"state created    LinkSpec(config/eth0) v1: mtu=1500",
		"state created    AddressSpec(network/eth0/10.0.0.2-24) v1: 10.0.0.2/24 dev eth0 (gateway 10.0.0.1 on-link)",
		"state created    RouteSpec(network/eth1/192.168.60.0-24) v1: 192.168.60.0/24 via 192.168.50.1 dev eth1 src 192.168.50.10 metric 50 (static)",
		"state updated    LinkSpec(config/eth0) v2: finalizers=[LinkApplyController]",
		`"controller": "LinkApplyController"`,
	} {
		assert.Contains(t, log, want)
	}
	assert.Len(t, linesWith(log, "reconcile failed", "LinkApplyController", "device or resource busy"), 6, "each of the three links was refused twice")
	for _, line := range linesWith(log, "ERROR") {
		assert.Contains(t, line, "device or resource busy", "no failure but the kernel's refusals")
	}
}

func TestStateErrorsComeFromTheState(t *testing.T) {
	// The change log is transparent: errors of the state pass through it
	// unchanged and nothing is logged for a refused write.
	d, out := startDaemon(t, config{})
	err := d.state.Destroy(t.Context(), resource.NewPointer(netres.ConfigNamespace, netres.LinkSpecType, "nope"))
	assert.True(t, state.IsNotFoundError(err), "%v", err)
	ls := netres.NewLinkSpec("eth9")
	require.NoError(t, d.state.Create(t.Context(), ls))
	assert.True(t, state.IsConflictError(d.state.Create(t.Context(), ls)))
	// The daemon goes on reacting to eth9 (finalizers, status), so count
	// only creations: the refused second Create must not have logged one.
	assert.Len(t, linesWith(out.String(), "created", "LinkSpec(config/eth9)"), 1)
	assert.Empty(t, linesWith(out.String(), "LinkSpec(config/nope)"))
}

func TestAddressWantedAgainWhileTearingDownIsRecreatedOnceDestroyed(t *testing.T) {
	d, _ := startDaemon(t, sampleConfig(t))
	waitConverged(t, d)
	addr := resource.NewPointer(netres.Namespace, netres.AddressSpecType, "wlan0/172.16.5.20-20")
	// An outside holder keeps the address from being destroyed.
	require.NoError(t, d.state.AddFinalizer(t.Context(), addr, "test-holder"))

	require.True(t, d.kernel.SetCarrier("wlan0", false))
	eventually(t, d, "wlan0's address tearing down, held", func() (bool, string) {
		s := takeSnapshot(t, d.state)
		a := s.addresses[addr.ID()]
		return a != nil && a.Metadata().Phase() == resource.PhaseTearingDown, fmt.Sprintf("%v", a)
	})
	require.True(t, d.kernel.SetCarrier("wlan0", true))
	eventually(t, d, "wlan0 up again", func() (bool, string) {
		st := takeSnapshot(t, d.state).statuses["wlan0"]
		return st != nil && st.TypedSpec().Up, fmt.Sprintf("%v", st)
	})
	s := takeSnapshot(t, d.state)
	assert.Equal(t, resource.PhaseTearingDown, s.addresses[addr.ID()].Metadata().Phase(), "a tearing-down address is not revived")

	require.NoError(t, d.state.RemoveFinalizer(t.Context(), addr, "test-holder"))
	eventually(t, d, "a fresh wlan0 address", func() (bool, string) {
		a := takeSnapshot(t, d.state).addresses[addr.ID()]
		return a != nil && a.Metadata().Phase() == resource.PhaseRunning, fmt.Sprintf("%v", a)
	})
	waitConverged(t, d)
}
