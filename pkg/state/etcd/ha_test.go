package etcd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
	"github.com/resgraph/resgraph/pkg/state/etcd/internal/etcdtest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// The high-availability tests: replicas of a Runtime in separate OS
// processes (this test binary started again with envHAChild set), each
// running the chain A→B→C→D→E with input finalizers under leadership
// (per Runtime or per controller) on the test server, with a lease TTL of
// haTTL. A replica stamps M of every output it writes with its number, so
// that the writes of each replica can be told apart in etcd's history.
//
// A replica prints, one per line: "ready" once its Runtime runs; "role C
// R T S" whenever its controller C became leader or standby (R), in term
// T, at S (Unix ns); "first C S" when C transformed its first input after
// it started under a term (its first reconcile as a leader); and on
// SIGTERM, after its Runtime stopped, its state's counters as JSON.
const (
	envHAChild   = "RESGRAPH_ETCD_TEST_HA_CHILD"
	envHAReplica = "RESGRAPH_ETCD_TEST_HA_REPLICA"
	envHAScope   = "RESGRAPH_ETCD_TEST_HA_SCOPE"
	envHABeat    = "RESGRAPH_ETCD_TEST_HA_HEARTBEAT"
)

// haTTL is the lease TTL of the replicas: etcd's unit is the second.
const haTTL = time.Second

// haStage is a stage of the chain whose outputs carry the replica's
// number in M; armed is set when its Run starts, and the first transform
// after that reports the controller's first reconcile.
func haStage(name string, replica int, armed *atomic.Bool, report func(string, ...any)) (controller.Controller, error) {
	first := func() {
		if armed.CompareAndSwap(true, false) {
			report("first %s %d", name, time.Now().UnixNano())
		}
	}
	var c controller.Controller
	switch name {
	case "AtoB":
		c = stamped[chainADef, chainBDef](name, replica, first)
	case "BtoC":
		c = stamped[chainBDef, chainCDef](name, replica, first)
	case "CtoD":
		c = stamped[chainCDef, chainDDef](name, replica, first)
	case "DtoE":
		c = stamped[chainDDef, chainEDef](name, replica, first)
	default:
		return nil, fmt.Errorf("no chain stage %q", name)
	}
	return armedRun{Controller: c, armed: armed}, nil
}

// stamped is plusOne with input finalizers, writing M = replica.
func stamped[DI, DO typed.DefinitionProvider](name string, replica int, first func()) controller.Controller {
	type in = *typed.Resource[chainSpec, DI]
	type out = *typed.Resource[chainSpec, DO]
	return transform.NewController(transform.Settings[in, out]{
		Name: name,
		MapMetadataFunc: func(r in) out {
			return typed.NewDefault[chainSpec, DO](r.Metadata().ID(), chainSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, r in, o out) error {
			first()
			o.TypedSpec().N = r.TypedSpec().N + 1
			o.TypedSpec().M = replica
			return nil
		},
	}, transform.WithInputFinalizers())
}

// armedRun arms its controller's first-reconcile report at each start.
type armedRun struct {
	controller.Controller
	armed *atomic.Bool
}

func (a armedRun) Run(ctx context.Context, rt controller.Runtime, l *zap.Logger) error {
	a.armed.Store(true)
	return a.Controller.Run(ctx, rt, l)
}

// heartbeat is a Controller that starts a write every few milliseconds
// while it runs, each on a goroutine of its own (at most heartbeatWrites
// at once; Run waits for them before it returns): it creates a new
// resource each time (ID beat-<replica>-<run>-<n>), its value the
// replica's number times a million plus a count. A create is one fenced
// transaction, with no read before it, that outlives the term's context,
// as user code's writes may. So a leader cut off by a partition keeps
// starting fenced writes until it learns that its term ended, and each
// reaches etcd only when the partition heals, after its successor's
// election: etcd refuses them. (A single write at a time would not do: the
// one in flight when the partition begins may already have reached etcd,
// only its answer held, and the heartbeat would start no other before its
// term ended; nor would a read-then-write, whose write the Runtime refuses
// at once, without reaching etcd, once the replica knows its term ended.)
type heartbeat struct{ replica int }

// heartbeatWrites bounds the heartbeat's writes in flight.
const heartbeatWrites = 256

// heartbeatKind is the kind of heartbeat's resources.
var heartbeatKind = resource.NewKind(conformance.DefaultNamespace, conformance.IntResourceType)

// heartbeatRuns numbers the heartbeat's Runs in a replica, so that a
// restarted Run creates resources of its own.
var heartbeatRuns atomic.Int64

func (heartbeat) Name() string               { return "heartbeat" }
func (heartbeat) Inputs() []controller.Input { return nil }
func (heartbeat) Outputs() []controller.Output {
	return []controller.Output{{Type: conformance.IntResourceType, Kind: controller.OutputExclusive}}
}

func (h heartbeat) Run(ctx context.Context, rt controller.Runtime, logger *zap.Logger) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var writes sync.WaitGroup
	defer writes.Wait()
	inFlight := make(chan struct{}, heartbeatWrites)
	run := heartbeatRuns.Add(1)
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		select {
		case inFlight <- struct{}{}:
		default:
			continue // as many in flight as allowed: skip this beat
		}
		id := fmt.Sprintf("beat-%d-%d-%d", h.replica, run, i)
		value := h.replica*1_000_000 + i
		writes.Go(func() {
			defer func() { <-inFlight }()
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), childTimeout)
			defer cancel()
			err := rt.Create(wctx, typed.NewDefault[conformance.IntSpec, conformance.IntResourceDefinition](id, conformance.IntSpec{Value: value}))
			if err != nil && !state.IsFencedError(err) {
				logger.Warn("heartbeat write failed", zap.String("id", id), zap.Error(err))
			}
		})
	}
}

