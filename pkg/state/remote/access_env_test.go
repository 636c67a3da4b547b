package remote_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/internal/certtest"
	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// The sensitive type of the access tests.
type secretSpec struct {
	Key string `json:"key"`
}

type secretDef struct{}

const secretType = "Secrets.test.resgraph.dev"

func (secretDef) Definition() typed.Definition {
	return typed.Definition{Type: secretType, DefaultNamespace: "vault"}
}

func (secretDef) ResourceDefinition() definition.Definition {
	return definition.Definition{Aliases: []string{"secrets"}, Sensitive: true}
}

type secret = typed.Resource[secretSpec, secretDef]

func newSecret(ns, id, key string) *secret {
	return typed.New[secretSpec, secretDef](resource.NewMetadata(ns, secretType, id, resource.VersionUndefined), secretSpec{Key: key})
}

// accessRegistry knows the conformance types and the secrets.
func accessRegistry() *codec.Registry {
	reg := registry()
	codec.MustRegister[secretSpec, secretDef](reg)
	return reg
}

// The namespaces of the access tests: "one" (the reader's), "two" (no
// reader's), "vault" (secrets), "bystander" (the bystander's own).
var hostileNamespaces = []string{"one", "two", "vault", "bystander"}

// accessRules: reader-one reads namespace one, the writer (the bystander)
// does everything but see secrets, the keeper reads secrets by name. The
// unix peer (this test's process) gets the role named by %s, if any.
const accessRules = `roles:
  - name: reader-one
    grants:
      - verbs: [get, list, watch]
        namespaces: [one]
        types: ["*"]
  - name: writer
    grants:
      - verbs: ["*"]
        namespaces: ["*"]
        types: ["*"]
    pages: ["*"]
  - name: keeper
    grants:
      - verbs: [get, list, watch]
        namespaces: ["*"]
        types: [secrets]
bindings:
  - role: reader-one
    to: [{commonName: reader}]
  - role: writer
    to: [{commonName: bystander}]
  - role: keeper
    to: [{commonName: keeper}]
%s`

// accessEnv is a daemon's state served by remote.Serve on a unix socket
// (unix peer credentials) and on loopback TCP (mutual TLS), with the
// access rules above, auditing every read.
type accessEnv struct {
	st     state.State
	ca     *certtest.CA
	policy *access.Policy
	audit  *observer.ObservedLogs
	unix   string // dial targets
	tcp    string
	stop   func()
}

// newAccessEnv serves a fresh state made with opts; unixRole is the role
// of this process's uid over the unix socket ("" for none).
func newAccessEnv(t testing.TB, unixRole string, opts ...inmem.Option) *accessEnv {
	t.Helper()
	bind := ""
	if unixRole != "" {
		bind = fmt.Sprintf("  - role: %s\n    to: [{uid: %d}]\n", unixRole, os.Getuid())
	}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(accessRules, bind)), 0o600))
	reg := accessRegistry()
	core, logs := observer.New(zap.InfoLevel)
	pol, err := access.LoadFile(path, reg.Definitions(), access.WithAudit(zap.New(core)), access.WithReadSampling(1))
	require.NoError(t, err)
	ca, err := certtest.NewCA("access tests")
	require.NoError(t, err)
	srvCfg, err := ca.ServerConfig()
	require.NoError(t, err)
	mtls, err := access.MutualTLS(srvCfg)
	require.NoError(t, err)

	e := &accessEnv{st: inmem.NewState(opts...), ca: ca, policy: pol, audit: logs}
	srv := remote.NewServer(e.st, reg)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, door := range []struct {
		lis  string
		auth access.Authenticator
	}{{"unix", access.PeerCredentials()}, {"tcp", mtls}} {
		lis := listen(t, door.lis)
		if door.lis == "unix" {
			e.unix = target(lis)
		} else {
			e.tcp = target(lis)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			register := func(r grpc.ServiceRegistrar) {
				srv.Register(r)
				healthpb.RegisterHealthServer(r, health.NewServer())
			}
			err := remote.Serve(ctx, lis, register, remote.WithAuthenticator(door.auth, pol), remote.WithGRPCOptions(srv.GRPCServerOptions()...),
				remote.WithPages(map[string]access.Page{"/grpc.health.v1.Health/Check": access.PageHealth}))
			if err != nil {
				t.Errorf("serve %s: %v", door.lis, err)
			}
		}()
	}
	e.stop = sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(e.stop)
	return e
}

