package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/recording"
)

// TestCT8_RecordWritesTheWholeRecordingOrNothing: resgraphctl record
// --for writes the demo's recording of that time (a file the recording
// package reads, from the demo, recorded for what was asked) and says
// what it holds; without --for it writes the recorder's window now. A
// missing -o, a --for out of bounds and a file that cannot be written
// fail, and leave no file behind.
func TestCT8_RecordWritesTheWholeRecordingOrNothing(t *testing.T) {
	d := startDemo(t, "", fastDemo...)
	dir := t.TempDir()
	file := filepath.Join(dir, "incident.rgrec")
	out, errOut, code := ctl(t, d.socket, "record", "--for", "1500ms", "-o", file)
	require.Zero(t, code, errOut)
	assert.Contains(t, out, "of resgraph demo (recorded for 1.5s)")
	assert.Contains(t, out, "written to "+file)
	assert.Contains(t, out, "replay it: resgraphctl replay "+file)
	rec := readHeader(t, file)
	assert.Equal(t, "recorded for 1.5s", rec.Reason)
	assert.NotEmpty(t, rec.Controllers)

	out, errOut, code = ctl(t, d.socket, "record", "-o", file)
	require.Zero(t, code, errOut)
	assert.Contains(t, out, "(on demand)")
	assert.Equal(t, "on demand", readHeader(t, file).Reason)

	for _, bad := range [][]string{{"record"}, {"record", "--for", "-1s", "-o", "x.rgrec"}, {"record", "--for", "2h", "-o", "x.rgrec"}} {
		_, errOut, code := ctl(t, d.socket, bad...)
		assert.Equal(t, 2, code, "%v: %s", bad, errOut)
		assert.Equal(t, 2, strings.Count(errOut, "\n"), "one line and the usage hint: %s", errOut)
	}
	_, errOut, code = ctl(t, d.socket, "record", "-o", filepath.Join(dir, "no-such-dir", "x.rgrec"))
	assert.Equal(t, 1, code, errOut)
	taken := filepath.Join(dir, "taken")
	require.NoError(t, os.MkdirAll(filepath.Join(taken, "x"), 0o700))
	_, errOut, code = ctl(t, d.socket, "record", "-o", taken)
	assert.Equal(t, 1, code, "a directory is in the way: %s", errOut)
	require.NoError(t, os.RemoveAll(taken))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the recording: no temporary file left")
}

func readHeader(t *testing.T, file string) *recording.Recording {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	rec, err := recording.ReadHeader(f)
	require.NoError(t, err)
	assert.Equal(t, "resgraph demo", rec.Source)
	return rec
}

