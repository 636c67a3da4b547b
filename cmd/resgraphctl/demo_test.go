package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"gopkg.in/yaml.v3"
)

// fastDemo are the flags of a demo whose carriers flap often and that
// deletes its link eth1 soon: changes to watch.
var fastDemo = []string{"--flap-min", "50ms", "--flap-max", "150ms", "--apply-failures", "0", "--delete-after", "1500ms"}

// quietDemo are the flags of a demo that changes nothing after its start.
var quietDemo = []string{"--flap=false", "--apply-failures", "0", "--delete-link", "none"}

// TestCT4_WatchShowsTheDemosChanges: resgraphctl get linkstatuses -w, run
// against the running demo as the README's quick start does, prints the
// link statuses, then the demo's changes as they come: carriers flapping
// (updated) and the deleted link eth1 (destroyed).
func TestCT4_WatchShowsTheDemosChanges(t *testing.T) {
	d := startDemo(t, "", fastDemo...)
	w := start(t, nil, "resgraphctl", "--endpoint", d.socket, "get", "linkstatuses", "-w")
	header := w.stdout.waitFor(t, 0, "the table's header", fields("EVENT", "NAMESPACE", "ID", "VERSION", "UP", "MTU", "MAC"))
	w.stdout.waitFor(t, header, "an updated link status", fields("updated", "network"))
	w.stdout.waitFor(t, header, "the deleted link's status destroyed", fields("destroyed", "network", "eth1"))
	w.stop(t)
	assert.Empty(t, w.stderr.text())
}

// TestCT4_WatchEndsWhenTheDaemonRestarts: a watch whose daemon goes away
// says it lost the connection; when a new daemon comes on the same socket
// (which cannot resume the watch: its state is new), resgraphctl says so
// and exits 1 — it does not re-list silently.
func TestCT4_WatchEndsWhenTheDaemonRestarts(t *testing.T) {
	dir := t.TempDir()
	d := startDemo(t, dir, quietDemo...)
	w := start(t, nil, "resgraphctl", "--endpoint", d.socket, "get", "linkspecs", "-w")
	w.stdout.waitFor(t, 0, "the existing link specs", fields("existing", "eth0"))
	d.kill(t)
	w.stderr.waitFor(t, 0, "the lost connection", func(l string) bool { return strings.Contains(l, "lost the connection to "+d.socket) })
	startDemo(t, dir, quietDemo...)
	w.stderr.waitFor(t, 0, "the restart", func(l string) bool { return strings.Contains(l, "the watch cannot resume: the daemon restarted") })
	assert.Equal(t, 1, w.wait(t))
}

// TestCT2_GetPrintsWhatTheDaemonDefines: types come from the daemon (any
// alias, any case); the table has the type's columns; -o wide, yaml and
// json print the resource.
func TestCT2_GetPrintsWhatTheDaemonDefines(t *testing.T) {
	d := startDemo(t, "", quietDemo...)
	for _, name := range []string{"linkstatuses", "LinkStatus", "linkstatuses.net.resgraph.dev"} {
		out, errOut, code := ctl(t, d.socket, "get", name)
		require.Zero(t, code, errOut)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		assert.Equal(t, []string{"NAMESPACE", "ID", "VERSION", "PHASE", "UP", "MTU", "INDEX", "MAC", "AGE"}, strings.Fields(lines[0]))
		assert.Len(t, lines, 4, "three links: %s", out)
	}
	out, _, code := ctl(t, d.socket, "get", "linkspec", "eth1", "-o", "wide")
	require.Zero(t, code)
	assert.True(t, fields("config", "LinkSpecs.net.resgraph.dev", "eth1", "9000", "192.168.50.10/24")(strings.Split(out, "\n")[1]), out)

	out, _, code = ctl(t, d.socket, "get", "linkspec", "eth1", "-o", "yaml")
	require.Zero(t, code)
	var doc struct {
		Metadata map[string]any
		Spec     map[string]any
	}
	require.NoError(t, yaml.Unmarshal([]byte(out), &doc), out)
	assert.Equal(t, "eth1", doc.Metadata["id"])
	assert.Equal(t, 9000, doc.Spec["MTU"])

	out, _, code = ctl(t, d.socket, "get", "linkspecs", "-o", "json")
	require.Zero(t, code)
	dec := json.NewDecoder(strings.NewReader(out))
	var ids []string
	for dec.More() {
		var j struct{ Metadata struct{ ID string } }
		require.NoError(t, dec.Decode(&j))
		ids = append(ids, j.Metadata.ID)
	}
	assert.Equal(t, []string{"eth0", "eth1", "wlan0"}, ids)

	out, _, code = ctl(t, d.socket, "types")
	require.Zero(t, code)
	assert.Contains(t, out, "linkstatus,linkstatuses")
}

