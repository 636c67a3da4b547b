package cli

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// parse parses args and returns what was written to stdout and stderr,
// together.
func parse(t *testing.T, args ...string) (Command, string, error) {
	t.Helper()
	c, stdout, stderr, err := parse2(t, args...)
	return c, stdout + stderr, err
}

func parse2(t *testing.T, args ...string) (Command, string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c, err := Parse(args, &stdout, &stderr)
	return c, stdout.String(), stderr.String(), err
}

func TestRunIsTheDefaultWithSensibleDefaults(t *testing.T) {
	for _, args := range [][]string{nil, {"run"}} {
		c, _, err := parse(t, args...)
		require.NoError(t, err)
		assert.Equal(t, CmdRun, c.Name)
		assert.Equal(t, RunOptions{Seed: 1, FlapMin: time.Second, FlapMax: 3 * time.Second, ApplyFailures: 2,
			DataDir: DefaultDataDir(), APISocket: filepath.Join(DefaultDataDir(), "api.sock")}, c.Run)
		assert.Equal(t, 5*time.Second, c.Run.DeleteDelay())
	}
}

func TestRunFlags(t *testing.T) {
	c, _, err := parse(t, "--duration", "10s", "--seed", "7", "--apply", "x.json", "--debug-addr", "127.0.0.1:0", "--debug-insecure",
		"--delete-link", "eth0", "--flap=false", "--apply-failures", "0", "--verbose")
	require.NoError(t, err)
	assert.Equal(t, RunOptions{Duration: 10 * time.Second, Seed: 7, ApplyFile: "x.json", Debug: DebugOptions{Addr: "127.0.0.1:0", Insecure: true},
		DeleteLink: "eth0", Verbose: true, DataDir: DefaultDataDir(), APISocket: filepath.Join(DefaultDataDir(), "api.sock")},
		c.Run, "--flap=false zeroes the flap interval")
	assert.Equal(t, 5*time.Second, c.Run.DeleteDelay(), "half of --duration")

	c, _, err = parse(t, "run", "--duration", "10s", "--delete-after", "2s")
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, c.Run.DeleteDelay())
}

func TestRunRejectsBadValues(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"negative duration":    {[]string{"--duration", "-1s"}, "--duration must not be negative"},
		"negative delete":      {[]string{"--delete-after", "-1s"}, "--delete-after must not be negative"},
		"negative failures":    {[]string{"--apply-failures", "-1"}, "--apply-failures must not be negative"},
		"flap-min zero":        {[]string{"--flap-min", "0s"}, "--flap-min must be positive"},
		"flap-max below min":   {[]string{"--flap-min", "2s", "--flap-max", "1s"}, "--flap-max (1s) must not be below --flap-min (2s)"},
		"non-loopback debug":   {[]string{"--debug-addr", "0.0.0.0:6060"}, "--debug-allow-remote"},
		"unknown flag":         {[]string{"--nope"}, "flag provided but not defined: -nope"},
		"positional argument":  {[]string{"run", "extra"}, `unexpected argument "extra"`},
		"bad duration literal": {[]string{"--duration", "ten"}, "invalid value"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, err := parse(t, tt.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, _, err := parse(t, "--debug-addr", "0.0.0.0:6060")
	assert.True(t, state.IsInvalidError(err), "a refused debug address is an invalid-input error")

	c, _, err := parse(t, "--debug-addr", "0.0.0.0:6060", "--debug-allow-remote")
	require.NoError(t, err)
	assert.True(t, c.Run.Debug.AllowRemote)
}

func TestGraph(t *testing.T) {
	c, _, err := parse(t, "graph")
	require.NoError(t, err)
	assert.Equal(t, Command{Name: CmdGraph, GraphFormat: "dot"}, c)
	for _, f := range []string{"dot", "mermaid", "json"} {
		c, _, err = parse(t, "graph", "--format", f)
		require.NoError(t, err)
		assert.Equal(t, f, c.GraphFormat)
	}
	_, _, err = parse(t, "graph", "--format", "svg")
	assert.ErrorContains(t, err, `unknown --format "svg"`)
}

func TestApply(t *testing.T) {
	c, _, err := parse(t, "apply", "intent.json")
	require.NoError(t, err)
	assert.Equal(t, Command{Name: CmdApply, ApplyFile: "intent.json"}, c)
	_, stderr, err := parse(t, "apply")
	assert.ErrorContains(t, err, "want exactly one intent FILE")
	assert.Contains(t, stderr, "Usage: demo apply [--plan [--current CURRENT]] FILE")
	_, _, err = parse(t, "apply", "a", "b")
	assert.Error(t, err)
	c, _, err = parse(t, "apply", "--plan", "--current", "now.json", "next.json")
	require.NoError(t, err)
	assert.Equal(t, Command{Name: CmdApply, ApplyFile: "next.json", Plan: true, Current: "now.json"}, c)
	_, _, err = parse(t, "apply", "--current", "now.json", "next.json")
	assert.ErrorContains(t, err, "--current needs --plan")
}

func TestExplain(t *testing.T) {
	c, _, err := parse(t, "explain", "--addr", "127.0.0.1:6060", "resource", "network/LinkStatuses.net/eth0")
	require.NoError(t, err)
	assert.Equal(t, Command{Name: CmdExplain, Explain: ExplainOptions{Addr: "127.0.0.1:6060", Resource: "network/LinkStatuses.net/eth0", Timeout: 10 * time.Second}}, c)
	c, _, err = parse(t, "explain", "--addr", "localhost:1", "--json", "--timeout", "2s", "controller", "AddressController")
	require.NoError(t, err)
	assert.Equal(t, ExplainOptions{Addr: "localhost:1", Controller: "AddressController", JSON: true, Timeout: 2 * time.Second}, c.Explain)
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "controller", "A"}, "--addr is required"},
		{[]string{"explain", "--addr", "a:1", "resource", "ns/type"}, "want NAMESPACE/TYPE/ID"},
		{[]string{"explain", "--addr", "a:1", "thing", "x"}, `"thing": want resource or controller`},
		{[]string{"explain", "--addr", "a:1", "controller"}, "got 1 arguments"},
		{[]string{"explain", "--addr", "a:1", "--timeout", "0s", "controller", "A"}, "--timeout must be positive"},
	} {
		_, _, err := parse(t, bad.args...)
		assert.ErrorContains(t, err, bad.want, bad.args)
	}
	_, stdout, _, err := parse2(t, "help", "explain")
	assert.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, stdout, "-addr")
}

