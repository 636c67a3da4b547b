package etcd_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/resgraph/resgraph/pkg/leadership"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
	"github.com/resgraph/resgraph/pkg/state/etcd/internal/etcdtest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// testTTL is the lease TTL of the leadership tests: the test server's
// election timeout (50 ms) allows leases this short.
const testTTL = time.Second

// newElector returns an elector on cli for the state at prefix, closed at
// the end of the test.
func newElector(t *testing.T, cli *clientv3.Client, prefix, name string, opts ...etcd.ElectorOption) *etcd.Elector {
	t.Helper()
	opts = append([]etcd.ElectorOption{etcd.WithElectionPrefix(prefix), etcd.WithLeaseTTL(testTTL), etcd.WithReplicaName(name)}, opts...)
	el, err := etcd.NewElector(context.Background(), cli, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = el.Close() })
	return el
}

// newStateAt returns a state on the test server at prefix.
func newStateAt(t *testing.T, prefix string, opts ...etcd.Option) state.State {
	t.Helper()
	st, err := etcd.New(context.Background(), client, registry(), append([]etcd.Option{etcd.WithPrefix(prefix)}, opts...)...)
	require.NoError(t, err)
	return st
}

// testCtx is canceled at the end of the test, or after a minute.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// campaignAsync campaigns in the background; the term (or error) arrives
// on the returned channel.
func campaignAsync(ctx context.Context, el *etcd.Elector, name string) <-chan termOrErr {
	ch := make(chan termOrErr, 1)
	go func() {
		t, err := el.Campaign(ctx, name)
		ch <- termOrErr{t, err}
	}()
	return ch
}

type termOrErr struct {
	t   leadership.Term
	err error
}

// awaitTerm waits for a campaign's outcome.
func awaitTerm(t *testing.T, ch <-chan termOrErr) leadership.Term {
	t.Helper()
	select {
	case r := <-ch:
		require.NoError(t, r.err)
		return r.t
	case <-time.After(30 * time.Second):
		t.Fatal("no term within 30 s")
		return nil
	}
}

// awaitDone waits until a term ends and returns why.
func awaitDone(t *testing.T, term leadership.Term) error {
	t.Helper()
	select {
	case <-term.Done():
		return term.Err()
	case <-time.After(30 * time.Second):
		t.Fatal("the term did not end within 30 s")
		return nil
	}
}

// fencedWrites tries a Create, an Update, a Modify and a Destroy of
// resources of st under fence and returns their errors.
func fencedWrites(ctx context.Context, st state.State, fence state.Fence, id string) []error {
	fctx := state.WithFence(ctx, fence)
	var errs []error
	errs = append(errs, st.Create(fctx, newChainA(id+"-new", 1)))
	cur, err := st.Get(ctx, resource.NewPointer(chainNS, chainKinds[0].Type(), id))
	if err != nil {
		return append(errs, err)
	}
	cur.(*chainA).TypedSpec().N++
	errs = append(errs, st.Update(fctx, cur))
	errs = append(errs, st.Modify(fctx, newChainA(id, 0), func(r resource.Resource) error {
		r.(*chainA).TypedSpec().N += 10
		return nil
	}))
	errs = append(errs, st.Destroy(fctx, resource.NewPointer(chainNS, chainKinds[0].Type(), id)))
	return errs
}

