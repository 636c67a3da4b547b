package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/internal/certtest"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
)

// debugCerts are a CA of the test, the agent's certificate and key for
// loopback, and client certificates by common name.
type debugCerts struct {
	dir, ca, cert, key string
	authority          *certtest.CA
}

func newDebugCerts(t *testing.T) debugCerts {
	t.Helper()
	dir := t.TempDir()
	ca, err := certtest.NewCA("demo debug clients")
	require.NoError(t, err)
	caFile, err := ca.WriteCA(dir, "ca.pem")
	require.NoError(t, err)
	cert, key, err := ca.WriteLeaf(dir, "server", certtest.LoopbackServer)
	require.NoError(t, err)
	return debugCerts{dir: dir, ca: caFile, cert: cert, key: key, authority: ca}
}

// client returns explain's options for a client certificate named cn.
func (c debugCerts) client(t *testing.T, addr, cn string) cli.ExplainOptions {
	t.Helper()
	cert, key, err := c.authority.WriteLeaf(c.dir, cn, certtest.Leaf{CommonName: cn})
	require.NoError(t, err)
	return cli.ExplainOptions{Addr: addr, Cert: cert, Key: key, CA: c.ca}
}

// debugGet GETs path from the debug endpoint o names, over the demo's
// own client (a unix socket, or mutual TLS).
func debugGet(t *testing.T, o cli.ExplainOptions, path string) (int, string, error) {
	t.Helper()
	client, base, err := debugClient(o)
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), nil
}

// TestA1_DebugPagesAreDecidedByTheAPIRules: the daemon serves its debug
// pages on a unix socket and, with mutual TLS, on loopback TCP, each page
// decided by the API's rule file (testdata/rules.yaml: anyone reads
// explain, graph and health; the certificate "operator" everything). The
// socket's user (known by its uid) and the certificate "viewer" get the
// graph and a 403 naming them and the page for the flight recorder and
// the profiles, with nothing of the page in it; "operator" takes a
// recording. A client without a certificate of the CA gets no
// connection. Each denial is an audit record.
func TestA1_DebugPagesAreDecidedByTheAPIRules(t *testing.T) {
	certs := newDebugCerts(t)
	dir := t.TempDir()
	socket := filepath.Join(dir, "debug.sock")
	cfg := sampleConfig(t)
	cfg.API = apiConfig{Rules: "testdata/rules.yaml", AuditLog: filepath.Join(dir, "audit.log")}
	cfg.Debug = cli.DebugOptions{Socket: socket, Addr: "127.0.0.1:0", Cert: certs.cert, Key: certs.key, ClientCA: certs.ca}
	d, _ := startDaemon(t, cfg)
	tcp := d.DebugAddr().String()
	user := fmt.Sprintf("uid=%d", os.Getuid())

	viewer, operator := certs.client(t, tcp, "viewer"), certs.client(t, tcp, "operator")
	for _, door := range []struct {
		who string
		o   cli.ExplainOptions
	}{{user, cli.ExplainOptions{Addr: socket}}, {`certificate "CN=viewer"`, viewer}} {
		code, body, err := debugGet(t, door.o, "/debug/graph?format=json")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, code, "%s reads the graph: %s", door.who, body)
		assert.Contains(t, body, "LinkApplyController")

		code, body, err = debugGet(t, door.o, "/debug/recording/?format=text")
		require.NoError(t, err)
		assert.Equal(t, http.StatusForbidden, code, door.who)
		assert.Equal(t, "denied: identity "+door.who+" has no role granting the recording pages\n", body, "the reason, and nothing of the recording")
		code, body, err = debugGet(t, door.o, "/debug/pprof/goroutine?debug=1")
		require.NoError(t, err)
		assert.Equal(t, http.StatusForbidden, code, door.who)
		assert.Equal(t, "denied: identity "+door.who+" has no role granting the pprof pages\n", body)
	}

	code, body, err := debugGet(t, operator, "/debug/recording/?format=text")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "LinkSpec", "the operator's recording holds the intent")
	code, _, err = debugGet(t, operator, "/debug/pprof/goroutine?debug=1")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)

	// No client certificate: no connection, nothing served.
	noCert := &http.Client{Timeout: waitFor, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certs.authority.Pool, MinVersion: tls.VersionTLS13}}}
	defer noCert.CloseIdleConnections()
	resp, err := noCert.Get("https://" + tcp + "/debug/graph")
	if err == nil {
		_ = resp.Body.Close()
	}
	require.Error(t, err, "no client certificate")
	assert.Contains(t, err.Error(), "certificate required")

	audit, err := os.ReadFile(cfg.API.AuditLog)
	require.NoError(t, err)
	assert.Contains(t, string(audit), `"page":"recording"`, "each denial is audited")
	assert.Contains(t, string(audit), `CN=viewer`)
}

