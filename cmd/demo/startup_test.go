package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warnings returns the lines of log at level WARN or ERROR.
func warnings(log string) []string {
	var out []string
	for l := range strings.Lines(log) {
		if f := strings.Fields(l); len(f) > 1 && (f[1] == "WARN" || f[1] == "ERROR") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// TestStartup_NoWarning starts the real demo binary as docs/demo.md runs it
// (its default flags), with the simulated kernel's scripted refusals off
// (--apply-failures 0: the one WARN docs/demo.md's walkthrough explains),
// under a fake $NOTIFY_SOCKET to know when it is ready; once READY=1
// came it is stopped with SIGTERM. Its whole log, start-up and stop, has
// no WARN or ERROR line: a start-up check that fires on the demo's own
// wiring (an outside writer declared in the wrong namespace gave "no
// controller writes this input kind") is a bug of the demo.
func TestStartup_NoWarning(t *testing.T) {
	log := startAndStop(t)
	assert.Empty(t, warnings(log), "the demo's start-up and stop log WARN or ERROR lines; log:\n%s", log)
}

// TestStartup_TheAPISocketIsLoggedOnce: the demo's start-up log names its
// API socket in one line (its own, which says what resgraphctl does with
// it and the access rules), not a second time in the remote server's
// "serving on" line.
func TestStartup_TheAPISocketIsLoggedOnce(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "api.sock")
	log := startAndStop(t, "--data-dir", dir)
	var lines []string
	for l := range strings.Lines(log) {
		if strings.Contains(l, sock) {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	require.Len(t, lines, 1, "log lines naming the API socket %s; log:\n%s", sock, log)
	assert.Contains(t, lines[0], "API listening on "+sock+" (resgraphctl talks to it)")
}

// startAndStop runs the demo binary with args and --apply-failures 0
// under a fake $NOTIFY_SOCKET until READY=1 came, stops it with SIGTERM,
// requires it to exit 0, and returns its whole log.
func startAndStop(t *testing.T, args ...string) string {
	bin := buildDemo(t)
	socket, n := listenNotify(t)
	var out syncBuffer
	cmd := exec.CommandContext(t.Context(), bin, append([]string{"--apply-failures", "0"}, args...)...)
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+socket, "WATCHDOG_USEC=", "WATCHDOG_PID=")
	cmd.Stdout, cmd.Stderr = &out, &out
	p := startProcess(t, cmd)
	for m := n.next(t); !strings.Contains(m, "READY=1"); m = n.next(t) {
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.done:
		require.NoError(t, p.err, "the demo exits 0 on SIGTERM; log:\n%s", out.String())
	case <-time.After(waitFor):
		t.Fatal("the demo did not exit within " + waitFor.String())
	}
	return out.String()
}