// haChildMain runs a replica until SIGTERM; it returns the exit code.
func haChildMain(name string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "replica %s: %v\n", name, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	logger, err := zap.NewDevelopment(zap.IncreaseLevel(zap.InfoLevel))
	if err != nil {
		return fail(err)
	}
	logger = logger.Named(name)
	replica, _ := strconv.Atoi(os.Getenv(envHAReplica))
	var outMu sync.Mutex
	report := func(format string, args ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	cli, err := etcdtest.NewClient(os.Getenv(envEndpoint))
	if err != nil {
		return fail(err)
	}
	defer cli.Close()
	var counters etcd.Counters
	prefix := os.Getenv(envPrefix)
	st, err := etcd.New(ctx, cli, registry(), etcd.WithPrefix(prefix), etcd.WithCounters(&counters), etcd.WithLogger(logger))
	if err != nil {
		return fail(err)
	}
	el, err := etcd.NewElector(ctx, cli, etcd.WithElectionPrefix(prefix), etcd.WithLeaseTTL(haTTL),
		etcd.WithReplicaName(name), etcd.WithElectorLogger(logger))
	if err != nil {
		return fail(err)
	}
	defer el.Close()
	scope := runtime.LeadPerRuntime
	if os.Getenv(envHAScope) == "controller" {
		scope = runtime.LeadPerController
	}
	rt, err := runtime.New(st, logger, runtime.WithLeadership(el, scope), runtime.WithRestartBackoff(10*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		return fail(err)
	}
	for _, s := range chainStages {
		c, err := haStage(s, replica, new(atomic.Bool), report)
		if err != nil {
			return fail(err)
		}
		if err := rt.RegisterController(c); err != nil {
			return fail(err)
		}
	}
	if os.Getenv(envHABeat) != "" {
		if err := rt.RegisterController(heartbeat{replica: replica}); err != nil {
			return fail(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	report("ready")
	// Report role changes as the statuses show them (their Since is the
	// time of the change; the poll only delays the report).
	roles := map[string]observe.Leadership{}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var runErr error
loop:
	for {
		for _, c := range rt.Observe().Controllers() {
			if l := c.Leadership; l != nil && (roles[c.Name].Role != l.Role || roles[c.Name].Since != l.Since) {
				roles[c.Name] = *l
				report("role %s %s %d %d", c.Name, l.Role, l.Term, l.Since.UnixNano())
			}
		}
		select {
		case runErr = <-done:
			break loop
		case <-tick.C:
		}
	}
	if runErr != nil {
		return fail(runErr)
	}
	if err := el.Close(); err != nil {
		logger.Warn("closing the elector", zap.Error(err))
	}
	outMu.Lock()
	defer outMu.Unlock()
	if err := json.NewEncoder(os.Stdout).Encode(haCounts{
		Writes: counters.Writes.Load(), Conflicts: counters.Conflicts.Load(), Fenced: counters.Fenced.Load(),
	}); err != nil {
		return fail(err)
	}
	return 0
}

// haCounts is what a replica reports when it stops.
type haCounts struct{ Writes, Conflicts, Fenced int64 }

// haReplica is a replica running in a child process, as the test sees it.
type haReplica struct {
	name    string
	num     int
	cmd     *exec.Cmd
	stderr  *syncBuffer
	proxy   *etcdtest.Proxy // nil when it talks to etcd directly
	exited  chan struct{}
	counts  chan haCounts
	mu      sync.Mutex
	roles   map[string]haRole // by controller; guarded by mu
	firsts  []haFirst         // guarded by mu
	changed chan struct{}     // closed and replaced on every report; guarded by mu
}

// haRole is a controller's role in a replica, as it last reported it.
type haRole struct {
	leader bool
	term   uint64
	since  time.Time
}

// haFirst is a first reconcile reported by a replica.
type haFirst struct {
	controller string
	at         time.Time
}

// startHA starts replica number num (named "p<num>") on the state at
// prefix with leadership of scope, through a proxy of its own when
// proxied, with a heartbeat controller when beat; the test's cleanup
// kills it.
func startHA(t *testing.T, prefix string, num int, scope string, proxied, beat bool) *haReplica {
	t.Helper()
	r := &haReplica{
		name: "p" + strconv.Itoa(num), num: num, stderr: &syncBuffer{}, exited: make(chan struct{}),
		counts: make(chan haCounts, 1), roles: map[string]haRole{}, changed: make(chan struct{}),
	}
	endpoint := server.Endpoint()
	if proxied {
		p, err := etcdtest.NewProxy(server.Addr())
		require.NoError(t, err)
		r.proxy = p
		endpoint = p.Endpoint()
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHAChild+"="+r.name, envHAReplica+"="+strconv.Itoa(num),
		envEndpoint+"="+endpoint, envPrefix+"="+prefix, envHAScope+"="+scope)
	if beat {
		cmd.Env = append(cmd.Env, envHABeat+"=1")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = r.stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r.cmd = cmd
	ready := make(chan struct{})
	go r.read(out, ready)
	t.Cleanup(func() {
		r.kill()
		if r.proxy != nil {
			r.proxy.Close()
		}
		if t.Failed() {
			t.Logf("replica %s's log:\n%s", r.name, r.stderr)
		}
	})
	select {
	case <-ready:
	case <-r.exited:
		t.Fatalf("replica %s exited at start:\n%s", r.name, r.stderr)
	case <-time.After(childTimeout):
		t.Fatalf("replica %s did not start within %s:\n%s", r.name, childTimeout, r.stderr)
	}
	return r
}

// read follows the replica's reports until its output ends.
func (r *haReplica) read(out io.Reader, ready chan struct{}) {
	defer close(r.exited)
	defer func() { _ = r.cmd.Wait() }()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		r.mu.Lock()
		switch {
		case line == "ready":
			close(ready)
		case len(f) == 5 && f[0] == "role":
			term, _ := strconv.ParseUint(f[3], 10, 64)
			ns, _ := strconv.ParseInt(f[4], 10, 64)
			r.roles[f[1]] = haRole{leader: f[2] == "leader", term: term, since: time.Unix(0, ns)}
		case len(f) == 3 && f[0] == "first":
			ns, _ := strconv.ParseInt(f[2], 10, 64)
			r.firsts = append(r.firsts, haFirst{controller: f[1], at: time.Unix(0, ns)})
		case strings.HasPrefix(line, "{"):
			var c haCounts
			if json.Unmarshal([]byte(line), &c) == nil {
				r.counts <- c
			}
		}
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
	}
}

// kill kills the replica with SIGKILL (if it still runs) and waits until
// it exited.
func (r *haReplica) kill() {
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Kill()
	<-r.exited
}

// stop stops the replica with SIGTERM and returns the counters it
// reports.
func (r *haReplica) stop(t *testing.T) haCounts {
	t.Helper()
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case c := <-r.counts:
		<-r.exited
		return c
	case <-r.exited:
		t.Fatalf("replica %s exited without its counters:\n%s", r.name, r.stderr)
	case <-time.After(childTimeout):
		t.Fatalf("replica %s did not stop within %s", r.name, childTimeout)
	}
	return haCounts{}
}

// snapshot returns the replica's roles and first reconciles, and a channel
// closed at its next report.
func (r *haReplica) snapshot() (map[string]haRole, []haFirst, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.roles), slices.Clone(r.firsts), r.changed
}

// leaders returns, per controller, the replicas among rs that say they
// lead it.
func haLeaders(rs []*haReplica) map[string][]*haReplica {
	out := map[string][]*haReplica{}
	for _, r := range rs {
		roles, _, _ := r.snapshot()
		for c, role := range roles {
			if role.leader {
				out[c] = append(out[c], r)
			}
		}
	}
	return out
}

// awaitHA waits until cond holds over the replicas' reports, checking
// again at each report, and fails after timeout with the roles seen.
func awaitHA(t *testing.T, rs []*haReplica, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		var chans []<-chan struct{}
		for _, r := range rs {
			_, _, ch := r.snapshot()
			chans = append(chans, ch)
		}
		if cond() {
			return
		}
		cases := make(chan struct{}, 1)
		stopWait := make(chan struct{})
		for _, ch := range chans {
			go func() {
				select {
				case <-ch:
					select {
					case cases <- struct{}{}:
					default:
					}
				case <-stopWait:
				}
			}()
		}
		select {
		case <-cases:
			close(stopWait)
		case <-deadline.C:
			close(stopWait)
			var b strings.Builder
			for _, r := range rs {
				roles, _, _ := r.snapshot()
				fmt.Fprintf(&b, " %s: %v;", r.name, roles)
			}
			t.Fatalf("%s: not within %s; roles:%s", what, timeout, b.String())
		}
	}
}

// oneLeaderPerController reports whether each stage of the chain has
// exactly one leader among rs.
func oneLeaderPerController(rs []*haReplica) bool {
	l := haLeaders(rs)
	for _, c := range chainStages {
		if len(l[c]) != 1 {
			return false
		}
	}
	return true
}

// projection is what the chain's fixed point is made of, for comparing
// two runs: per kind, each resource's N, phase, owner and finalizers (not
// M, the replica's stamp, nor versions or timestamps).
func projection(t *testing.T, st state.State) []map[resource.ID]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := make([]map[resource.ID]string, len(chainKinds))
	for i, k := range chainKinds {
		l, err := st.List(ctx, k)
		require.NoError(t, err)
		out[i] = map[resource.ID]string{}
		for _, r := range l.Items {
			md := r.Metadata()
			out[i][md.ID()] = fmt.Sprintf("N=%d %s owner=%q finalizers=%v", chainN(r), md.Phase(), md.Owner(), *md.Finalizers())
		}
	}
	return out
}

// haOp is an outside write of the tests: an update of A id to n, or its
// teardown.
type haOp struct {
	id       resource.ID
	n        int
	teardown bool
}

// applyOp makes op in st and records in x what it acknowledged.
func applyOp(ctx context.Context, t *testing.T, st state.State, op haOp, x *chainExpect) {
	t.Helper()
	if op.teardown {
		_, err := st.Teardown(ctx, resource.NewPointer(chainNS, chainKinds[0].Type(), op.id))
		require.NoError(t, err)
		delete(x.running, op.id)
		x.tearingDown[op.id] = true
		return
	}
	require.NoError(t, st.Modify(ctx, newChainA(op.id, 0), func(r resource.Resource) error {
		r.(*chainA).TypedSpec().N = op.n
		return nil
	}))
	x.running[op.id] = op.n
}

// singleReplica runs the chain in one Runtime over an in-memory state,
// fed the same outside writes, and returns the projection of its fixed
// point: what one replica alone makes of them.
func singleReplica(t *testing.T, initial int, ops []haOp) []map[resource.ID]string {
	t.Helper()
	st := inmem.NewState()
	var ctrls []controller.Controller
	for _, s := range chainStages {
		c, err := chainStage(s, true)
		require.NoError(t, err)
		ctrls = append(ctrls, c)
	}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrls...), runtimetest.WithLogger(zap.NewNop()), runtimetest.WithoutLeakCheck())
	ctx := testCtx(t)
	x := chainExpect{running: map[resource.ID]int{}, tearingDown: map[resource.ID]bool{}, finalizers: true}
	for i := range initial {
		require.NoError(t, st.Create(ctx, newChainA(haID(i), i)))
		x.running[haID(i)] = i
	}
	for _, op := range ops {
		applyOp(ctx, t, st, op, &x)
	}
	runtimetest.Settle(t, e.Runtime)
	waitChain(t, st, x, time.Minute)
	return projection(t, st)
}