// TestA1_DemoExplainReachesTheDebugDoorsWithCredentials runs the real
// demo binary with its built-in rules (its own uid may do everything,
// nobody else anything) and its debug pages on a unix socket and on
// loopback TCP with mutual TLS, and the real demo explain against each:
// over the socket the user is the agent's own uid, allowed; over TLS a
// client certificate is nobody the rules know, and explain prints the
// 403's reason and exits 1. The socket's user takes a recording too.
func TestA1_DemoExplainReachesTheDebugDoorsWithCredentials(t *testing.T) {
	bin := buildDemo(t)
	certs := newDebugCerts(t)
	data := t.TempDir()
	socket := filepath.Join(data, "debug.sock")
	out := newLineWatcher(regexp.MustCompile(`debug endpoint listening on https://(127\.0\.0\.1:\d+)/debug/ with mutual TLS, access by the built-in rules`))
	cmd := exec.CommandContext(t.Context(), bin, "run", "--data-dir", data, "--api-socket", "none", "--flap=false", "--apply-failures", "0",
		"--delete-link", "none", "--debug-socket", socket, "--debug-addr", "127.0.0.1:0",
		"--debug-cert", certs.cert, "--debug-key", certs.key, "--debug-client-ca", certs.ca)
	cmd.Stdout, cmd.Stderr = out, out
	p := startProcess(t, cmd)
	var tcp string
	select {
	case tcp = <-out.found:
	case <-p.done:
		t.Fatalf("the demo exited: %v\n%s", p.err, out.String())
	case <-time.After(waitFor):
		t.Fatalf("no debug address within %s:\n%s", waitFor, out.String())
	}

	explain := func(args ...string) (string, string, int) {
		var so, se bytes.Buffer
		c := exec.CommandContext(t.Context(), bin, append([]string{"explain"}, args...)...)
		c.Stdout, c.Stderr = &so, &se
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return so.String(), se.String(), code
	}
	so, se, code := explain("--addr", socket, "controller", "LinkApplyController")
	require.Zero(t, code, se)
	assert.Contains(t, so, "LinkApplyController")

	viewer := certs.client(t, tcp, "viewer")
	_, se, code = explain("--addr", tcp, "--client-certificate", viewer.Cert, "--client-key", viewer.Key, "--certificate-authority", certs.ca,
		"controller", "LinkApplyController")
	assert.Equal(t, 1, code)
	assert.Equal(t, "demo: explain: 403 Forbidden: denied: identity certificate \"CN=viewer\" has no role granting the explain pages\n", se)
	_, se, code = explain("--addr", tcp, "controller", "LinkApplyController")
	assert.Equal(t, 1, code, "plain HTTP to the TLS door")
	assert.NotEmpty(t, se)

	code, body, err := debugGet(t, cli.ExplainOptions{Addr: socket}, "/debug/recording/")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, body)
	assert.NotEmpty(t, body, "a recording")
	code, body, err = debugGet(t, viewer, "/debug/recording/")
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, "denied: identity certificate \"CN=viewer\" has no role granting the recording pages\n", body)
	assert.Empty(t, warnings(out.String()), "authenticated doors warn of nothing")
}

// TestA1_BadDebugFlagsFailBeforeAnythingIsServed: a rule file that is
// missing or wrong, a certificate that cannot be read, a certificate
// without its key, TLS files for a unix socket and a debug address
// without TLS nor consent fail at start with an error naming the flag or
// the file: no socket is created, no audit log written.
func TestA1_BadDebugFlagsFailBeforeAnythingIsServed(t *testing.T) {
	certs := newDebugCerts(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("roles:\n  - name: r\n    pages: [nope]\n"), 0o600))
	for name, tt := range map[string]struct {
		args []string
		code int
		want string
	}{
		"missing rules":     {[]string{"--rules", "/nonexistent/rules.yaml"}, 1, "--rules: open /nonexistent/rules.yaml"},
		"wrong rules":       {[]string{"--rules", bad}, 1, bad + ":3:"},
		"unreadable cert":   {[]string{"--debug-addr", "127.0.0.1:0", "--debug-cert", "/nonexistent/c.pem", "--debug-key", certs.key, "--debug-client-ca", certs.ca}, 1, "--debug-cert /nonexistent/c.pem"},
		"a cert, no key":    {[]string{"--debug-addr", "127.0.0.1:0", "--debug-cert", certs.cert, "--debug-client-ca", certs.ca}, 2, "give --debug-cert, --debug-key and --debug-client-ca"},
		"TLS on the socket": {[]string{"--debug-cert", certs.cert, "--debug-key", certs.key, "--debug-client-ca", certs.ca}, 2, "are for --debug-addr"},
		"no lock":           {[]string{"--debug-addr", "127.0.0.1:0"}, 2, "--debug-insecure"},
	} {
		t.Run(name, func(t *testing.T) {
			data := t.TempDir()
			socket := filepath.Join(data, "debug.sock")
			var stdout, stderr syncBuffer
			args := append([]string{"run", "--data-dir", data, "--api-socket", "none", "--debug-socket", socket, "--duration", "1h"}, tt.args...)
			assert.Equal(t, tt.code, mainWithExit(args, &stdout, &stderr))
			assert.Contains(t, stderr.String(), tt.want)
			assert.NoFileExists(t, socket, "nothing served")
			assert.NoFileExists(t, filepath.Join(data, "audit.log"), "nothing written")
			assert.NotContains(t, stdout.String(), "listening")
			t.Logf("%s", strings.TrimSpace(stderr.String()))
		})
	}
}

// TestA1_AnUnauthenticatedDebugDoorIsWarned: a --debug-addr served
// without authentication, on loopback (--debug-insecure) or on every
// interface (--debug-allow-remote), serves every page to whoever
// connects, and the log says so at WARN.
func TestA1_AnUnauthenticatedDebugDoorIsWarned(t *testing.T) {
	for _, o := range []cli.DebugOptions{{Addr: "127.0.0.1:0", Insecure: true}, {Addr: "0.0.0.0:0", AllowRemote: true}} {
		cfg := sampleConfig(t)
		cfg.Debug = o
		d, log := startDaemon(t, cfg)
		port := d.DebugAddr().(*net.TCPAddr).Port
		code, body, err := debugGet(t, cli.ExplainOptions{Addr: fmt.Sprintf("127.0.0.1:%d", port)}, "/debug/recording/?format=text")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, code, "%+v: %s", o, body)
		var warned []string
		for _, w := range warnings(log.String()) {
			if strings.Contains(w, "WITHOUT authentication") {
				warned = append(warned, w)
			}
		}
		assert.Len(t, warned, 1, "%+v: one warning: %s", o, log.String())
	}
}
