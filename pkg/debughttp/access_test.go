package debughttp_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/internal/certtest"
	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/debughttp"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// The sensitive type of the access tests, and a QController whose items
// of it fail (so that the trace and the explanations are about them).
type secretSpec struct{ Key string }
type secretDef struct{}

const secretType = "Secrets.test.resgraph.dev"

func (secretDef) Definition() typed.Definition {
	return typed.Definition{Type: secretType, DefaultNamespace: "vault"}
}

type secret = typed.Resource[secretSpec, secretDef]

type vault struct{}

func (vault) Name() string { return "Vault" }
func (vault) Settings() controller.QSettings {
	return controller.QSettings{Inputs: []controller.Input{controller.InputFor[*secret](controller.InputQPrimary)}}
}
func (vault) Reconcile(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
	return errors.New("sealed")
}
func (vault) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// debugRules: the operator sees the graph, explanations and health (and
// reads every type but the sensitive one), the keeper explanations and
// secrets by name, the profiler the profiles. This process's uid (over a
// unix socket) is an operator.
const debugRules = `roles:
  - name: operator
    grants:
      - verbs: [get, list, watch]
        namespaces: ["*"]
        types: ["*"]
    pages: [graph, explain, health]
  - name: keeper
    grants:
      - verbs: [get]
        namespaces: [vault]
        types: [%[1]s]
    pages: [explain]
  - name: profiler
    pages: [pprof]
bindings:
  - role: operator
    to: [{commonName: operator}, {uid: %[2]d}]
  - role: keeper
    to: [{commonName: keeper}]
  - role: profiler
    to: [{commonName: profiler}]
`

// debugEnv is a Runtime with failing items of a plain and a sensitive
// type, its debug handler made WithAccess, served with mutual TLS on
// loopback and with peer credentials on a unix socket.
type debugEnv struct {
	ca        *certtest.CA
	tcp, unix string
	audit     *observer.ObservedLogs
}

func newDebugEnv(t *testing.T) *debugEnv {
	t.Helper()
	e := runtimetest.Start(t, runtimetest.WithControllers(idle{}), runtimetest.WithQControllers(failing{}, vault{}),
		runtimetest.WithLogger(zap.NewNop()), runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Hour, time.Hour)))
	runtimetest.Settle(t, e.Runtime)
	runtimetest.Create(t, e.State, typed.NewDefault[itemSpec, itemDef]("one", itemSpec{}))
	runtimetest.Create(t, e.State, typed.NewDefault[secretSpec, secretDef]("s1", secretSpec{Key: "k"}))
	runtimetest.Settle(t, e.Runtime)

	defs := definition.NewRegistry()
	require.NoError(t, defs.Add(definition.Definition{Type: "Items.test.resgraph.dev", DefaultNamespace: "default"}))
	require.NoError(t, defs.Add(definition.Definition{Type: secretType, DefaultNamespace: "vault", Aliases: []string{"secrets"}, Sensitive: true}))
	rules, err := access.ParseRules("rules.yaml", fmt.Appendf(nil, debugRules, "secrets", os.Getuid()), defs)
	require.NoError(t, err)
	core, logs := observer.New(zap.InfoLevel)
	pol, err := access.NewPolicy(defs, rules, access.WithAudit(zap.New(core)))
	require.NoError(t, err)
	h := debughttp.New(e.Runtime.Observe(), debughttp.WithAccess(pol))

	ca, err := certtest.NewCA("debug tests")
	require.NoError(t, err)
	cfg, err := ca.ServerConfig()
	require.NoError(t, err)
	mtls, err := access.MutualTLS(cfg)
	require.NoError(t, err)
	env := &debugEnv{ca: ca, audit: logs}
	tcp, err := debughttp.Listen("127.0.0.1:0")
	require.NoError(t, err)
	env.tcp = "https://" + tcp.Addr().String()
	serveUntilCleanup(t, tcp, h, debughttp.WithAuthenticator(mtls, pol))
	env.unix = filepath.Join(t.TempDir(), "debug.sock")
	unix, err := net.Listen("unix", env.unix)
	require.NoError(t, err)
	serveUntilCleanup(t, unix, h, debughttp.WithAuthenticator(access.PeerCredentials(), pol))
	return env
}

// serveUntilCleanup serves h on ln with opts until the test ends.
func serveUntilCleanup(t *testing.T, ln net.Listener, h http.Handler, opts ...debughttp.ServeOption) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- debughttp.Serve(ctx, ln, h, opts...) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done, "Serve returns nil after its context is done")
	})
}

