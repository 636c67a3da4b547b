package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/internal/certtest"
)

// tlsFiles are a mutual-TLS client's files for resgraphctl's flags.
type tlsFiles struct{ cert, key, ca string }

func (f tlsFiles) flags() []string {
	return []string{"--client-certificate", f.cert, "--client-key", f.key, "--certificate-authority", f.ca}
}

// TestA1_DemoRulesReadForTheUserWriteForTheOperator: the demo run with
// the rules of cmd/demo/testdata/rules.yaml serves its API on its unix
// socket and, with mutual TLS, on loopback TCP. The resgraphctl user on
// the socket (known by its uid) and a client certificate "viewer" read
// but may not write: resgraphctl prints the denial naming the identity,
// the verb and the resource, and nothing is written; the certificate
// "operator" writes. Every write and every denial is a line of audit.log
// in the demo's data directory.
func TestA1_DemoRulesReadForTheUserWriteForTheOperator(t *testing.T) {
	dir := t.TempDir()
	ca, err := certtest.NewCA("demo clients")
	require.NoError(t, err)
	caFile, err := ca.WriteCA(dir, "ca.pem")
	require.NoError(t, err)
	srvCert, srvKey, err := ca.WriteLeaf(dir, "server", certtest.LoopbackServer)
	require.NoError(t, err)
	client := func(cn string) tlsFiles {
		cert, key, err := ca.WriteLeaf(dir, cn, certtest.Leaf{CommonName: cn})
		require.NoError(t, err)
		return tlsFiles{cert, key, caFile}
	}
	viewer, operator := client("viewer"), client("operator")

	data := filepath.Join(dir, "data")
	d := startDemo(t, data, append([]string{"--rules", "../demo/testdata/rules.yaml", "--api-addr", "127.0.0.1:0",
		"--api-cert", srvCert, "--api-key", srvKey, "--api-client-ca", caFile}, quietDemo...)...)
	addrRE := regexp.MustCompile(`API listening on (127\.0\.0\.1:\d+) with mutual TLS`)
	var tcp string
	d.stdout.waitFor(t, 0, "the TCP API", func(l string) bool {
		if m := addrRE.FindStringSubmatch(l); m != nil {
			tcp = m[1]
		}
		return tcp != ""
	})
	waitReady(t, d.socket)

	file := filepath.Join(dir, "eth9.yaml")
	require.NoError(t, os.WriteFile(file, []byte("metadata: {type: linkspec, id: eth9}\nspec: {MTU: 1400}\n"), 0o600))
	user := fmt.Sprintf("uid=%d", os.Getuid())

	// The user of the socket reads, and may not write.
	out, errOut, code := ctl(t, d.socket, "get", "linkspecs")
	require.Zero(t, code, errOut)
	assert.Contains(t, out, "eth0")
	_, errOut, code = ctl(t, d.socket, "create", "-f", file)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "denied: identity "+user)
	assert.Contains(t, errOut, "has no role granting create on LinkSpecs.net.resgraph.dev(config)")
	t.Logf("resgraphctl create as the socket's user: %s", strings.TrimSpace(errOut))
	_, errOut, code = ctl(t, d.socket, "delete", "linkspec", "eth1")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "denied: identity "+user)

	// So does the viewer's certificate.
	out, errOut, code = ctl(t, tcp, append(viewer.flags(), "get", "linkspec", "eth0")...)
	require.Zero(t, code, errOut)
	assert.Contains(t, out, "eth0")
	_, errOut, code = ctl(t, tcp, append(viewer.flags(), "create", "-f", file)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `denied: identity certificate "CN=viewer"`)
	_, _, code = ctl(t, d.socket, "get", "linkspec", "eth9")
	assert.Equal(t, 1, code, "nothing written")

	// The operator writes.
	out, errOut, code = ctl(t, tcp, append(operator.flags(), "create", "-f", file)...)
	require.Zero(t, code, errOut)
	assert.Equal(t, "linkspec/eth9 created\n", out)
	out, errOut, code = ctl(t, d.socket, "get", "linkspec", "eth9")
	require.Zero(t, code, errOut)
	assert.Contains(t, out, "eth9")
	// Without a certificate of the CA, no connection; without TLS flags
	// at all, the error says the daemon may want them (rule CT5).
	_, errOut, code = ctl(t, tcp, "get", "linkspecs")
	assert.Equal(t, 1, code, errOut)
	assert.True(t, strings.HasPrefix(errOut, "resgraphctl: cannot reach the daemon at "+tcp+": "), errOut)
	assert.True(t, strings.HasSuffix(errOut, "; a daemon that serves mutual TLS there needs --client-certificate, --client-key and --certificate-authority)\n"), errOut)
	assert.NotContains(t, errOut, `desc = "`, "gRPC's wrapping is left out")

	d.stop(t)
	records := readAudit(t, filepath.Join(data, "audit.log"))
	var denied, written, checked []map[string]any
	for _, r := range records {
		switch {
		case r["decision"] == "denied":
			denied = append(denied, r)
		case r["verb"] == "create" && r["error"] == "remote: checked only (CheckWrite): nothing written":
			checked = append(checked, r)
		case r["verb"] == "create":
			written = append(written, r)
		}
	}
	require.Len(t, checked, 1, "the operator's file was checked first (a dry run, rule CT6), and that is one record")
	assert.Nil(t, checked[0]["version"], "a check writes no version")
	require.Len(t, written, 1, "the operator's create is one record")
	assert.Equal(t, `certificate "CN=operator"`, written[0]["identity"])
	assert.Equal(t, "eth9", written[0]["id"])
	assert.NotEmpty(t, written[0]["version"], "with the version it committed")
	assert.GreaterOrEqual(t, len(denied), 3, "each denial is a record")
}

// readAudit reads the JSON lines of an audit log.
func readAudit(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
		out = append(out, r)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out, "the audit log has records")
	return out
}