// unixConn returns a connection over the unix socket: its identity is
// this process's uid.
func (e *accessEnv) unixConn(t testing.TB) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(e.unix, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// certConn returns a connection over mutual TLS presenting a certificate
// of the env's CA for cn (none when cn is empty).
func (e *accessEnv) certConn(t testing.TB, cn string) *grpc.ClientConn {
	t.Helper()
	var cert tls.Certificate
	if cn != "" {
		var err error
		cert, err = e.ca.Issue(certtest.Leaf{CommonName: cn})
		require.NoError(t, err)
	}
	return tlsConn(t, e.tcp, e.ca.ClientConfig(cert))
}

func tlsConn(t testing.TB, addr string, cfg *tls.Config) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// client returns a remote client of conn.
func accessClient(t testing.TB, conn *grpc.ClientConn) state.State {
	t.Helper()
	st, err := remote.NewClient(conn, accessRegistry(), remote.WithReconnectBackoff(5*time.Millisecond, 50*time.Millisecond))
	require.NoError(t, err)
	return st
}

// seed creates a resource a (value 1) in every namespace of the tests,
// and a secret k in vault, and returns the state's contents.
func (e *accessEnv) seed(t testing.TB) map[string]string {
	t.Helper()
	ctx := testCtx(t)
	for _, ns := range hostileNamespaces {
		require.NoError(t, e.st.Create(ctx, conformance.NewIntResource(ns, "a", 1)))
	}
	require.NoError(t, e.st.Create(ctx, newSecret("vault", "k", "hunter2")))
	return e.contents(t)
}

// contents returns the version and phase of every resource of the tests'
// kinds but the bystander's own (b), by pointer.
func (e *accessEnv) contents(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, ns := range hostileNamespaces {
		for _, typ := range []string{conformance.IntResourceType, secretType} {
			list, err := e.st.List(context.Background(), resource.NewKind(ns, typ))
			require.NoError(t, err)
			for _, r := range list.Items {
				if md := r.Metadata(); md.Namespace() != "bystander" || md.ID() != "b" {
					out[resource.String(r)] = md.Version().String() + " " + md.Phase().String()
				}
			}
		}
	}
	return out
}

// noLeaks checks, when the test ends (after every other cleanup: the
// env's servers and connections are gone), that no goroutine it started
// is left.
func noLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		goleak.VerifyNone(t, ignore, goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"))
	})
}

// audited returns the audit records of identity with decision.
func (e *accessEnv) audited(identity, decision string) []observer.LoggedEntry {
	return e.audit.Filter(func(le observer.LoggedEntry) bool {
		f := le.ContextMap()
		return f["identity"] == identity && f["decision"] == decision
	}).All()
}

// bystander is a well-behaved client: it reads and updates its own
// resource, and measures how long each round takes.
type bystander struct {
	st  state.State
	ptr resource.Pointer
}

// newBystander connects the writer over mutual TLS.
func (e *accessEnv) newBystander(t *testing.T) *bystander {
	t.Helper()
	b := &bystander{st: accessClient(t, e.certConn(t, "bystander")), ptr: resource.NewPointer("bystander", conformance.IntResourceType, "b")}
	require.NoError(t, b.st.Create(testCtx(t), conformance.NewIntResource("bystander", "b", 0)))
	return b
}

// round makes one round of a Get and an Update of its resource and
// returns how long it took.
func (b *bystander) round(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	r, err := b.st.Get(ctx, b.ptr)
	if err != nil {
		return 0, fmt.Errorf("bystander get: %w", err)
	}
	r.(*conformance.IntResource).TypedSpec().Value++
	if err := b.st.Update(ctx, r); err != nil {
		return 0, fmt.Errorf("bystander update: %w", err)
	}
	return time.Since(start), nil
}

// rounds makes rounds until it made n and done reports true; every one
// must succeed.
func (b *bystander) rounds(ctx context.Context, n int, done func() bool) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for len(out) < n || !done() {
		d, err := b.round(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, d)
	}
	return out, nil
}

// unaffected checks that the bystander's work is done, every request of
// it succeeding, before and while attack runs: attack repeats its passes
// until its context is done, calling passed after each, and the
// bystander goes on until the attack made at least one whole pass. It
// reports the bystander's p99 latency in both phases. The check is that
// the work completes and succeeds; the latencies are reported, not
// compared (a loaded machine makes them noisy).
func (b *bystander) unaffected(t *testing.T, attack func(ctx context.Context, passed func())) {
	t.Helper()
	n := hostileRounds(t)
	ctx := testCtx(t)
	before, err := b.rounds(ctx, n, func() bool { return true })
	require.NoError(t, err)
	actx, stop := context.WithCancel(ctx)
	var passes atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		attack(actx, func() { passes.Add(1) })
	}()
	during, err := b.rounds(ctx, n, func() bool { return passes.Load() > 0 })
	stop()
	<-done
	require.NoError(t, err, "the bystander's requests all succeed during the attack")
	t.Logf("bystander: get+update rounds, p99 before %v (%d rounds), during %v (%d rounds, %d attack passes)",
		p99(before), len(before), p99(during), len(during), passes.Load())
}

// hostileRoundsEnv sets how many rounds the bystander makes before and
// during each attack (default 60): make fuzz runs the hostile suite
// longer with it.
const hostileRoundsEnv = "RESGRAPH_HOSTILE_ROUNDS"

func hostileRounds(t *testing.T) int {
	s := os.Getenv(hostileRoundsEnv)
	if s == "" {
		return 60
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, "$%s", hostileRoundsEnv)
	require.Positive(t, n, "$%s", hostileRoundsEnv)
	return n
}

// p99 returns the 99th percentile of ds (nearest rank).
func p99(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)*99+99)/100-1]
}

// stringField is a zap string field, for filtering audit records.
func stringField(key, value string) zap.Field { return zap.String(key, value) }
