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

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// chainExpect is the fixed point of the chain for a set of As: each
// running A with N = n has a B to E with N = n+1 to n+4, each owned by the
// stage that writes it; with input finalizers, every resource but E holds
// the finalizer of the stage that reads it. An A tearing down has no
// outputs left and no finalizer. Nothing else exists (no orphan).
type chainExpect struct {
	running     map[resource.ID]int
	tearingDown map[resource.ID]bool
	finalizers  bool
}

// diff describes how lists (of the kinds A to E) differ from the fixed
// point, or returns "" when they are it.
func (x chainExpect) diff(lists [][]resource.Resource) string {
	var b strings.Builder
	for k, list := range lists {
		seen := map[resource.ID]bool{}
		for _, r := range list {
			md := r.Metadata()
			id := md.ID()
			seen[id] = true
			var fins []string
			if x.finalizers && k < len(chainStages) {
				fins = []string{chainStages[k]}
			}
			owner := ""
			if k > 0 {
				owner = chainStages[k-1]
			}
			n, running := x.running[id]
			switch {
			case k == 0 && x.tearingDown[id]:
				if md.Phase() != resource.PhaseTearingDown || !md.Finalizers().Empty() {
					fmt.Fprintf(&b, " %s %s: %s with finalizers %v, want tearing down without;", chainLetter(k), id, md.Phase(), *md.Finalizers())
				}
			case !running:
				fmt.Fprintf(&b, " %s %s: an orphan;", chainLetter(k), id)
			case chainN(r) != n+k || md.Phase() != resource.PhaseRunning || md.Owner() != owner || !slices.Equal(*md.Finalizers(), fins):
				fmt.Fprintf(&b, " %s %s: N %d %s owner %q finalizers %v, want N %d running owner %q finalizers %v;",
					chainLetter(k), id, chainN(r), md.Phase(), md.Owner(), *md.Finalizers(), n+k, owner, fins)
			}
		}
		for _, id := range slices.Sorted(maps.Keys(x.running)) {
			if !seen[id] {
				fmt.Fprintf(&b, " %s %s: missing;", chainLetter(k), id)
			}
		}
		if k == 0 {
			for id := range x.tearingDown {
				if !seen[id] {
					fmt.Fprintf(&b, " A %s (tearing down): missing;", id)
				}
			}
		}
	}
	return b.String()
}

func chainLetter(k int) string { return string(rune('A' + k)) }

// waitChain waits until the chain in st is at the fixed point x, reading
// every kind again whenever one changes, and fails the test after timeout
// with how it differs.
func waitChain(t *testing.T, st state.State, x chainExpect, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	changed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, k := range chainKinds {
		ch := make(chan []state.Event, 1)
		require.NoError(t, st.WatchKindAggregated(ctx, k, ch))
		wg.Go(func() {
			for {
				select {
				case <-ch:
					select {
					case changed <- struct{}{}:
					default:
					}
				case <-ctx.Done():
					return
				}
			}
		})
	}
	last := ""
	for {
		lists := make([][]resource.Resource, len(chainKinds))
		for i, k := range chainKinds {
			l, err := st.List(ctx, k)
			if err != nil {
				t.Fatalf("the chain did not reach its fixed point within %s: %v; last difference:%s", timeout, err, last)
			}
			lists[i] = l.Items
		}
		if last = x.diff(lists); last == "" {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("the chain did not reach its fixed point within %s:%s", timeout, last)
		}
	}
}

// kindWrites returns how many writes each kind of the chain received
// since it was first written: the etcd version of its head key, which
// every write of the state puts.
func kindWrites(t testing.TB, prefix string) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := make([]int64, len(chainKinds))
	for i, k := range chainKinds {
		resp, err := client.Get(ctx, prefix+k.Namespace()+"/"+k.Type()+"/")
		require.NoError(t, err)
		if len(resp.Kvs) > 0 {
			out[i] = resp.Kvs[0].Version
		}
	}
	return out
}