func haID(i int) resource.ID { return fmt.Sprintf("a%02d", i) }

// haSeeds is the number of kill seeds; haParallel how many run at once.
const (
	haSeeds    = 20
	haParallel = 3
)

// TestHA_KillLeader: for each seed, three replicas in three processes
// run the chain under leadership (per Runtime for even seeds, per
// controller for odd ones); while the test writes to the chain's As
// (updates and teardowns, in an order drawn from the seed), the leader
// (per controller: a replica leading something) is killed with SIGKILL
// at a point drawn from the seed. After each kill: exactly one replica
// leads each controller; the takeover time (kill → first reconcile of the
// new leader) is measured; the chain converges to the fixed point of
// every acknowledged write, equal to what a single replica makes of the
// same writes. The takeover times' p50 and p99 are logged.
func TestHA_KillLeader(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var takeovers, kills []time.Duration
	sem := make(chan struct{}, haParallel)
	t.Run("seeds", func(t *testing.T) {
		for seed := range uint64(haSeeds) {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				d := killSeed(t, seed)
				mu.Lock()
				takeovers = append(takeovers, d...)
				if len(d) > 0 {
					kills = append(kills, slices.Max(d))
				}
				mu.Unlock()
			})
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if len(takeovers) == 0 {
		return
	}
	t.Logf("takeover (kill → first reconcile by the new leader), TTL %s: per controller moved, %s; per kill (its last controller), %s",
		haTTL, quantiles(takeovers), quantiles(kills))
}

// quantiles describes durations: how many, p50, p99 and max.
func quantiles(ds []time.Duration) string {
	ds = slices.Sorted(slices.Values(ds))
	q := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	return fmt.Sprintf("n=%d p50 %s p99 %s max %s", len(ds), q(0.5).Round(time.Millisecond), q(0.99).Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
}

// killSeed runs one seed of TestHA_KillLeader and returns its takeover
// times (one per controller that moved).
func killSeed(t *testing.T, seed uint64) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 22))
	scope := "runtime"
	if seed%2 == 1 {
		scope = "controller"
	}
	prefix := newPrefix()
	ctx := testCtx(t)
	st := newStateAt(t, prefix)
	const initial = 12
	x := chainExpect{running: map[resource.ID]int{}, tearingDown: map[resource.ID]bool{}, finalizers: true}
	for i := range initial {
		require.NoError(t, st.Create(ctx, newChainA(haID(i), i)))
		x.running[haID(i)] = i
	}
	var rs []*haReplica
	for n := 1; n <= 3; n++ {
		rs = append(rs, startHA(t, prefix, n, scope, false, false))
	}
	awaitHA(t, rs, time.Minute, "one leader per controller", func() bool { return oneLeaderPerController(rs) })

	// The outside writes, and the point of the kill among them.
	var ops []haOp
	for i := range 30 {
		id := haID(rng.IntN(initial))
		if rng.IntN(10) == 0 {
			ops = append(ops, haOp{id: id, teardown: true})
			continue
		}
		ops = append(ops, haOp{id: id, n: 1000 + i})
	}
	// A teardown is the last write of its A: drop the updates after it.
	gone := map[resource.ID]bool{}
	ops = slices.DeleteFunc(ops, func(op haOp) bool {
		if gone[op.id] {
			return true
		}
		gone[op.id] = op.teardown
		return false
	})
	killAt := rng.IntN(len(ops) + 1)
	pause := time.Duration(rng.IntN(20)) * time.Millisecond

	var victim *haReplica
	var killedAt time.Time
	var moved []string
	kill := func() {
		// A term can end before its successor begins (a lease that lapsed
		// on a loaded machine): the kill waits for a replica that leads.
		var leaders map[string][]*haReplica
		awaitHA(t, rs, time.Minute, "a leader to kill", func() bool {
			leaders = haLeaders(rs)
			return slices.ContainsFunc(chainStages, func(c string) bool { return len(leaders[c]) > 0 })
		})
		candidates := map[*haReplica]bool{}
		for _, c := range chainStages {
			for _, r := range leaders[c] {
				candidates[r] = true
			}
		}
		for _, r := range rs { // in order: deterministic for the seed
			if candidates[r] && (victim == nil || rng.IntN(2) == 0) {
				victim = r
			}
		}
		require.NotNil(t, victim, "a leader to kill")
		for _, c := range chainStages {
			if slices.Contains(leaders[c], victim) {
				moved = append(moved, c)
			}
		}
		killedAt = time.Now()
		victim.kill()
	}
	for i, op := range ops {
		if i == killAt {
			kill()
		}
		applyOp(ctx, t, st, op, &x)
		if pause > 0 {
			time.Sleep(pause) // spacing of the outside writes, not synchronization
		}
	}
	if victim == nil {
		kill()
	}
	survivors := slices.DeleteFunc(slices.Clone(rs), func(r *haReplica) bool { return r == victim })
	awaitHA(t, survivors, time.Minute, "one leader per controller after the kill", func() bool {
		return oneLeaderPerController(survivors) && firstsAfter(survivors, moved, killedAt) != nil
	})
	takeovers := firstsAfter(survivors, moved, killedAt)
	for i, d := range takeovers {
		t.Logf("seed %d (%s): %s moved from %s, first reconcile %s after the kill", seed, scope, moved[i], victim.name, d)
	}
	waitChain(t, st, x, time.Minute)
	assert.True(t, oneLeaderPerController(survivors), "exactly one leader per controller")

	// The outside writes of the seed, once acknowledged, are all
	// reflected, as a single replica reflects them.
	want := singleReplica(t, initial, ops)
	assert.Equal(t, want, projection(t, st), "the replicas' fixed point is a single replica's")
	for _, r := range survivors {
		c := r.stop(t)
		t.Logf("seed %d: %s wrote %d, %d conflicts, %d fenced", seed, r.name, c.Writes, c.Conflicts, c.Fenced)
	}
	return takeovers
}

