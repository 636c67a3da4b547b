package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADME_QuickStartWorksAgainstTheDemo: the commands of the quick
// start of docs/demo.md (the demo's page, linked from the README) (`go run ./cmd/resgraphctl ...` while the demo runs) work
// against the running demo, with their defaults: the demo's data
// directory and the endpoint resgraphctl finds by itself.
func TestREADME_QuickStartWorksAgainstTheDemo(t *testing.T) {
	b, err := os.ReadFile("../../docs/demo.md")
	require.NoError(t, err)
	var commands [][]string
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "go run ./cmd/resgraphctl "); ok {
			args, _, _ := strings.Cut(rest, "#")
			commands = append(commands, strings.Fields(args))
		}
	}
	require.NotEmpty(t, commands, "the README's quick start runs resgraphctl")
	require.Equal(t, []string{"get", "linkstatuses", "-w"}, commands[0], "the quick start watches the link statuses first")

	xdg := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", xdg) // the demo and resgraphctl find the socket there
	t.Setenv("RESGRAPH_ENDPOINT", "")
	d := start(t, nil, "demo", append([]string{"run"}, fastDemo...)...)
	d.stdout.waitFor(t, 0, "the API listening", func(l string) bool { return strings.Contains(l, "API listening on "+xdg) })
	for _, args := range commands {
		if args[len(args)-1] == "-w" {
			w := start(t, nil, "resgraphctl", args...)
			w.stdout.waitFor(t, 0, "a change", func(l string) bool {
				return strings.HasPrefix(l, "updated") || strings.HasPrefix(l, "destroyed")
			})
			w.stop(t)
			continue
		}
		_, errOut, code := ctl(t, "", args...)
		require.Zero(t, code, "%v: %s", args, errOut)
	}
}