// TestCT9_ReplayRunsTheRecordingsCommand: a recording of the demo taken
// with resgraphctl record (a link deleted while carriers flap) replays
// with resgraphctl replay: it runs the command the recording names (the
// demo's simulation test, with the file and the flags after --) and
// passes; a replay that fails exits 1; a file that is not a recording is
// refused before anything runs.
func TestCT9_ReplayRunsTheRecordingsCommand(t *testing.T) {
	d := startDemo(t, "", fastDemo...)
	d.stdout.waitFor(t, 0, "the deletion of eth1", func(l string) bool { return strings.Contains(l, "deleting link eth1") })
	file := filepath.Join(t.TempDir(), "incident.rgrec")
	_, errOut, code := ctl(t, d.socket, "record", "-o", file)
	require.Zero(t, code, errOut)
	d.stop(t)

	out, _, code := ctl(t, "", "replay", file, "--print", "--", "-sim.seeds=2")
	require.Zero(t, code)
	assert.Equal(t, "go test ./cmd/demo/internal/controllers -run '^TestSimulation$' -count=1 -v -sim.recording="+file+" -sim.seeds=2\n", out)

	// The replay runs in the daemon's source tree as its developer runs
	// it: in the repository's workspace (make test runs each module with
	// GOWORK=off, under which the root holds no cmd/demo package).
	t.Setenv("GOWORK", "")
	out, errOut, code = ctl(t, "", "replay", file, "--dir", "../..", "--", "-sim.seeds=2")
	require.Zero(t, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "sim demo: 2 seeds")
	assert.Contains(t, errOut, "resgraphctl: replaying "+file)

	out, errOut, code = ctl(t, "", "replay", file, "--dir", "../..", "--", "-sim.replay=not-a-token")
	assert.Equal(t, 1, code, "%s\n%s", out, errOut)
	assert.Contains(t, errOut, "resgraphctl: the replay failed (exit status 1)")

	// CT9: a file cut short, or damaged after its header, is refused
	// before anything is printed or runs.
	whole, err := os.ReadFile(file)
	require.NoError(t, err)
	cut := filepath.Join(t.TempDir(), "cut.rgrec")
	require.NoError(t, os.WriteFile(cut, whole[:len(whole)-10], 0o600))
	damaged := filepath.Join(t.TempDir(), "damaged.rgrec")
	whole[len(whole)-20] ^= 0x41
	require.NoError(t, os.WriteFile(damaged, whole, 0o600))
	for name, want := range map[string]string{cut: "truncated", damaged: "corrupted"} {
		out, errOut, code := ctl(t, "", "replay", name, "--print")
		assert.Equal(t, 1, code, errOut)
		assert.Empty(t, out, "nothing printed")
		assert.True(t, strings.HasPrefix(errOut, "resgraphctl: "+name+": recording: "), errOut)
		assert.Contains(t, errOut, want)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	}

	notOne := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(notOne, []byte("not a recording"), 0o600))
	out, errOut, code = ctl(t, "", "replay", notOne, "--dir", "../..")
	assert.Equal(t, 1, code)
	assert.Empty(t, out, "nothing ran")
	assert.Equal(t, "resgraphctl: "+notOne+": recording: not a recording (it does not start with \"RGREC\")\n", errOut)
}

// TestCT10_PlanSaysWhatAChangeWouldDoAndWritesNothing: resgraphctl plan
// -f prints the demo's plan of a change (a link removed, one added: the
// resources destroyed and created, the kernel's actions), and the demo's
// resources are as they were; a change the demo refuses (a resource its
// controllers write, an unknown type) and an empty file fail with one
// line.
func TestCT10_PlanSaysWhatAChangeWouldDoAndWritesNothing(t *testing.T) {
	d := startDemo(t, "", quietDemo...)
	waitReady(t, d.socket)
	before, _, code := ctl(t, d.socket, "get", "linkspecs", "-o", "yaml")
	require.Zero(t, code)
	change := `set:
  - type: linkspec
    id: eth2
    spec: {MTU: 1500, Addresses: [10.9.0.2/24]}
remove:
  - {type: linkspec, id: eth1}
`
	out, errOut, code := ctlIn(t, d.socket, change, "plan", "-f", "-")
	require.Zero(t, code, errOut)
	for _, want := range []string{
		"- LinkSpecs.net.resgraph.dev(config/eth1) (proposed)",
		"+ LinkSpecs.net.resgraph.dev(config/eth2) (proposed)",
		"+ LinkStatuses.net.resgraph.dev(network/eth2) (by LinkApplyController",
		"kernel: delete link eth1",
		"kernel: create link eth2 (MTU 1500)",
		"The daemon reaches its fixed point.",
	} {
		assert.Contains(t, out, want)
	}
	after, _, code := ctl(t, d.socket, "get", "linkspecs", "-o", "yaml")
	require.Zero(t, code)
	assert.Equal(t, before, after, "the plan wrote nothing")

	for bad, want := range map[string]string{
		"set: [{type: linkstatus, id: eth0}]":                  "LinkApplyController",
		"set: [{type: nosuchtype, id: a}]":                     "nosuchtype",
		"remove: [{type: linkspec, id: eth7}]":                 "LinkSpecs.net.resgraph.dev(config/eth7): there is no such resource to remove",
		"set: [{type: linkspec, id: eth2, spec: {Mtu: 1500}}]": `spec.Mtu: netres.LinkSpecSpec has no field "Mtu": its field is "MTU"`, // CT14
		"\n": "- is empty",
	} {
		_, errOut, code := ctlIn(t, d.socket, bad, "plan", "-f", "-")
		assert.Equal(t, 1, code, "%q: %s", bad, errOut)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
		assert.Contains(t, errOut, want)
	}
	_, errOut, code = ctl(t, d.socket, "plan")
	assert.Equal(t, 2, code, errOut)
}