// firstsAfter returns, for each controller of moved, how long after t0
// its new leader among rs (the one leading it now) reported its first
// reconcile; nil while one is missing.
func firstsAfter(rs []*haReplica, moved []string, t0 time.Time) []time.Duration {
	leaders := haLeaders(rs)
	var out []time.Duration
	for _, c := range moved {
		if len(leaders[c]) != 1 {
			return nil
		}
		_, firsts, _ := leaders[c][0].snapshot()
		i := slices.IndexFunc(firsts, func(f haFirst) bool { return f.controller == c && f.at.After(t0) })
		if i < 0 {
			return nil
		}
		out = append(out, firsts[i].at.Sub(t0))
	}
	return out
}

// leaderKeyDeleted returns the revision at which the key of replica
// name's candidacy in the Runtime's election was deleted last, reading
// the election's history from from.
func leaderKeyDeleted(t *testing.T, prefix, name string, from int64) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	now, err := client.Get(ctx, "x", clientv3.WithCountOnly())
	require.NoError(t, err)
	keys := map[string]bool{}
	var deleted int64
	wch := client.Watch(ctx, electionPrefix(prefix, runtime.RuntimeElection), clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithPrevKV())
	for wr := range wch {
		require.NoError(t, wr.Err())
		for _, ev := range wr.Events {
			switch {
			case ev.Type == clientv3.EventTypePut && string(ev.Kv.Value) == name:
				keys[string(ev.Kv.Key)] = true
			case ev.Type == clientv3.EventTypeDelete && keys[string(ev.Kv.Key)]:
				deleted = ev.Kv.ModRevision
			}
		}
		if wr.Header.Revision >= now.Header.Revision {
			return deleted
		}
	}
	t.Fatal("the watch ended")
	return 0
}

