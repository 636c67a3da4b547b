package inmem

import (
	"bytes"
	"fmt"
	"log"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestS7_GuardChecksASampleOfTheVersions: the production guard keeps a
// reference copy of the first of every guardSample writes of a kind (and
// of nothing else), checks those versions as the detector does, tracks no
// holders, and reports a change it finds to the state's own report.
func TestS7_GuardChecksASampleOfTheVersions(t *testing.T) {
	rep := &reports{}
	c := newCore(WithMutationGuard(), WithMutationReport(rep.report))
	st, ctx := state.WrapCore(c), t.Context()
	assert.False(t, st.(state.SnapshotTracker).TracksSnapshots(), "the guard tracks no holders")
	const n = 3 * guardSample
	for i := range n {
		require.NoError(t, st.Create(ctx, newPair(fmt.Sprintf("r%03d", i), i)))
	}
	ks := c.lookup(resource.KindOf(testKind))
	ks.mu.Lock()
	sampled := len(ks.det.cur)
	ks.mu.Unlock()
	assert.Equal(t, 3, sampled, "one version in %d", guardSample)

	// r000 (the kind's first write) is sampled; r001 is not.
	getRO(t, st, "r000").(*pair).TypedSpec().A = 1000
	getRO(t, st, "r001").(*pair).TypedSpec().A = 1001
	mustUpdate(t, ctx, st, "r000", 1)
	mustUpdate(t, ctx, st, "r001", 1)
	got := rep.take(t)
	require.Len(t, got, 1, "the sampled version only")
	assert.Equal(t, "r000", got[0].Resource.ID())
	assert.Empty(t, got[0].Holders)
}

// TestS7_GuardSamplesTheFirstOfEveryNWrites: the guard keeps a reference
// copy of exactly the first of every n writes of a kind, whether n is a
// power of two (the count is masked) or not (it is divided).
func TestS7_GuardSamplesTheFirstOfEveryNWrites(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 12, guardSample} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c := newCore(withGuardEvery(uint64(n)), WithMutationReport(func(error) {}))
			st, ctx := state.WrapCore(c), t.Context()
			writes := 3*n + 2
			for i := range writes {
				require.NoError(t, st.Create(ctx, newPair(fmt.Sprintf("r%04d", i), i)))
			}
			ks := c.lookup(resource.KindOf(testKind))
			ks.mu.Lock()
			defer ks.mu.Unlock()
			for i := range writes {
				_, sampled := ks.det.cur[fmt.Sprintf("r%04d", i)]
				assert.Equal(t, i%n == 0, sampled, "write %d of every %d", i+1, n)
			}
		})
	}
}

// TestS7_GuardNotifiesItsSubscribers: without a report of its own, the
// guard hands what it finds to the readers subscribed to it (the Runtime
// names the holders), and with none it logs it with the standard logger;
// the detector notifies nobody.
func TestS7_GuardNotifiesItsSubscribers(t *testing.T) {
	c := newCore(WithMutationGuard())
	st, ctx := state.WrapCore(c), t.Context()
	var mu sync.Mutex
	var notified []string
	stop := st.(state.MutationNotifier).NotifyMutations(func(p resource.Pointer, v resource.Version, err error) {
		mu.Lock()
		notified = append(notified, fmt.Sprintf("%s@%s: %v", p.ID(), v, err))
		mu.Unlock()
	})
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	getRO(t, st, "a").(*pair).TypedSpec().A = 2
	mustUpdate(t, ctx, st, "a", 3)
	mu.Lock()
	require.Len(t, notified, 1)
	assert.Contains(t, notified[0], "a@1: inmem: mutation detector")
	mu.Unlock()

	stop()
	prev := log.Writer()
	var out bytes.Buffer
	log.SetOutput(&out)
	defer log.SetOutput(prev)
	ks := c.lookup(resource.KindOf(testKind))
	sampled := func() bool {
		ks.mu.Lock()
		defer ks.mu.Unlock()
		return ks.det.cur["a"] != nil
	}
	for i := 0; !sampled(); i++ {
		require.Less(t, i, guardSample, "a version of a is sampled within %d writes", guardSample)
		mustUpdate(t, ctx, st, "a", i+10)
	}
	getRO(t, st, "a").(*pair).TypedSpec().A = -1
	mustUpdate(t, ctx, st, "a", 100)
	assert.Contains(t, out.String(), "ERROR inmem: mutation detector: Pairs.test.resgraph.dev(default/a)")
	mu.Lock()
	assert.Len(t, notified, 1, "no longer subscribed")
	mu.Unlock()

	rep := &reports{}
	det, _ := newTestState(t, WithMutationDetector(rep.report))
	called := false
	defer det.(state.MutationNotifier).NotifyMutations(func(resource.Pointer, resource.Version, error) { called = true })()
	require.NoError(t, det.Create(ctx, newPair("a", 1)))
	getRO(t, det, "a").(*pair).TypedSpec().A = 2
	mustUpdate(t, ctx, det, "a", 3)
	assert.Len(t, rep.take(t), 1, "the detector reports to its report")
	assert.False(t, called, "and notifies nobody")
}