// TestDescribeExplainGraphHealth: describe, explain (a resource and a
// controller), graph and health against the running demo.
func TestDescribeExplainGraphHealth(t *testing.T) {
	d := startDemo(t, "", quietDemo...)
	out, errOut, code := ctl(t, d.socket, "describe", "linkstatus", "eth0")
	require.Zero(t, code, errOut)
	for _, want := range []string{"ID:           eth0", "Owner:        LinkApplyController", "Written by:   LinkApplyController (OutputExclusive)",
		"Read by:", "AddressController (InputWeak)", "Last changes:", "Spec:", "MTU: 1500"} {
		assert.Contains(t, out, want)
	}

	out, _, code = ctl(t, d.socket, "explain", "linkspecs/eth0")
	require.Zero(t, code)
	assert.Contains(t, out, "resource LinkSpecs.net.resgraph.dev(config/eth0)")
	out, _, code = ctl(t, d.socket, "explain", "controller", "LinkApplyController", "-o", "json")
	require.Zero(t, code)
	var x struct{ Name, Family string }
	require.NoError(t, json.Unmarshal([]byte(out), &x))
	assert.Equal(t, "LinkApplyController", x.Name)
	_, errOut, code = ctl(t, d.socket, "explain", "controller", "NoSuch")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `no controller "NoSuch"`)

	for format, want := range map[string]string{"dot": "digraph", "mermaid": "flowchart LR", "json": `"version": 1`} {
		out, _, code = ctl(t, d.socket, "graph", "-o", format)
		require.Zero(t, code)
		assert.Contains(t, out, want)
		assert.Contains(t, out, "LinkApplyController")
	}

	waitReady(t, d.socket)
	out, _, code = ctl(t, d.socket, "health")
	require.Zero(t, code)
	assert.Contains(t, out, "controller LinkApplyController")
	assert.Contains(t, out, "readiness: passing")
	assert.Contains(t, out, "liveness: passing")
}

// TestHealth_PrintsTheRuntimesChecks: against a demo whose simulated
// kernel holds LinkApplyController back on purpose (a link takes an hour
// to create), resgraphctl health prints the Runtime's named checks —
// readiness failing for that controller, with the Runtime's reason, the
// other controllers passing — and exits 1; the agent still stops at once
// on SIGTERM, its slow kernel call ending with Run's context.
func TestHealth_PrintsTheRuntimesChecks(t *testing.T) {
	d := startDemo(t, "", append(slices.Clone(quietDemo), "--kernel-latency", "1h")...)
	waitServing(t, d.socket, "liveness") // Run runs: the controllers' checks are told
	out, errOut, code := ctl(t, d.socket, "health")
	assert.Equal(t, 1, code, "a check fails")
	assert.Contains(t, errOut, "health check(s) failing")
	assert.True(t, fields("readiness", "controller", "LinkApplyController", "FAILING", "catching")(lineWith(out, "LinkApplyController")), out)
	assert.True(t, fields("readiness", "controller", "AddressController", "ok", "caught")(lineWith(out, "AddressController ")), out)
	assert.True(t, fields("liveness", "runtime", "ok")(lineWith(out, "liveness  ")), out)
	assert.Contains(t, out, "readiness: FAILING")
	assert.Contains(t, out, "liveness: passing")

	out, _, code = ctl(t, d.socket, "health", "--probe", "liveness")
	assert.Zero(t, code, out)
	assert.NotContains(t, out, "LinkApplyController")
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGTERM))
	assert.Zero(t, d.wait(t), "the agent exits 0 on SIGTERM")
}