// landedBy counts the writes to the chain's kinds B to E and to the
// heartbeat since revision from (exclusive) stamped by replica num.
func landedBy(t *testing.T, prefix string, from int64, num int) int {
	t.Helper()
	n := 0
	for _, k := range chainKinds[1:] {
		n += writesBy(t, prefix, k, uint64(from), num)
	}
	return n + beatsBy(t, prefix, from, num)
}

// beatsBy counts the heartbeat's writes since revision from (exclusive)
// made by replica num.
func beatsBy(t *testing.T, prefix string, from int64, num int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	now, err := client.Get(ctx, "x", clientv3.WithCountOnly())
	require.NoError(t, err)
	n := 0
	wch := client.Watch(ctx, prefix+heartbeatKind.Namespace()+"/"+heartbeatKind.Type()+"/", clientv3.WithPrefix(), clientv3.WithRev(from+1))
	for wr := range wch {
		require.NoError(t, wr.Err())
		for _, ev := range wr.Events {
			if ev.Type != clientv3.EventTypePut || len(ev.Kv.Value) == 0 {
				continue
			}
			r, err := registry().Decode(ev.Kv.Value)
			require.NoError(t, err)
			if r.Spec().(conformance.IntSpec).Value/1_000_000 == num {
				n++
			}
		}
		if wr.Header.Revision >= now.Header.Revision {
			return n
		}
	}
	t.Fatal("the watch ended")
	return 0
}

