package main

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildDemo builds the demo's binary into the test's directory.
func buildDemo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "demo")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// notifications is a fake systemd: the socket $NOTIFY_SOCKET names, and
// the notifications it received, in order.
type notifications struct {
	conn *net.UnixConn
	got  chan string
}

func listenNotify(t *testing.T) (string, *notifications) {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: socket, Net: "unixgram"})
	require.NoError(t, err)
	n := &notifications{conn: conn, got: make(chan string, 256)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			k, err := conn.Read(buf)
			if err != nil {
				close(n.got)
				return
			}
			n.got <- string(buf[:k])
		}
	}()
	t.Cleanup(func() { _ = conn.Close(); <-done })
	return socket, n
}

// next returns the next notification, failing the test after waitFor.
func (n *notifications) next(t *testing.T) string {
	t.Helper()
	select {
	case m, ok := <-n.got:
		require.True(t, ok, "the notify socket closed")
		return m
	case <-time.After(waitFor):
		t.Fatalf("no notification within %s", waitFor)
		return ""
	}
}

// debugAddrRe finds the debug endpoint's address in the demo's log.
var debugAddrRe = regexp.MustCompile(`debug endpoint listening on http://(127\.0\.0\.1:\d+)/debug/`)

// TestNotify_TheDemoIsReadyOnceItsControllersCaughtUp starts the real demo
// binary under a fake $NOTIFY_SOCKET (systemd's Type=notify), with a
// simulated kernel slow to create links, which holds LinkApplyController
// back on purpose: until it caught up, /readyz is 503 and names it, and no
// READY=1 is sent; then READY=1 comes, and /readyz is 200. SIGTERM sends
// STOPPING=1, and the agent stops and exits 0 (issue 28 item 5).
func TestNotify_TheDemoIsReadyOnceItsControllersCaughtUp(t *testing.T) {
	bin := buildDemo(t)
	socket, n := listenNotify(t)
	cmd := exec.CommandContext(t.Context(), bin, "run", "--debug-addr", "127.0.0.1:0", "--debug-insecure",
		"--kernel-latency", "3s", "--apply-failures", "0", "--flap=false", "--delete-link", "none")
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+socket, "WATCHDOG_USEC=", "WATCHDOG_PID=")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	addr := make(chan string, 1)
	go func() {
		defer close(addr)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := debugAddrRe.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	go func() { exited <- cmd.Wait() }()
	var base string
	select {
	case a, ok := <-addr:
		require.True(t, ok, "the demo logged no debug address")
		base = "http://" + a
	case <-time.After(waitFor):
		t.Fatal("no debug address within " + waitFor.String())
	}

	// Held back: until READY=1, every notification is a STATUS=starting,
	// and /readyz, asked after each, is 503 and names LinkApplyController
	// once the controllers run.
	named := false
	for {
		m := n.next(t)
		if strings.Contains(m, "READY=1") {
			break
		}
		assert.Contains(t, m, "STATUS=starting: ", "before READY=1")
		if !strings.Contains(m, "controller ") {
			continue // Run has not started yet
		}
		resp, body := get(t, base+"/readyz")
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, body)
		named = named || strings.Contains(body, "controller LinkApplyController: catching up with the first listing of its inputs")
	}
	assert.True(t, named, "/readyz named the controller held back")
	// READY=1 came once the controllers caught up: /readyz agrees.
	resp, body := get(t, base+"/readyz")
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, "ready\n", body)
	resp, body = get(t, base+"/healthz")
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	for m := n.next(t); !strings.Contains(m, "STOPPING=1"); m = n.next(t) {
	}
	select {
	case err := <-exited:
		require.NoError(t, err, "the agent exits 0 on SIGTERM")
		exited <- err // for the cleanup
	case <-time.After(waitFor):
		t.Fatal("the agent did not exit within " + waitFor.String())
	}
}