// TestTwoProcesses_SplitChainConverges: two Runtimes in two OS processes
// share one etcd, each running half of the chain A→B→C→D→E with input
// finalizers (process 1 A→B→C, process 2 C→D→E: both write C, its spec
// and its finalizer). They converge on create, update and teardown with a
// bounded number of writes (no conflict loop); killing either process
// with SIGKILL mid-run and starting it again converges to the same fixed
// point, with no orphan.
func TestTwoProcesses_SplitChainConverges(t *testing.T) {
	t.Parallel() // with the fault tests: its own prefix, its own processes
	const n = 100
	prefix := newPrefix()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := etcd.New(ctx, client, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	first, second := []string{"AtoB", "BtoC"}, []string{"CtoD", "DtoE"}
	p1 := startChild(t, "p1", prefix, true, first...)
	p2 := startChild(t, "p2", prefix, true, second...)

	x := chainExpect{running: map[resource.ID]int{}, tearingDown: map[resource.ID]bool{}, finalizers: true}
	id := func(i int) resource.ID { return fmt.Sprintf("a%03d", i) }
	for i := range n {
		require.NoError(t, st.Create(ctx, newChainA(id(i), i)))
		x.running[id(i)] = i
	}
	waitChain(t, st, x, time.Minute)
	created := kindWrites(t, prefix)
	t.Logf("create: writes per kind %v", created)

	// Update every A; process 2 is killed half-way and started again.
	for i := range n {
		if i == n/2 {
			p2.kill()
		}
		require.NoError(t, st.Modify(ctx, newChainA(id(i), 0), func(r resource.Resource) error {
			r.(*chainA).TypedSpec().N = i + 1000
			return nil
		}))
		x.running[id(i)] = i + 1000
	}
	p2 = startChild(t, "p2 again", prefix, true, second...)
	waitChain(t, st, x, time.Minute)
	updated := kindWrites(t, prefix)
	t.Logf("update: writes per kind %v", updated)

	// Tear a quarter of the As down; process 1 is killed half-way and
	// started again; destroy them once the chain let go of them.
	for i := range n / 4 {
		if i == n/8 {
			p1.kill()
		}
		_, err := st.Teardown(ctx, resource.NewPointer(chainNS, chainKinds[0].Type(), id(i)))
		require.NoError(t, err)
		delete(x.running, id(i))
		x.tearingDown[id(i)] = true
	}
	p1 = startChild(t, "p1 again", prefix, true, first...)
	waitChain(t, st, x, time.Minute)
	for i := range n / 4 {
		require.NoError(t, st.Destroy(ctx, resource.NewPointer(chainNS, chainKinds[0].Type(), id(i))))
		delete(x.tearingDown, id(i))
	}
	waitChain(t, st, x, time.Minute)

	c1, c2 := p1.stop(t), p2.stop(t)
	total := kindWrites(t, prefix)
	t.Logf("teardown and destroy: writes per kind %v; the last runs of the processes: %+v, %+v", total, c1, c2)

	// The writes the chain needs — create: each stage writes its output
	// once and its finalizer on its input once; update: one write per
	// resource; teardown of q As: teardown, finalizer removal and destroy
	// of each resource (E has no finalizer) — and no more than a tenth
	// more: a write that loses a race is retried after a conflict, which
	// writes nothing, and a restarted Runtime rewrites no output that is
	// already right. A conflict loop would go far beyond.
	q := int64(n / 4)
	need := []int64{2*n + n + 3*q, 2*n + n + 3*q, 2*n + n + 3*q, 2*n + n + 3*q, n + n + 2*q}
	for k := range need {
		assert.GreaterOrEqual(t, total[k], need[k], "writes to %s", chainLetter(k))
		assert.LessOrEqual(t, total[k], need[k]+need[k]/10, "writes to %s (needed: %d)", chainLetter(k), need[k])
	}
	assert.LessOrEqual(t, c1.Conflicts+c2.Conflicts, int64(n/10), "conflicts in the last runs of the Runtimes")
}