// client returns an HTTP client presenting a certificate of the env's CA
// for cn (none when cn is empty), without keep-alive.
func (e *debugEnv) client(t *testing.T, cn string) *http.Client {
	t.Helper()
	var cert tls.Certificate
	if cn != "" {
		var err error
		cert, err = e.ca.Issue(certtest.Leaf{CommonName: cn})
		require.NoError(t, err)
	}
	tr := &http.Transport{DisableKeepAlives: true, TLSClientConfig: e.ca.ClientConfig(cert)}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// unixClient returns an HTTP client over the env's unix socket.
func (e *debugEnv) unixClient() *http.Client {
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", e.unix)
	}}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// fetch GETs base+path with c: the status and the body, or the error.
func fetch(t *testing.T, c *http.Client, url string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), nil
}

func mustFetch(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	code, body, err := fetch(t, c, url)
	require.NoError(t, err)
	return code, body
}

func TestA1_DebugPagesNeedTheirRole(t *testing.T) {
	e := newDebugEnv(t)
	operator, profiler := e.client(t, "operator"), e.client(t, "profiler")
	for _, c := range []struct {
		client *http.Client
		path   string
		code   int
		body   string
	}{
		{operator, "/debug/graph", http.StatusOK, "digraph"},
		{operator, "/debug/controllers?format=json", http.StatusOK, "Vault"},
		{operator, "/readyz", http.StatusOK, ""},
		{operator, "/debug/pprof/", http.StatusForbidden, `denied: identity certificate "CN=operator" has no role granting the pprof pages`},
		{operator, "/debug/vars", http.StatusForbidden, "pprof"},
		{profiler, "/debug/pprof/", http.StatusOK, "goroutine"},
		{profiler, "/debug/graph", http.StatusForbidden, "no role granting the graph pages"},
		{profiler, "/debug/graph/live/live.js", http.StatusForbidden, "graph"},
		{profiler, "/debug/explain?controller=Vault", http.StatusForbidden, "explain"},
		{profiler, "/debug/trace", http.StatusForbidden, "explain"},
		{e.client(t, "stranger"), "/debug/", http.StatusForbidden, `denied: identity certificate "CN=stranger" has no role`},
		{e.unixClient(), "/debug/graph", http.StatusOK, "digraph"},
		{e.unixClient(), "/debug/pprof/", http.StatusForbidden, fmt.Sprintf("denied: identity uid=%d", os.Getuid())},
	} {
		base := e.tcp
		if c.client.Transport.(*http.Transport).DialContext != nil {
			base = "http://unix"
		}
		code, body := mustFetch(t, c.client, base+c.path)
		assert.Equal(t, c.code, code, "%s: %s", c.path, body)
		assert.Contains(t, body, c.body, c.path)
	}

	_, index := mustFetch(t, operator, e.tcp+"/debug/")
	assert.Contains(t, index, `href="/debug/graph"`)
	assert.NotContains(t, index, "/debug/pprof/", "the index lists only the pages the subject may open")

	denials := e.audit.FilterField(zap.String("decision", "denied")).All()
	assert.NotEmpty(t, denials, "every denial is audited")
}

func TestA1_DebugRefusesUnauthenticatedPeers(t *testing.T) {
	e := newDebugEnv(t)
	other, err := certtest.NewCA("another CA")
	require.NoError(t, err)
	cert, err := other.Issue(certtest.Leaf{CommonName: "operator"})
	require.NoError(t, err)
	expired, err := e.ca.Issue(certtest.Leaf{CommonName: "operator", NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	require.NoError(t, err)
	for name, cfg := range map[string]*tls.Config{
		"no certificate":           e.ca.ClientConfig(tls.Certificate{}),
		"a certificate of another": e.ca.ClientConfig(cert),
		"an expired certificate":   e.ca.ClientConfig(expired),
	} {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: cfg}, Timeout: 30 * time.Second}
		code, body, err := fetch(t, c, e.tcp+"/debug/graph")
		assert.Error(t, err, "%s: the connection is refused, not served (%d %s)", name, code, body)
	}
	// The server audits a refusal after its TLS alert, which the client
	// may see first: wait for the records.
	refusals := func() []observer.LoggedEntry { return e.audit.FilterField(zap.String("rule", "authentication")).All() }
	require.Eventually(t, func() bool { return len(refusals()) >= 3 }, 30*time.Second, 2*time.Millisecond)
	refused := refusals()
	assert.Len(t, refused, 3, "each refused connection is one audit record")
	for _, r := range refused {
		assert.Equal(t, "debug", r.ContextMap()["door"])
	}
}