// deposed runs the pause and partition tests: three replicas with one
// election for the Runtime, each with a heartbeat; isolate cuts the
// leader off (and returns a function that ends it); while it is cut off,
// a standby takes over and the chain moves on. The deposed leader then
// steps down, and none of its writes lands after its successor's election
// (its candidate key's deletion), counted by the replica stamp in etcd's
// history; with wantFenced, its state must have refused at least one of
// its writes as fenced (the heartbeat's write in flight when it was cut
// off).
func deposed(t *testing.T, proxied, wantFenced bool, isolate func(t *testing.T, r *haReplica) (restore func())) {
	prefix := newPrefix()
	ctx := testCtx(t)
	st := newStateAt(t, prefix)
	start, err := client.Get(ctx, "x", clientv3.WithCountOnly())
	require.NoError(t, err)
	const initial = 12
	x := chainExpect{running: map[resource.ID]int{}, tearingDown: map[resource.ID]bool{}, finalizers: true}
	for i := range initial {
		require.NoError(t, st.Create(ctx, newChainA(haID(i), i)))
		x.running[haID(i)] = i
	}
	var rs []*haReplica
	for n := 1; n <= 3; n++ {
		rs = append(rs, startHA(t, prefix, n, "runtime", proxied, true))
	}
	awaitHA(t, rs, time.Minute, "one leader", func() bool { return oneLeaderPerController(rs) })
	waitChain(t, st, x, time.Minute)
	old := haLeaders(rs)[chainStages[0]][0]
	others := slices.DeleteFunc(slices.Clone(rs), func(r *haReplica) bool { return r == old })

	// Changes the leader is busy with when it is cut off.
	for i := range initial {
		applyOp(ctx, t, st, haOp{id: haID(i), n: 2000 + i}, &x)
	}
	cutAt := time.Now()
	restore := isolate(t, old)
	awaitHA(t, others, time.Minute, "a successor", func() bool { return oneLeaderPerController(others) })
	successor := haLeaders(others)[chainStages[0]][0]
	t.Logf("%s cut off; %s leads after %s", old.name, successor.name, time.Since(cutAt))
	for i := range initial {
		applyOp(ctx, t, st, haOp{id: haID(i), n: 3000 + i}, &x)
	}
	waitChain(t, st, x, time.Minute)
	restore()
	// The old leader comes back with the changes it missed; it steps down.
	for i := range initial {
		applyOp(ctx, t, st, haOp{id: haID(i), n: 4000 + i}, &x)
	}
	awaitHA(t, rs, time.Minute, "the old leader stepped down", func() bool {
		roles, _, _ := old.snapshot()
		for _, c := range chainStages {
			if roles[c].leader {
				return false
			}
		}
		return oneLeaderPerController(rs)
	})
	waitChain(t, st, x, time.Minute)
	deleted := leaderKeyDeleted(t, prefix, old.name, start.Header.Revision)
	require.Positive(t, deleted, "the old leader's key was deleted")
	assert.Zero(t, landedBy(t, prefix, deleted, old.num), "writes of the old leader landed after its successor's election")
	c := old.stop(t)
	t.Logf("the old leader %s: %d writes committed, %d fenced (refused after its term ended)", old.name, c.Writes, c.Fenced)
	if wantFenced {
		assert.Positive(t, c.Fenced, "the write the old leader had in flight was refused by its fence")
	}
	for _, r := range others {
		r.stop(t)
	}
}