// TestElector_FencedWritesAfterSuccessor: writes under a term's fence
// commit while the term stands; once its leader resigned and a successor
// leads, every write under the old fence — Create, Update, Modify (through
// WrapCore), Destroy — fails with a fenced-class error and writes
// nothing, while the successor's fence lets them through. Terms number
// upward.
func TestElector_FencedWritesAfterSuccessor(t *testing.T) {
	ctx := testCtx(t)
	prefix := newPrefix()
	var counters etcd.Counters
	st := newStateAt(t, prefix, etcd.WithCounters(&counters))
	el1 := newElector(t, client, prefix, "one")
	el2 := newElector(t, client, prefix, "two")

	t1 := awaitTerm(t, campaignAsync(ctx, el1, "e"))
	assert.Equal(t, "e", t1.Election())
	assert.False(t, t1.Since().IsZero())
	require.NoError(t, st.Create(state.WithFence(ctx, t1.Fence()), newChainA("a", 1)))
	require.NoError(t, st.Create(ctx, newChainA("b", 1)))
	for _, err := range fencedWrites(ctx, st, t1.Fence(), "a") {
		require.NoError(t, err)
	}
	require.NoError(t, st.Create(ctx, newChainA("a", 1)))

	waiting := campaignAsync(ctx, el2, "e")
	require.NoError(t, t1.Resign(ctx))
	t2 := awaitTerm(t, waiting)
	assert.Greater(t, t2.Number(), t1.Number())
	assert.ErrorIs(t, t1.Err(), leadership.ErrLost)

	rev, err := st.(state.RevisionReporter).Revision(ctx)
	require.NoError(t, err)
	before := counters.Fenced.Load()
	for i, err := range fencedWrites(ctx, st, t1.Fence(), "a") {
		require.Error(t, err, "write %d", i)
		assert.True(t, state.IsFencedError(err), "write %d: %v", i, err)
		assert.Contains(t, err.Error(), fmt.Sprintf("term %d", t1.Number()))
	}
	assert.Equal(t, int64(4), counters.Fenced.Load()-before)
	after, err := st.(state.RevisionReporter).Revision(ctx)
	require.NoError(t, err)
	assert.Equal(t, rev, after, "nothing was written")

	for _, err := range fencedWrites(ctx, st, t2.Fence(), "b") {
		require.NoError(t, err)
	}
	require.NoError(t, t2.Resign(ctx))
}