// TestCT10_PlanReadsWhatGetPrints: what get -o yaml (or -o json) prints,
// edited, is a change plan -f reads — one resource, or a whole list of
// which one is edited — and the plan is of that edit alone (the kernel
// link's update with its chain through the kernel's action); a document
// that is neither a change nor a resource is refused in one line naming
// it; nothing is written.
func TestCT10_PlanReadsWhatGetPrints(t *testing.T) {
	d := startDemo(t, "", quietDemo...)
	waitReady(t, d.socket)
	before, _, code := ctl(t, d.socket, "get", "linkspecs", "-o", "yaml")
	require.Zero(t, code)
	mtu := regexp.MustCompile(`MTU: (\d+)`)

	one, errOut, code := ctl(t, d.socket, "get", "linkspec", "eth1", "-o", "yaml")
	require.Zero(t, code, errOut)
	m := mtu.FindStringSubmatch(one)
	require.NotNil(t, m, "get prints eth1's MTU:\n%s", one)
	require.NotEqual(t, "1400", m[1])
	list, errOut, code := ctl(t, d.socket, "get", "linkspecs", "-o", "yaml")
	require.Zero(t, code, errOut)
	i := strings.Index(list, "id: eth1\n")
	require.GreaterOrEqual(t, i, 0, "the list has eth1:\n%s", list)
	asJSON, errOut, code := ctl(t, d.socket, "get", "linkspec", "eth1", "-o", "json")
	require.Zero(t, code, errOut)
	for name, change := range map[string]string{
		"one resource":        mtu.ReplaceAllString(one, "MTU: 1400"),
		"a list, one edited":  list[:i] + strings.Replace(list[i:], "MTU: "+m[1], "MTU: 1400", 1),
		"one resource (json)": strings.Replace(asJSON, `"MTU": `+m[1], `"MTU": 1400`, 1),
	} {
		out, errOut, code := ctlIn(t, d.socket, change, "plan", "-f", "-")
		require.Zero(t, code, "%s: %s", name, errOut)
		for _, want := range []string{
			"~ LinkSpecs.net.resgraph.dev(config/eth1) (proposed)\n      spec.MTU: " + m[1] + " → 1400\n",
			"kernel: set the MTU of eth1 to 1400",
			// PL5: the observer's write follows the kernel's action.
			"~ KernelLinks.net.resgraph.dev(network/eth1) (by KernelLinkObserver)\n      spec.MTU: " + m[1] + " → 1400\n" +
				"      because: LinkSpecs.net.resgraph.dev(config/eth1) (the change) → LinkApplyController kernel: set the MTU of eth1 to 1400 → " +
				"KernelLinkObserver modify KernelLinks.net.resgraph.dev(network/eth1)\n",
			"The daemon reaches its fixed point.",
		} {
			assert.Contains(t, out, want, name)
		}
		assert.Equal(t, 1, strings.Count(out, "(proposed)"), "%s: the edit alone is proposed:\n%s", name, out)
	}

	_, errOut, code = ctlIn(t, d.socket, one+"---\nkind: LinkSpec\nname: eth1\n", "plan", "-f", "-")
	assert.Equal(t, 1, code, errOut)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
	assert.Contains(t, errOut, "document 2 is neither a change (set, remove) nor a resource as resgraphctl get prints it (metadata, spec): its keys are kind, name")

	after, _, code := ctl(t, d.socket, "get", "linkspecs", "-o", "yaml")
	require.Zero(t, code)
	assert.Equal(t, before, after, "the plans wrote nothing")
}