func TestA1_DebugServeRefusesNonLoopbackWithoutAuthenticator(t *testing.T) {
	h := debughttp.New(runtimetest.Start(t, runtimetest.WithLogger(zap.NewNop())).Runtime.Observe())
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	// A context done already: Serve refuses before it looks at it, or
	// returns nil at once if it served.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	err = debughttp.Serve(done, ln, h)
	require.Error(t, err)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.Contains(t, err.Error(), "not loopback")
	_, aerr := ln.Accept()
	assert.ErrorIs(t, aerr, net.ErrClosed, "the refused listener is closed")

	ca, err := certtest.NewCA("refusals")
	require.NoError(t, err)
	cfg, err := ca.ServerConfig()
	require.NoError(t, err)
	mtls, err := access.MutualTLS(cfg)
	require.NoError(t, err)
	pol, err := access.NewPolicy(definition.NewRegistry(), access.Rules{})
	require.NoError(t, err)
	for name, opts := range map[string][]debughttp.ServeOption{
		"authenticator and insecure":  {debughttp.WithAuthenticator(mtls, pol), debughttp.Insecure()},
		"authenticator without rules": {debughttp.WithAuthenticator(mtls, nil)},
		"handler made without access": {debughttp.WithAuthenticator(mtls, pol)},
	} {
		ln, err := debughttp.Listen("127.0.0.1:0")
		require.NoError(t, err)
		err = debughttp.Serve(done, ln, h, opts...)
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
	}

	// Insecure serves everyone, and says so.
	ln, err = net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	core, logs := observer.New(zap.InfoLevel)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- debughttp.Serve(ctx, ln, h, debughttp.Insecure(), debughttp.WithServeLogger(zap.New(core)))
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	code, _ := mustFetch(t, &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, fmt.Sprintf("http://127.0.0.1:%d/debug/", port))
	assert.Equal(t, http.StatusOK, code)
	stop()
	require.NoError(t, <-served)
	warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0].Message, "WITHOUT authentication")
}

func TestA2_DebugExplainAndTraceHideSensitiveTypes(t *testing.T) {
	e := newDebugEnv(t)
	operator, keeper := e.client(t, "operator"), e.client(t, "keeper")
	secretTraced := func(c *http.Client) (plain, secret int) {
		code, body := mustFetch(t, c, e.tcp+"/debug/trace")
		require.Equal(t, http.StatusOK, code, body)
		recs, err := trace.ReadJSONLines(strings.NewReader(body))
		require.NoError(t, err)
		for _, r := range recs {
			switch {
			case r.Resource.Type == secretType || r.Cause.Type == secretType:
				secret++
			case r.Controller == "Failing<Q>":
				plain++
			}
		}
		return plain, secret
	}
	plain, secret := secretTraced(operator)
	assert.NotZero(t, plain, "the operator sees the trace of the plain type")
	assert.Zero(t, secret, "the operator sees nothing of the secrets in the trace")
	_, secret = secretTraced(keeper)
	assert.NotZero(t, secret, "the keeper, granted the type by name, sees them")

	res := e.tcp + "/debug/explain?format=json&resource=vault/" + secretType + "/s1"
	code, body := mustFetch(t, operator, res)
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Contains(t, body, `denied: identity certificate "CN=operator" has no role granting get on `+secretType+"(vault)")
	code, body = mustFetch(t, keeper, res)
	assert.Equal(t, http.StatusOK, code, body)

	ctrl := e.tcp + "/debug/explain?format=json&controller=Vault"
	for who, c := range map[string]*http.Client{"operator": operator, "keeper": keeper} {
		code, body := mustFetch(t, c, ctrl)
		require.Equal(t, http.StatusOK, code, body)
		var x explain.Controller
		require.NoError(t, json.Unmarshal([]byte(body), &x))
		if who == "operator" {
			assert.NotContains(t, body, `"s1"`, "the operator's explanation leaves the secret out")
			assert.NotEmpty(t, x.Notes)
		} else {
			assert.Contains(t, body, `"s1"`, "the keeper's explanation names the secret")
		}
	}
}