// TestFlagsGoAnywhere: explain and apply take their flags before,
// between and after their words, as "demo explain controller NAME
// --json" is typed; after "--" everything is a word.
func TestFlagsGoAnywhere(t *testing.T) {
	want := ExplainOptions{Addr: "a:1", Controller: "AddressController", JSON: true, Timeout: 2 * time.Second}
	for _, args := range [][]string{
		{"explain", "controller", "AddressController", "--addr", "a:1", "--json", "--timeout", "2s"},
		{"explain", "controller", "--json", "AddressController", "--addr", "a:1", "--timeout=2s"},
		{"explain", "--addr", "a:1", "controller", "AddressController", "--json", "--timeout", "2s"},
	} {
		c, _, err := parse(t, args...)
		require.NoError(t, err, args)
		assert.Equal(t, want, c.Explain, args)
	}
	c, _, err := parse(t, "explain", "--addr", "a:1", "resource", "network/LinkStatuses.net/eth0", "--json")
	require.NoError(t, err)
	assert.Equal(t, "network/LinkStatuses.net/eth0", c.Explain.Resource)
	assert.True(t, c.Explain.JSON)

	c, _, err = parse(t, "apply", "next.json", "--plan", "--current", "now.json")
	require.NoError(t, err)
	assert.Equal(t, Command{Name: CmdApply, ApplyFile: "next.json", Plan: true, Current: "now.json"}, c)
	c, _, err = parse(t, "apply", "--plan", "--", "--odd-name.json")
	require.NoError(t, err)
	assert.Equal(t, "--odd-name.json", c.ApplyFile)
	_, _, err = parse(t, "explain", "controller", "A", "--addr", "a:1", "--bogus")
	assert.ErrorContains(t, err, "flag provided but not defined: -bogus")
}

func TestHelpAndUnknownCommands(t *testing.T) {
	_, stderr, err := parse(t, "-h")
	assert.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, stderr, "demo graph")
	_, stderr, err = parse(t, "run", "-h")
	assert.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, stderr, "-debug-addr")
	_, stderr, err = parse(t, "bogus")
	assert.ErrorContains(t, err, `unknown command "bogus"`)
	assert.Contains(t, stderr, "Usage:")
}

func TestHelpPrintsUsageOnStdout(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"help", "help"}} {
		_, stdout, stderr, err := parse2(t, args...)
		assert.ErrorIs(t, err, flag.ErrHelp, args)
		assert.Contains(t, stdout, "demo help [COMMAND]", args)
		assert.Empty(t, stderr, args)
	}
	_, stdout, _, err := parse2(t, "help", "run")
	assert.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, stdout, "-debug-addr", "the flags of run")
	_, _, stderr, err := parse2(t, "help", "bogus")
	assert.ErrorContains(t, err, `help: unknown command "bogus"`)
	assert.Contains(t, stderr, "Usage:")
	_, _, _, err = parse2(t, "help", "run", "graph")
	assert.ErrorContains(t, err, "at most one COMMAND")
}
