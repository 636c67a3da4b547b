package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCT12_HelpExamplesRunAgainstTheDemo: every example of the help of
// the commands that read (get, describe, explain, graph, health, types)
// runs as printed against the running demo and prints something: no
// example names a controller, a label or a resource the demo does not
// have. Examples that pipe, redirect, loop or watch are left out.
func TestCT12_HelpExamplesRunAgainstTheDemo(t *testing.T) {
	d := startDemo(t, "", quietDemo...)
	waitReady(t, d.socket)
	waitGet(t, d.socket, "eth1's address", fields("existing", "eth1/192.168.50.10-24"), "get", "addressspecs")
	ran := 0
	for _, command := range []string{"get", "describe", "explain", "graph", "health", "types"} {
		help, errOut, code := ctl(t, "", command, "--help")
		require.Zero(t, code, errOut)
		for _, args := range helpExamples(t, help) {
			out, errOut, code := ctl(t, d.socket, args...)
			assert.Zero(t, code, "resgraphctl %s: %s", strings.Join(args, " "), errOut)
			assert.NotEmpty(t, out, args)
			assert.False(t, strings.HasPrefix(out, "No "), "resgraphctl %s selects nothing: %s", strings.Join(args, " "), out)
			ran++
		}
	}
	assert.GreaterOrEqual(t, ran, 10, "the examples ran")
}

// helpExamples returns the arguments of the example lines of a command's
// help (after "Examples:", each "resgraphctl ..." line up to a comment),
// leaving out those that pipe, redirect, loop or watch. Single quotes
// group words, as in sh.
func helpExamples(t *testing.T, help string) [][]string {
	t.Helper()
	_, examples, ok := strings.Cut(help, "Examples:\n")
	require.True(t, ok, "the help has examples:\n%s", help)
	var all [][]string
	for line := range strings.Lines(examples) {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "resgraphctl ")
		if !ok {
			break
		}
		rest, _, _ = strings.Cut(rest, " #")
		if strings.ContainsAny(rest, "|>") || strings.Contains(rest, " -w") {
			continue
		}
		all = append(all, shellWords(rest))
	}
	return all
}

// shellWords splits s at spaces outside single quotes.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// TestCT5_OneFailureIsOneLine: a command over one resource that fails
// prints its one error line, and no count of failures after it; over
// several, one line per failure and the count.
func TestCT5_OneFailureIsOneLine(t *testing.T) {
	d := serveTestDaemon(t)
	_, errOut, code := ctl(t, d.socket, "delete", "item", "nope")
	assert.Equal(t, 1, code)
	assert.Equal(t, "resgraphctl: item/nope: resource Items.test.resgraph.dev(shop/nope): not found\n", errOut)

	_, errOut, code = ctl(t, d.socket, "delete", "item", "nope", "nada")
	assert.Equal(t, 1, code)
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	require.Len(t, lines, 3, errOut)
	assert.Contains(t, lines[0], "item/nope: ")
	assert.Contains(t, lines[1], "item/nada: ")
	assert.Equal(t, "resgraphctl: 2 of 2 resources failed", lines[2])
}

// TestCT8_AnOutputThatCannotBeWrittenIsSaidFirst: record -o into a
// directory that does not exist fails at once, naming -o's path (not the
// temporary file beside it), before the daemon is asked: the endpoint
// here reaches no daemon, and the error is the file's.
func TestCT8_AnOutputThatCannotBeWrittenIsSaidFirst(t *testing.T) {
	out := filepath.Join(t.TempDir(), "missing", "incident.rgrec")
	nobody := filepath.Join(t.TempDir(), "none.sock")
	stdout, errOut, code := ctl(t, nobody, "record", "--for", "5m", "-o", out)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "resgraphctl: cannot write the recording to "+out+": "+filepath.Dir(out)+": no such file or directory\n", errOut)
}

// TestCT9_ReplayOutsideTheSourceTreeSaysWhere: replay in a directory
// that does not hold the package the recording's command tests is
// refused before anything runs, saying to run it from the daemon's
// source tree or to name it with --dir (not "go.mod file not found" and
// "the replay failed").
func TestCT9_ReplayOutsideTheSourceTreeSaysWhere(t *testing.T) {
	elsewhere := t.TempDir()
	file := filepath.Join(elsewhere, "incident.rgrec")
	b, err := os.ReadFile("../demo/testdata/incident.rgrec")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b, 0o600))
	stdout, errOut, code := ctl(t, "", "replay", file, "--dir", elsewhere)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout, "nothing ran")
	assert.Equal(t, "resgraphctl: the recording's replay command runs ./cmd/demo/internal/controllers, which is not in "+elsewhere+
		": run replay from the daemon's source tree, or name it with --dir\n", errOut)
}

// TestCT5_AnUnknownControllerNamesTheDaemons: explain controller NAME of
// a controller the daemon does not run is one line that names the
// controllers it runs.
func TestCT5_AnUnknownControllerNamesTheDaemons(t *testing.T) {
	d := startDemo(t, "", quietDemo...)
	waitReady(t, d.socket)
	stdout, errOut, code := ctl(t, d.socket, "explain", "controller", "LinkStatusController")
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Equal(t, `resgraphctl: no controller "LinkStatusController": the daemon runs AddressCleanupController, AddressController, `+
		"DefaultRouteController, KernelLinkObserver, LinkApplyController, LinkStatusCleanupController, ResolverController, StaticRouteController\n", errOut)
}

// TestCT13_ExplainTakesTheDebugPagesForm: explain resource
// NAMESPACE/TYPE/ID, as "demo explain" and docs/daemons.md write it,
// explains the resource TYPE ID names; a -n that contradicts it, and a
// form without its three parts, are usage errors.
func TestCT13_ExplainTakesTheDebugPagesForm(t *testing.T) {
	d := startDemo(t, "", quietDemo...)
	waitReady(t, d.socket)
	out, errOut, code := ctl(t, d.socket, "explain", "-o", "json", "resource", "network/LinkStatuses.net.resgraph.dev/eth0")
	require.Zero(t, code, errOut)
	var x struct {
		Resource struct{ Namespace, Type, ID string }
		Exists   bool
	}
	require.NoError(t, json.Unmarshal([]byte(out), &x), out)
	assert.Equal(t, "network", x.Resource.Namespace)
	assert.Equal(t, "LinkStatuses.net.resgraph.dev", x.Resource.Type)
	assert.Equal(t, "eth0", x.Resource.ID)
	assert.True(t, x.Exists)

	_, errOut, code = ctl(t, d.socket, "explain", "-n", "config", "resource", "network/linkstatus/eth0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "resgraphctl: explain resource network/linkstatus/eth0: -n config names another namespace\n")
	_, errOut, code = ctl(t, d.socket, "explain", "resource", "linkstatus/eth0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `resgraphctl: explain resource "linkstatus/eth0": want NAMESPACE/TYPE/ID`)
}