// TestElector_FencedWritesAfterLeaseExpired: a leader cut off from etcd
// (its connection held by the proxy) loses its lease after the TTL; a
// standby takes over; a write under the old fence, made through another
// connection, fails with a fenced error; the old leader's term ends once
// its client gives up on the lease, and a write it sent while cut off,
// delivered after the successor was elected, is refused too.
func TestElector_FencedWritesAfterLeaseExpired(t *testing.T) {
	ctx := testCtx(t)
	prefix := newPrefix()
	proxy, err := etcdtest.NewProxy(server.Addr())
	require.NoError(t, err)
	defer proxy.Close()
	cut := newClient(t, proxy.Endpoint())
	stCut, err := etcd.New(ctx, cut, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	st := newStateAt(t, prefix)
	require.NoError(t, st.Create(ctx, newChainA("a", 1)))
	el1 := newElector(t, cut, prefix, "one")
	el2 := newElector(t, client, prefix, "two")

	t1 := awaitTerm(t, campaignAsync(ctx, el1, "e"))
	waiting := campaignAsync(ctx, el2, "e")
	proxy.Hold()
	late := make(chan error, 1)
	go func() {
		late <- stCut.Modify(state.WithFence(ctx, t1.Fence()), newChainA("a", 0), func(r resource.Resource) error {
			r.(*chainA).TypedSpec().N = 100
			return nil
		})
	}()
	t2 := awaitTerm(t, waiting)
	assert.Greater(t, t2.Number(), t1.Number())
	for i, err := range fencedWrites(ctx, st, t1.Fence(), "a") {
		assert.True(t, state.IsFencedError(err), "write %d: %v", i, err)
	}
	assert.ErrorIs(t, awaitDone(t, t1), leadership.ErrLost)
	proxy.Restore()
	select {
	case err := <-late:
		assert.True(t, state.IsFencedError(err), "the held write: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the held write did not return")
	}
	r, err := st.Get(ctx, resource.NewPointer(chainNS, chainKinds[0].Type(), "a"))
	require.NoError(t, err)
	assert.Equal(t, 1, chainN(r), "no write under the old fence landed")
	_ = t1.Resign(ctx)
	require.NoError(t, t2.Resign(ctx))
}

// TestElector_TermEndsWhenItsKeyIsDeleted: a term whose key disappears
// (here deleted by hand) ends with ErrLost; writes under it are fenced.
func TestElector_TermEndsWhenItsKeyIsDeleted(t *testing.T) {
	ctx := testCtx(t)
	prefix := newPrefix()
	st := newStateAt(t, prefix)
	el := newElector(t, client, prefix, "one")
	term := awaitTerm(t, campaignAsync(ctx, el, "e"))
	_, err := client.Delete(ctx, prefix+"%leader/e/", clientv3.WithPrefix())
	require.NoError(t, err)
	assert.ErrorIs(t, awaitDone(t, term), leadership.ErrLost)
	err = st.Create(state.WithFence(ctx, term.Fence()), newChainA("a", 1))
	assert.True(t, state.IsFencedError(err), "%v", err)
	require.NoError(t, term.Resign(ctx))
	// The replica may campaign again once it resigned.
	again := awaitTerm(t, campaignAsync(ctx, el, "e"))
	assert.Greater(t, again.Number(), term.Number())
	require.NoError(t, again.Resign(ctx))
}

// TestElector_BadUse: an empty election name and a second campaign of
// one election are invalid; a closed elector refuses to campaign and ends
// its terms.
func TestElector_BadUse(t *testing.T) {
	ctx := testCtx(t)
	prefix := newPrefix()
	el := newElector(t, client, prefix, "one")
	_, err := el.Campaign(ctx, "")
	assert.True(t, state.IsInvalidError(err), "%v", err)
	term := awaitTerm(t, campaignAsync(ctx, el, "e"))
	_, err = el.Campaign(ctx, "e")
	assert.True(t, state.IsInvalidError(err), "%v", err)

	other := newElector(t, client, prefix, "two")
	waiting := campaignAsync(ctx, other, "e")
	require.NoError(t, el.Close())
	assert.ErrorIs(t, awaitDone(t, term), leadership.ErrLost)
	_, err = el.Campaign(ctx, "f")
	assert.Error(t, err)
	// The closed elector's lease was revoked: the other takes over at
	// once.
	t2 := awaitTerm(t, waiting)
	require.NoError(t, t2.Resign(ctx))

	_, err = etcd.NewElector(ctx, client, etcd.WithLeaseTTL(-time.Second))
	assert.True(t, state.IsInvalidError(err), "%v", err)
	_, err = etcd.NewElector(ctx, nil)
	assert.True(t, state.IsInvalidError(err), "%v", err)
}

// TestElector_CheckState: an etcd state checks the elector's fences; the
// in-memory state does not, and a fence of another kind is refused by
// the etcd state, for CheckFence as for a write.
func TestElector_CheckState(t *testing.T) {
	ctx := testCtx(t)
	prefix := newPrefix()
	st := newStateAt(t, prefix)
	el := newElector(t, client, prefix, "one")
	assert.NoError(t, el.CheckState(st))
	err := el.CheckState(inmem.NewState())
	assert.True(t, state.IsInvalidError(err), "%v", err)

	err = st.(state.Fencer).CheckFence(foreignFence{})
	assert.True(t, state.IsInvalidError(err), "%v", err)
	err = st.Create(state.WithFence(ctx, foreignFence{}), newChainA("a", 1))
	assert.True(t, state.IsInvalidError(err), "%v", err)
	_, err = st.Get(ctx, resource.NewPointer(chainNS, chainKinds[0].Type(), "a"))
	assert.True(t, state.IsNotFoundError(err), "nothing written")
}

type foreignFence struct{}

func (foreignFence) String() string { return "a foreign fence" }

// leaders reads who leads each election under prefix: election → the
// replica name of its first candidate.
func leaders(ctx context.Context, prefix string) (map[string]string, int64, error) {
	resp, err := client.Get(ctx, prefix+"%leader/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		return nil, 0, err
	}
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		rest := strings.TrimPrefix(string(kv.Key), prefix+"%leader/")
		name := rest[:strings.LastIndexByte(rest, '/')]
		if _, ok := out[name]; !ok {
			out[name] = string(kv.Value)
		}
	}
	return out, resp.Header.Revision, nil
}