// lineWith is the first line of out that contains s.
func lineWith(out, s string) string {
	for l := range strings.Lines(out) {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestCT6_CreateApplyDelete: a link created with resgraphctl is
// configured by the demo's controllers; apply changes it, or leaves it
// unchanged; a file with one bad document writes nothing; delete removes
// the link, its status going before it.
func TestCT6_CreateApplyDelete(t *testing.T) {
	d := startDemo(t, "", quietDemo...)
	file := filepath.Join(t.TempDir(), "eth9.yaml")
	write := func(s string) { require.NoError(t, os.WriteFile(file, []byte(s), 0o600)) }
	write("metadata:\n  type: linkspec\n  id: eth9\n  labels: {role: test}\nspec:\n  MTU: 1400\n  Addresses: [10.9.0.2/24]\n")
	out, errOut, code := ctl(t, d.socket, "create", "-f", file)
	require.Zero(t, code, errOut)
	assert.Equal(t, "linkspec/eth9 created\n", out)
	waitGet(t, d.socket, "the link's status", fields("eth9", "1400"), "get", "linkstatus", "eth9")

	_, errOut, code = ctl(t, d.socket, "create", "-f", file)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "already exists")

	out, _, code = ctl(t, d.socket, "apply", "-f", file)
	require.Zero(t, code)
	assert.Equal(t, "linkspec/eth9 unchanged\n", out)
	write(strings.Replace(readFile(t, file), "1400", "1450", 1))
	out, _, code = ctl(t, d.socket, "apply", "-f", file)
	require.Zero(t, code)
	assert.Equal(t, "linkspec/eth9 configured\n", out)
	waitGet(t, d.socket, "the new MTU", fields("eth9", "1450"), "get", "linkstatus", "eth9")

	// Two documents, the second bad: nothing is written.
	bad := "metadata: {type: linkspec, id: eth8}\nspec: {MTU: 1400}\n---\nmetadata: {type: linkspec, id: eth7}\nspec: [\n"
	_, errOut, code = ctlIn(t, d.socket, bad, "apply", "-f", "-")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "-: document 2: not a resource document")
	_, _, code = ctl(t, d.socket, "get", "linkspec", "eth8")
	assert.Equal(t, 1, code, "nothing written")

	out, errOut, code = ctl(t, d.socket, "get", "linkspecs", "-l", "role=test", "-o", "yaml")
	require.Zero(t, code, errOut)
	assert.Contains(t, out, "id: eth9")
	assert.NotContains(t, out, "id: eth0")

	out, errOut, code = ctl(t, d.socket, "delete", "linkspec", "eth9")
	require.Zero(t, code, errOut)
	assert.Contains(t, out, "linkspec/eth9 destroyed")
	_, errOut, code = ctl(t, d.socket, "get", "linkstatus", "eth9")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "not found")

	_, errOut, code = ctl(t, d.socket, "delete", "linkstatus", "eth0")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `owner is "LinkApplyController"`)
}

// TestCompletion: the shell's completion of types, IDs and controllers
// comes from the daemon.
func TestCompletion(t *testing.T) {
	d := startDemo(t, "", quietDemo...)
	out, _, code := ctl(t, d.socket, "__complete", "get", "")
	require.Zero(t, code)
	assert.Contains(t, out, "linkstatuses\tLinkStatuses.net.resgraph.dev")
	out, _, code = ctl(t, d.socket, "__complete", "describe", "linkspec", "")
	require.Zero(t, code)
	assert.Equal(t, []string{"eth0", "eth1", "wlan0", ":4"}, strings.Fields(out))
	out, _, code = ctl(t, d.socket, "__complete", "delete", "linkspec", "eth0", "")
	require.Zero(t, code)
	assert.Equal(t, []string{"eth1", "wlan0", ":4"}, strings.Fields(out))
	out, _, code = ctl(t, d.socket, "__complete", "explain", "controller", "")
	require.Zero(t, code)
	assert.Contains(t, out, "LinkApplyController\n")
	out, _, code = ctl(t, d.socket, "completion", "bash")
	require.Zero(t, code)
	assert.Contains(t, out, "bash completion V2 for resgraphctl")
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(b)
}

// waitGet watches the resources args name (get ... -w) until a line of
// the watch satisfies ok.
func waitGet(t *testing.T, socket, what string, ok func(string) bool, args ...string) {
	t.Helper()
	w := start(t, nil, "resgraphctl", append(append([]string{"--endpoint", socket}, args...), "-w")...)
	w.stdout.waitFor(t, 0, what, ok)
	w.stop(t)
}

// waitReady waits until the daemon's gRPC health protocol says it is
// ready.
func waitReady(t *testing.T, socket string) { waitServing(t, socket, "readiness") }

// waitServing waits until the daemon's gRPC health protocol says service
// is SERVING.
func waitServing(t *testing.T, socket, service string) {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	w, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{Service: service})
	require.NoError(t, err)
	for {
		resp, err := w.Recv()
		require.NoError(t, err, "the %s watch", service)
		if resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return
		}
	}
}