// TestHA_PausedLeader: a leader stopped with SIGSTOP for longer than its
// lease (until a successor leads) and continued with SIGCONT lands no
// write after its successor's election, and steps down.
func TestHA_PausedLeader(t *testing.T) {
	t.Parallel()
	deposed(t, false, false, func(t *testing.T, r *haReplica) func() {
		require.NoError(t, r.cmd.Process.Signal(syscall.SIGSTOP))
		return func() { require.NoError(t, r.cmd.Process.Signal(syscall.SIGCONT)) }
	})
}

// TestHA_PartitionedLeader: a leader whose traffic with etcd is held by
// its proxy (a partition: nothing goes through; what it sent meanwhile
// arrives when the partition heals) lands no write after its successor's
// election — the write it had in flight reaches etcd after the
// successor's election and is refused as fenced — and steps down.
func TestHA_PartitionedLeader(t *testing.T) {
	t.Parallel()
	deposed(t, true, true, func(t *testing.T, r *haReplica) func() {
		r.proxy.Hold()
		return r.proxy.Restore
	})
}

// TestHA_PerControllerSpreadsAndMoves: with one election per controller,
// three replicas in three processes each run some of the chain's four
// stages (each stage in exactly one); when one is killed, its stages
// move to the two others, which then run two each, and the chain goes on.
func TestHA_PerControllerSpreadsAndMoves(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	ctx := testCtx(t)
	st := newStateAt(t, prefix)
	var rs []*haReplica
	for n := 1; n <= 3; n++ {
		rs = append(rs, startHA(t, prefix, n, "controller", false, false))
	}
	per := func(rs []*haReplica) map[string]int {
		n := map[string]int{}
		for _, ls := range haLeaders(rs) {
			for _, r := range ls {
				n[r.name]++
			}
		}
		return n
	}
	awaitHA(t, rs, time.Minute, "the stages spread", func() bool {
		n := per(rs)
		return oneLeaderPerController(rs) && n["p1"] >= 1 && n["p2"] >= 1 && n["p3"] >= 1
	})
	t.Logf("spread: %v", per(rs))
	x := chainExpect{running: map[resource.ID]int{}, tearingDown: map[resource.ID]bool{}, finalizers: true}
	for i := range 12 {
		require.NoError(t, st.Create(ctx, newChainA(haID(i), i)))
		x.running[haID(i)] = i
	}
	waitChain(t, st, x, time.Minute)
	victim := rs[0]
	for _, r := range rs {
		if per(rs)[r.name] > per(rs)[victim.name] {
			victim = r
		}
	}
	killedAt := time.Now()
	victim.kill()
	survivors := slices.DeleteFunc(slices.Clone(rs), func(r *haReplica) bool { return r == victim })
	awaitHA(t, survivors, time.Minute, "the stages moved", func() bool {
		n := per(survivors)
		return oneLeaderPerController(survivors) && n[survivors[0].name] == 2 && n[survivors[1].name] == 2
	})
	t.Logf("after %s was killed: %v (%s after the kill)", victim.name, per(survivors), time.Since(killedAt))
	for i := range 12 {
		applyOp(ctx, t, st, haOp{id: haID(i), n: 500 + i}, &x)
	}
	waitChain(t, st, x, time.Minute)
	for _, r := range survivors {
		r.stop(t)
	}
}