// awaitLeaders waits until cond holds for the elections' leaders under
// prefix, reading them again after each change, and fails after timeout
// with the last leaders seen.
func awaitLeaders(t *testing.T, prefix string, timeout time.Duration, cond func(map[string]string) bool) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last map[string]string
	for {
		l, rev, err := leaders(ctx, prefix)
		if err != nil {
			t.Fatalf("leaders: %v (last: %v)", err, last)
		}
		if last = l; cond(l) {
			return l
		}
		wch := client.Watch(ctx, prefix+"%leader/", clientv3.WithPrefix(), clientv3.WithRev(rev+1))
		select {
		case <-wch:
		case <-ctx.Done():
			t.Fatalf("the leaders did not reach the expected state within %s: %v\ncandidates:\n%s", timeout, last, candidates(prefix))
		}
	}
}

// candidates lists the candidate keys under prefix in create order.
func candidates(prefix string) string {
	resp, err := client.Get(context.Background(), prefix+"%leader/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, kv := range resp.Kvs {
		fmt.Fprintf(&b, "%s = %s (created at %d)\n", kv.Key, kv.Value, kv.CreateRevision)
	}
	return b.String()
}

// perReplica counts the elections each replica leads.
func perReplica(l map[string]string) map[string]int {
	n := map[string]int{}
	for _, r := range l {
		n[r]++
	}
	return n
}

// holdElections campaigns in every election named, from el, as a Runtime
// would: it leads each term until it ends, resigns, and campaigns again,
// until ctx is done.
func holdElections(ctx context.Context, wg *sync.WaitGroup, el *etcd.Elector, names []string) {
	for _, name := range names {
		wg.Go(func() {
			for ctx.Err() == nil {
				term, err := el.Campaign(ctx, name)
				if err != nil {
					return
				}
				select {
				case <-term.Done():
				case <-ctx.Done():
				}
				_ = term.Resign(context.WithoutCancel(ctx))
			}
		})
	}
}

// TestElector_SpreadsElections: elections held by three replicas end up
// spread evenly — six elections two per replica, four elections two, one
// and one — whatever order the replicas came in; when one replica stops,
// the two others take its elections over and share them evenly.
func TestElector_SpreadsElections(t *testing.T) {
	for _, n := range []int{6, 4} {
		t.Run(fmt.Sprintf("elections=%d", n), func(t *testing.T) {
			ctx := testCtx(t)
			prefix := newPrefix()
			var names []string
			for i := range n {
				names = append(names, fmt.Sprintf("c%d", i))
			}
			var wg sync.WaitGroup
			defer wg.Wait()
			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			els := map[string]*etcd.Elector{}
			for _, r := range []string{"r1", "r2", "r3"} {
				els[r] = newElector(t, client, prefix, r)
				holdElections(rctx, &wg, els[r], names)
				// The first replica leads everything before the next comes.
				if r == "r1" {
					awaitLeaders(t, prefix, 30*time.Second, func(l map[string]string) bool { return perReplica(l)["r1"] == n })
				}
			}
			l := awaitLeaders(t, prefix, 30*time.Second, func(l map[string]string) bool { return even(l, n, "r1", "r2", "r3") })
			t.Logf("spread: %v", l)

			require.NoError(t, els["r2"].Close())
			l = awaitLeaders(t, prefix, 30*time.Second, func(l map[string]string) bool { return even(l, n, "r1", "r3") })
			t.Logf("after r2 stopped: %v", l)
			assert.ElementsMatch(t, names, slices.Collect(maps.Keys(l)))
			cancel()
		})
	}
}

// even reports whether the n elections have leaders, all among replicas,
// each leading n/len(replicas) of them, give or take one.
func even(l map[string]string, n int, replicas ...string) bool {
	if len(l) != n {
		return false
	}
	per := perReplica(l)
	for r, k := range per {
		if !slices.Contains(replicas, r) || k < n/len(replicas) || k > (n+len(replicas)-1)/len(replicas) {
			return false
		}
	}
	for _, r := range replicas {
		if per[r] == 0 && n >= len(replicas) {
			return false
		}
	}
	return true
}