// TestS7_GuardNeverPersistsAChangeMadeInPlace: a persistent state checks
// every version a write replaces before the write reaches its
// Persistence, with the guard (which watches every version of a
// persistent state) as with the detector: a version changed in place is
// reported, restored as it was written, and the write refused with a
// version conflict, so the writes that copy the stored version — a
// finalizer edit, Modify, a Get and Update — retry on the version
// restored and persist only their own change. Issue 27: a TransformFunc
// that changed its input in place had the next finalizer edit persist the
// change.
func TestS7_GuardNeverPersistsAChangeMadeInPlace(t *testing.T) {
	for name, mode := range map[string]Option{"guard": WithMutationGuard(), "detector": WithMutationDetector(nil)} {
		t.Run(name, func(t *testing.T) {
			rep := &reports{}
			p := &diskPersistence{}
			st, ctx := newTestState(t, WithPersistence(p), mode, WithMutationReport(rep.report))
			require.NoError(t, st.Create(ctx, newPair("x", 1)))
			getRO(t, st, "x").(*pair).TypedSpec().A = 42 // a user function's bug

			require.NoError(t, st.AddFinalizer(ctx, ptr("x"), "f"), "retried on the version restored")
			require.Len(t, rep.take(t), 1, "reported once")
			getRO(t, st, "x").(*pair).TypedSpec().A = 43
			require.NoError(t, st.Modify(ctx, newPair("x", 0), func(r resource.Resource) error {
				r.Metadata().Labels().Set("k", "v")
				return nil
			}))
			getRO(t, st, "x").(*pair).TypedSpec().A = 44
			r, err := st.Get(ctx, ptr("x"))
			require.NoError(t, err)
			r.Metadata().Labels().Set("k", "w")
			assert.True(t, state.IsConflictError(st.Update(ctx, r)), "a Get and Update of the changed version is refused")
			require.Len(t, rep.take(t), 2)

			p.mu.Lock()
			defer p.mu.Unlock()
			for _, c := range p.log {
				assert.Equal(t, 1, c.r.(*pair).TypedSpec().A, "persisted: %v", c.r.Metadata())
			}
			require.Len(t, p.log, 3, "create, finalizer, label")
			assert.True(t, p.log[1].r.Metadata().Finalizers().Has("f"))
			v, _ := p.log[2].r.Metadata().Labels().Get("k")
			assert.Equal(t, "v", v)
			cur, err := st.Get(ctx, ptr("x"))
			require.NoError(t, err)
			assert.Equal(t, 1, cur.(*pair).TypedSpec().A, "the state serves the version as written")
		})
	}
}

// diskPersistence logs a copy of every resource appended, as a Persistence
// that encodes it at Append keeps what it was then.
type diskPersistence struct{ logPersistence }

func (p *diskPersistence) Append(ns resource.Namespace, typ resource.Type, id resource.ID, r resource.Resource) (Pending, error) {
	if r != nil {
		r = r.DeepCopy()
	}
	return p.logPersistence.Append(ns, typ, id, r)
}
