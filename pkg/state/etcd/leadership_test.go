package etcd_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/leadership"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// The leadership tests of the Runtime in one process: replicas are Runtimes
// on states of their own (each with its etcd client) sharing a prefix of
// the test server, each campaigning through an elector of its own. The
// tests with several processes, kills, pauses and partitions are in
// ha_test.go.

// replica is a Runtime of a leadership test.
type replica struct {
	name string
	st   state.State
	el   *etcd.Elector
	rt   *runtime.Runtime
	stop context.CancelFunc
	done chan error
}

// startReplica starts a Runtime named name on the state at prefix with
// leadership of scope, running ctrls (made for it by mk). It is stopped
// at the end of the test.
func startReplica(t *testing.T, name, prefix string, scope runtime.LeadershipScope, el leadership.Elector, mk func(r string) []controller.Controller) *replica {
	t.Helper()
	cli := newClient(t, server.Endpoint())
	st, err := etcd.New(context.Background(), cli, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	r := &replica{name: name, st: st, done: make(chan error, 1)}
	if el == nil {
		r.el = newElector(t, cli, prefix, name)
		el = r.el
	}
	r.rt, err = runtime.New(st, zap.NewNop(), runtime.WithLeadership(el, scope), runtime.WithRestartBackoff(10*time.Millisecond, 100*time.Millisecond))
	require.NoError(t, err)
	for _, c := range mk(name) {
		require.NoError(t, r.rt.RegisterController(c))
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() { r.done <- r.rt.Run(ctx) }()
	t.Cleanup(r.halt)
	return r
}

// halt stops the replica's Runtime and waits until Run returned.
func (r *replica) halt() {
	r.stop()
	if err := <-r.done; err != nil {
		panic(err)
	}
	r.done <- nil // halt is idempotent
}

// roles returns the role of each controller of the replica.
func (r *replica) roles() map[string]observe.Role {
	out := map[string]observe.Role{}
	for _, c := range r.rt.Observe().Controllers() {
		if c.Leadership != nil {
			out[c.Name] = c.Leadership.Role
		}
	}
	return out
}

// status returns the status of one controller of the replica.
func (r *replica) status(name string) observe.ControllerStatus {
	for _, c := range r.rt.Observe().Controllers() {
		if c.Name == name {
			return c
		}
	}
	panic("no controller " + name)
}

// awaitRoles waits until cond holds for the roles of the replicas' controllers
// (replica → controller → role); it polls the replicas' statuses, which
// change with no event a test could wait for, and fails after timeout.
func awaitRoles(t *testing.T, timeout time.Duration, cond func(map[string]map[string]observe.Role) bool, rs ...*replica) map[string]map[string]observe.Role {
	t.Helper()
	var last map[string]map[string]observe.Role
	ok := assert.Eventually(t, func() bool {
		last = map[string]map[string]observe.Role{}
		for _, r := range rs {
			last[r.name] = r.roles()
		}
		return cond(last)
	}, timeout, 10*time.Millisecond)
	if !ok {
		t.Fatalf("roles: %v", last)
	}
	return last
}

// leadersOf returns, per controller, the replicas that say they lead it.
func leadersOf(roles map[string]map[string]observe.Role) map[string][]string {
	out := map[string][]string{}
	for r, m := range roles {
		for c, role := range m {
			if role == observe.RoleLeader {
				out[c] = append(out[c], r)
			}
		}
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// oneLeaderEach reports whether each of the controllers named has
// exactly one leader.
func oneLeaderEach(names ...string) func(map[string]map[string]observe.Role) bool {
	return func(roles map[string]map[string]observe.Role) bool {
		l := leadersOf(roles)
		for _, n := range names {
			if len(l[n]) != 1 {
				return false
			}
		}
		return true
	}
}

// chainControllers returns the chain's four stages.
func chainControllers(string) []controller.Controller {
	var out []controller.Controller
	for _, s := range chainStages {
		c, err := chainStage(s, true)
		if err != nil {
			panic(err)
		}
		out = append(out, c)
	}
	return out
}

// TestLeadership_PerEngine: two replicas with one election for the
// Runtime: one runs every controller, the other is a standby whose
// controllers never reconcile; the chain converges. When the leader
// stops, it resigns and the standby takes over at once (no lease to wait
// for) and keeps the chain at its fixed point as the inputs change.
func TestLeadership_PerEngine(t *testing.T) {
	prefix := newPrefix()
	st := newStateAt(t, prefix)
	ctx := testCtx(t)
	r1 := startReplica(t, "r1", prefix, runtime.LeadPerRuntime, nil, chainControllers)
	awaitRoles(t, 30*time.Second, oneLeaderEach(chainStages...), r1)
	r2 := startReplica(t, "r2", prefix, runtime.LeadPerRuntime, nil, chainControllers)

	x := chainExpect{running: map[resource.ID]int{}, tearingDown: map[resource.ID]bool{}, finalizers: true}
	for i := range 20 {
		id := fmt.Sprintf("a%02d", i)
		require.NoError(t, st.Create(ctx, newChainA(id, i)))
		x.running[id] = i
	}
	waitChain(t, st, x, time.Minute)
	roles := awaitRoles(t, 30*time.Second, oneLeaderEach(chainStages...), r1, r2)
	for _, c := range chainStages {
		assert.Equal(t, observe.RoleLeader, roles["r1"][c])
		assert.Equal(t, observe.RoleStandby, roles["r2"][c])
		s := r2.status(c)
		assert.Zero(t, s.Metrics.Reconciles, "the standby's %s never reconciles", c)
		require.NotNil(t, s.Leadership)
		assert.Equal(t, runtime.RuntimeElection, s.Leadership.Election)
		lead := r1.status(c).Leadership
		assert.Positive(t, lead.Term)
		assert.False(t, lead.Since.IsZero())
	}
	// Explain says who runs what.
	ex, err := r2.rt.Observe().ExplainController(ctx, chainStages[0])
	require.NoError(t, err)
	assert.Equal(t, explain.WorkStandby, ex.Doing.Work)
	assert.Contains(t, ex.Leadership, "standby in election "+runtime.RuntimeElection)
	ex, err = r1.rt.Observe().ExplainController(ctx, chainStages[0])
	require.NoError(t, err)
	assert.Contains(t, ex.Leadership, "leader of election "+runtime.RuntimeElection)
	// A standby is idle: it has no work of its own.
	runtimetest.Settle(t, r2.rt)

	term := r1.status(chainStages[0]).Leadership.Term
	r1.halt()
	awaitRoles(t, 30*time.Second, func(roles map[string]map[string]observe.Role) bool {
		return oneLeaderEach(chainStages...)(roles) && roles["r2"][chainStages[0]] == observe.RoleLeader
	}, r2)
	assert.Greater(t, r2.status(chainStages[0]).Leadership.Term, term)
	for i := range 20 {
		id := fmt.Sprintf("a%02d", i)
		require.NoError(t, st.Modify(ctx, newChainA(id, 0), func(r resource.Resource) error {
			r.(*chainA).TypedSpec().N = i + 100
			return nil
		}))
		x.running[id] = i + 100
	}
	waitChain(t, st, x, time.Minute)
}

// TestLeadership_PerControllerSpreads: three replicas with one election
// per controller share the four stages of the chain (each runs one or
// two, each stage runs in exactly one); the chain converges. When a
// replica stops, the two others take its stages over.
func TestLeadership_PerControllerSpreads(t *testing.T) {
	prefix := newPrefix()
	st := newStateAt(t, prefix)
	ctx := testCtx(t)
	var rs []*replica
	for _, n := range []string{"r1", "r2", "r3"} {
		rs = append(rs, startReplica(t, n, prefix, runtime.LeadPerController, nil, chainControllers))
	}
	spread := func(roles map[string]map[string]observe.Role) bool {
		if !oneLeaderEach(chainStages...)(roles) {
			return false
		}
		per := map[string]int{}
		for _, ls := range leadersOf(roles) {
			per[ls[0]]++
		}
		for r := range roles {
			if per[r] < 1 || per[r] > 2 {
				return false
			}
		}
		return true
	}
	roles := awaitRoles(t, 30*time.Second, spread, rs...)
	t.Logf("leaders: %v", leadersOf(roles))
	x := chainExpect{running: map[resource.ID]int{}, tearingDown: map[resource.ID]bool{}, finalizers: true}
	for i := range 20 {
		id := fmt.Sprintf("a%02d", i)
		require.NoError(t, st.Create(ctx, newChainA(id, i)))
		x.running[id] = i
	}
	waitChain(t, st, x, time.Minute)
	for _, c := range chainStages {
		s := rs[0].status(c)
		require.NotNil(t, s.Leadership)
		assert.Equal(t, runtime.ControllerElectionPrefix+c, s.Leadership.Election)
	}

	rs[1].halt()
	roles = awaitRoles(t, 30*time.Second, func(roles map[string]map[string]observe.Role) bool {
		if !oneLeaderEach(chainStages...)(roles) {
			return false
		}
		per := map[string]int{}
		for _, ls := range leadersOf(roles) {
			per[ls[0]]++
		}
		return per["r1"] == 2 && per["r3"] == 2
	}, rs[0], rs[2])
	t.Logf("leaders after r2 stopped: %v", leadersOf(roles))
	for i := range 20 {
		id := fmt.Sprintf("a%02d", i)
		require.NoError(t, st.Modify(ctx, newChainA(id, 0), func(r resource.Resource) error {
			r.(*chainA).TypedSpec().N = i + 100
			return nil
		}))
		x.running[id] = i + 100
	}
	waitChain(t, st, x, time.Minute)
}

// deafElector campaigns through an etcd elector but hides when a term
// ends: the Runtime then learns that its term is over only from a write
// the state refuses — the fencing this test is about.
type deafElector struct{ *etcd.Elector }

func (d deafElector) Campaign(ctx context.Context, name string) (leadership.Term, error) {
	t, err := d.Elector.Campaign(ctx, name)
	if err != nil {
		return nil, err
	}
	return deafTerm{t}, nil
}

type deafTerm struct{ leadership.Term }

func (deafTerm) Done() <-chan struct{} { return nil }

// chainB is the second resource of the chain.
type chainB = typed.Resource[chainSpec, chainBDef]

func newChainB(id resource.ID) *chainB {
	return typed.NewDefault[chainSpec, chainBDef](id, chainSpec{})
}

// stamper is a Controller that copies N of every chain A into a chain B
// with M set to its replica's number, one write per A per pass; it
// counts the writes the state refused as fenced.
type stamper struct {
	replica int
	fenced  *atomic.Int64
	passes  *atomic.Int64
}

func (s stamper) Name() string { return "stamper" }
func (s stamper) Inputs() []controller.Input {
	return []controller.Input{{Namespace: chainNS, Type: chainKinds[0].Type(), Kind: controller.InputWeak}}
}

func (s stamper) Outputs() []controller.Output {
	return []controller.Output{{Type: chainKinds[1].Type(), Kind: controller.OutputExclusive}}
}

func (s stamper) Run(ctx context.Context, rt controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-rt.EventCh():
		}
		s.passes.Add(1)
		list, err := rt.List(ctx, chainKinds[0])
		if err != nil {
			return err
		}
		for _, a := range list.Items {
			b := newChainB(a.Metadata().ID())
			err := rt.Modify(ctx, b, func(r resource.Resource) error {
				r.(*chainB).TypedSpec().N = chainN(a)
				r.(*chainB).TypedSpec().M = s.replica
				return nil
			})
			if state.IsFencedError(err) {
				s.fenced.Add(1)
			}
			if err != nil {
				return err
			}
		}
	}
}

// TestLeadership_FencedWriteStopsTheController: a leader that is never
// told its term ended (its elector hides it) keeps running after its
// election key is deleted and a successor is elected; its next write is
// refused by the state (fenced), nothing of it lands, and the Runtime stops
// the controller there: it goes back to standby and campaigns again.
func TestLeadership_FencedWriteStopsTheController(t *testing.T) {
	prefix := newPrefix()
	st := newStateAt(t, prefix)
	ctx := testCtx(t)
	var fenced1, fenced2, passes1, passes2 atomic.Int64
	el1 := newElector(t, client, prefix, "r1")
	r1 := startReplica(t, "r1", prefix, runtime.LeadPerRuntime, deafElector{el1}, func(string) []controller.Controller {
		return []controller.Controller{stamper{replica: 1, fenced: &fenced1, passes: &passes1}}
	})
	awaitRoles(t, 30*time.Second, oneLeaderEach("stamper"), r1)
	require.NoError(t, st.Create(ctx, newChainA("a", 1)))
	runtimetest.AssertResource(t, st, "a", runtimetest.Holds(func(b *chainB) bool { return b.TypedSpec().M == 1 }))
	r2 := startReplica(t, "r2", prefix, runtime.LeadPerRuntime, nil, func(string) []controller.Controller {
		return []controller.Controller{stamper{replica: 2, fenced: &fenced2, passes: &passes2}}
	})

	// Depose r1 behind its back: its key goes, r2 is elected.
	term1 := r1.status("stamper").Leadership.Term
	keys, err := client.Get(ctx, electionPrefix(prefix, runtime.RuntimeElection), clientv3.WithPrefix())
	require.NoError(t, err)
	for _, kv := range keys.Kvs {
		if kv.CreateRevision == int64(term1) {
			_, err := client.Delete(ctx, string(kv.Key))
			require.NoError(t, err)
		}
	}
	awaitRoles(t, 30*time.Second, func(roles map[string]map[string]observe.Role) bool {
		return roles["r2"]["stamper"] == observe.RoleLeader
	}, r2)
	runtimetest.AssertResource(t, st, "a", runtimetest.Holds(func(b *chainB) bool { return b.TypedSpec().M == 2 }))
	elected, err := st.(state.RevisionReporter).Revision(ctx)
	require.NoError(t, err)

	// A change wakes both; r1's write is fenced, and r1 steps down.
	require.NoError(t, st.Modify(ctx, newChainA("a", 0), func(r resource.Resource) error {
		r.(*chainA).TypedSpec().N = 2
		return nil
	}))
	require.Eventually(t, func() bool { return fenced1.Load() > 0 }, 30*time.Second, 5*time.Millisecond, "r1's write was fenced")
	awaitRoles(t, 30*time.Second, func(roles map[string]map[string]observe.Role) bool {
		return roles["r1"]["stamper"] == observe.RoleStandby && roles["r2"]["stamper"] == observe.RoleLeader
	}, r1, r2)
	b := runtimetest.AssertResource(t, st, "a", runtimetest.Holds(func(b *chainB) bool { return b.TypedSpec().N == 2 }))
	assert.Equal(t, 2, b.TypedSpec().M)
	assert.Zero(t, fenced2.Load())
	assert.Zero(t, writesBy(t, prefix, chainKinds[1], elected, 1), "no write of r1 landed after r2 was elected")
}

// writesBy counts the writes to kind since revision from (exclusive)
// whose value has M = replica: the writes of that replica's stamper.
func writesBy(t *testing.T, prefix string, kind resource.Kind, from uint64, replica int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	now, err := client.Get(ctx, "x", clientv3.WithCountOnly())
	require.NoError(t, err)
	n := 0
	wch := client.Watch(ctx, prefix+kind.Namespace()+"/"+kind.Type()+"/", clientv3.WithPrefix(), clientv3.WithRev(int64(from)+1))
	for wr := range wch {
		require.NoError(t, wr.Err())
		for _, ev := range wr.Events {
			if ev.Type != clientv3.EventTypePut || len(ev.Kv.Value) == 0 {
				continue
			}
			r, err := registry().Decode(ev.Kv.Value)
			require.NoError(t, err)
			if r.Spec().(chainSpec).M == replica {
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

// TestLeadership_Options: leadership needs an elector, a known scope and
// a state that fences the elector's writes; New refuses anything else
// with an invalid-class error.
func TestLeadership_Options(t *testing.T) {
	prefix := newPrefix()
	st := newStateAt(t, prefix)
	el := newElector(t, client, prefix, "r1")
	_, err := runtime.New(st, nil, runtime.WithLeadership(nil, runtime.LeadPerRuntime))
	assert.True(t, state.IsInvalidError(err), "%v", err)
	_, err = runtime.New(st, nil, runtime.WithLeadership(el, runtime.LeadershipScope(9)))
	assert.True(t, state.IsInvalidError(err), "%v", err)
	_, err = runtime.New(inmem.NewState(), nil, runtime.WithLeadership(el, runtime.LeadPerController))
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.Contains(t, err.Error(), "fence")
	_, err = runtime.New(st, nil, runtime.WithLeadership(el, runtime.LeadPerController))
	assert.NoError(t, err)
}

// counting is a QController of the chain's As that counts its reconciles.
type counting struct{ reconciles *atomic.Int64 }

func (counting) Name() string { return "counting" }
func (counting) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs:  []controller.Input{{Namespace: chainNS, Type: chainKinds[0].Type(), Kind: controller.InputQPrimary}},
		Outputs: []controller.Output{{Type: chainKinds[2].Type(), Kind: controller.OutputExclusive}},
	}
}

func (c counting) Reconcile(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
	c.reconciles.Add(1)
	return nil
}

func (counting) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// electionPrefix is the key prefix of the candidates of election in the
// state at prefix.
func electionPrefix(prefix, election string) string {
	return prefix + "%leader/" + strings.NewReplacer("%", "%25", "/", "%2F").Replace(election) + "/"
}

// deposeLeader deletes the key of the term that leads election under
// prefix: its leader's term ends, the next candidate leads. It waits
// first until the election has candidates candidates (their keys in
// etcd): a replica that reports itself standby may not have put its key
// yet, and the deposed leader, campaigning again at once, would then lead
// again.
func deposeLeader(t *testing.T, prefix, election string, candidates int) {
	t.Helper()
	ctx := testCtx(t)
	require.Eventually(t, func() bool {
		resp, err := client.Get(ctx, electionPrefix(prefix, election), clientv3.WithPrefix(), clientv3.WithCountOnly())
		return err == nil && resp.Count == int64(candidates)
	}, 30*time.Second, 10*time.Millisecond, "%d candidates of %s", candidates, election)
	resp, err := client.Get(ctx, electionPrefix(prefix, election), clientv3.WithFirstCreate()...)
	require.NoError(t, err)
	require.NotEmpty(t, resp.Kvs)
	_, err = client.Delete(ctx, string(resp.Kvs[0].Key))
	require.NoError(t, err)
}

// TestLeadership_NewTermStartsFromTheCurrentState: a QController that
// leads again after a standby spell queues every existing input again,
// as after a restart (rule Q1), though nothing changed meanwhile; a
// standby does not reconcile.
func TestLeadership_NewTermStartsFromTheCurrentState(t *testing.T) {
	const n = 10
	prefix := newPrefix()
	st := newStateAt(t, prefix)
	ctx := testCtx(t)
	for i := range n {
		require.NoError(t, st.Create(ctx, newChainA(fmt.Sprintf("a%d", i), i)))
	}
	var c1, c2 atomic.Int64
	newReplica := func(name string, c *atomic.Int64) *replica {
		cli := newClient(t, server.Endpoint())
		rst, err := etcd.New(ctx, cli, registry(), etcd.WithPrefix(prefix))
		require.NoError(t, err)
		r := &replica{name: name, st: rst, done: make(chan error, 1), el: newElector(t, cli, prefix, name)}
		r.rt, err = runtime.New(rst, zap.NewNop(), runtime.WithLeadership(r.el, runtime.LeadPerController))
		require.NoError(t, err)
		require.NoError(t, r.rt.RegisterQController(counting{reconciles: c}))
		rctx, cancel := context.WithCancel(context.Background())
		r.stop = cancel
		go func() { r.done <- r.rt.Run(rctx) }()
		t.Cleanup(r.halt)
		return r
	}
	r1 := newReplica("r1", &c1)
	awaitRoles(t, 30*time.Second, oneLeaderEach("counting"), r1)
	require.Eventually(t, func() bool { return c1.Load() == n }, 30*time.Second, 5*time.Millisecond)
	r2 := newReplica("r2", &c2)
	awaitRoles(t, 30*time.Second, oneLeaderEach("counting"), r1, r2)

	election := runtime.ControllerElectionPrefix + "counting"
	deposeLeader(t, prefix, election, 2) // r1 → r2
	awaitRoles(t, 30*time.Second, func(roles map[string]map[string]observe.Role) bool {
		return roles["r2"]["counting"] == observe.RoleLeader && roles["r1"]["counting"] == observe.RoleStandby
	}, r1, r2)
	require.Eventually(t, func() bool { return c2.Load() == n }, 30*time.Second, 5*time.Millisecond)
	deposeLeader(t, prefix, election, 2) // r2 → r1, whose second term it is
	awaitRoles(t, 30*time.Second, func(roles map[string]map[string]observe.Role) bool {
		return roles["r1"]["counting"] == observe.RoleLeader && roles["r2"]["counting"] == observe.RoleStandby
	}, r1, r2)
	require.Eventually(t, func() bool { return c1.Load() == 2*n }, 30*time.Second, 5*time.Millisecond,
		"the new term reconciles every existing input")
	runtimetest.Settle(t, r1.rt)
	runtimetest.Settle(t, r2.rt)
	assert.Equal(t, int64(2*n), c1.Load())
	assert.Equal(t, int64(n), c2.Load())
}

// TestLeadership_RegisteredDuringRun: a controller registered while the
// Runtime runs (rule E3) campaigns at once in its election, and runs once
// it leads; a standby registered likewise in another replica stays one.
func TestLeadership_RegisteredDuringRun(t *testing.T) {
	prefix := newPrefix()
	st := newStateAt(t, prefix)
	ctx := testCtx(t)
	require.NoError(t, st.Create(ctx, newChainA("a", 7)))
	var fenced, passes1, passes2 atomic.Int64
	r1 := startReplica(t, "r1", prefix, runtime.LeadPerController, nil, func(string) []controller.Controller { return nil })
	r2 := startReplica(t, "r2", prefix, runtime.LeadPerController, nil, func(string) []controller.Controller { return nil })
	require.NoError(t, r1.rt.RegisterController(stamper{replica: 1, fenced: &fenced, passes: &passes1}))
	awaitRoles(t, 30*time.Second, oneLeaderEach("stamper"), r1)
	require.NoError(t, r2.rt.RegisterController(stamper{replica: 2, fenced: &fenced, passes: &passes2}))
	roles := awaitRoles(t, 30*time.Second, func(roles map[string]map[string]observe.Role) bool {
		return oneLeaderEach("stamper")(roles) && len(roles["r2"]) == 1
	}, r1, r2)
	assert.Equal(t, observe.RoleLeader, roles["r1"]["stamper"])
	assert.Equal(t, observe.RoleStandby, roles["r2"]["stamper"])
	b := runtimetest.AssertResource(t, st, "a", runtimetest.Holds(func(b *chainB) bool { return b.TypedSpec().N == 7 }))
	assert.Equal(t, 1, b.TypedSpec().M)
	assert.Zero(t, passes2.Load(), "the standby never ran")
}
