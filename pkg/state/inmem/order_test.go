package inmem

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestS12a_OrderFollowsCreatesAndDestroys: the order a List follows is
// the sorted keys of the store after any sequence of creates (in order
// and not), destroys and creates again between Lists, and a burst of
// creates leaves no storage behind. It tells when the IDs of the previous
// List are still at their index.
func TestS12a_OrderFollowsCreatesAndDestroys(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for round := range 20 {
		items := itemMap{}
		var o idOrder
		var prev []resource.ID
		for range 20 {
			ops := rng.IntN(1000)
			ascending := rng.IntN(3) == 0
			for k := range ops {
				id := fmt.Sprintf("r%05d", rng.IntN(1000))
				if ascending {
					id = fmt.Sprintf("s%03d-%05d", round, k)
				}
				if _, ok := items[id]; ok {
					delete(items, id)
					o.destroyed()
					continue
				}
				items[id] = nil
				o.created(id)
			}
			want := slices.Sorted(func(yield func(resource.ID) bool) {
				for id := range items {
					if !yield(id) {
						return
					}
				}
			})
			got, kept := o.ids(items)
			// slices.Equal: an empty store's order may be nil or empty.
			require.True(t, slices.Equal(want, got), "round %d: got %v, want %v", round, got, want)
			// kept: the IDs of the previous call, all or none, at the same
			// index.
			require.True(t, kept == 0 || kept == len(prev), "round %d: kept %d of %d", round, kept, len(prev))
			require.True(t, slices.Equal(prev[:kept], got[:kept]), "round %d", round)
			prev = slices.Clone(got)
			require.LessOrEqual(t, cap(o.added), addedKeep)
		}
	}
}

// TestS12a_ListAfterWritesIsTheStore: a List after any mix of creates (in
// order and not), updates (few, and more than the kept view follows) and
// destroys since the previous List holds exactly the stored resources, in
// ID order — the stored snapshots themselves (a read-only List), as a
// read-only Get returns them — and so do bootstrap contents; a destroy
// lets go of the resources the last List held.
func TestS12a_ListAfterWritesIsTheStore(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	st, ctx := newTestState(t, withoutMutationDetector())
	model := map[string]int{}
	next := 0
	for round := range 300 {
		ops := rng.IntN(60)
		mode := rng.IntN(4) // 0: creates in order, 1: any, 2: updates only, 3: updates and destroys
		known := slices.Sorted(maps.Keys(model))
		for range ops {
			var id string
			switch {
			case mode == 0:
				next++
				id = fmt.Sprintf("s%06d", next)
			case mode == 1:
				id = fmt.Sprintf("r%04d", rng.IntN(400))
			default:
				if len(known) == 0 {
					continue
				}
				id = known[rng.IntN(len(known))]
			}
			_, exists := model[id]
			if !exists && mode >= 2 {
				continue // destroyed in this round
			}
			switch {
			case !exists:
				require.NoError(t, st.Create(ctx, newPair(id, round)))
				model[id] = round
			case mode == 3 && rng.IntN(4) == 0:
				require.NoError(t, st.Destroy(ctx, ptr(id)))
				delete(model, id)
			default:
				a := rng.IntN(1 << 30)
				mustUpdate(t, ctx, st, id, a)
				model[id] = a
			}
		}
		want := slices.Sorted(maps.Keys(model))
		check := func(what string, items []resource.Resource) {
			t.Helper()
			require.Len(t, items, len(want), "round %d: %s", round, what)
			for i, r := range items {
				id := r.Metadata().ID()
				if id != want[i] || r.(*pair).TypedSpec().A != model[id] {
					t.Fatalf("round %d: %s: item %d is %s with A=%d, want %s with A=%d", round, what, i, id, r.(*pair).TypedSpec().A, want[i], model[want[i]])
				}
				if cur, err := st.Get(ctx, ptr(id), state.WithReadOnlyGet()); err != nil || cur != r {
					t.Fatalf("round %d: %s of %s is not the stored snapshot (%v)", round, what, id, err)
				}
			}
		}
		list, err := st.List(ctx, testKind, state.WithReadOnlyList())
		require.NoError(t, err)
		check("List", list.Items)
		if round%10 == 0 {
			wctx, cancel := context.WithCancel(ctx)
			ch := make(chan []state.Event, 1)
			require.NoError(t, st.WatchKindAggregated(wctx, testKind, ch, state.WithBootstrapContents(true)))
			var boot []resource.Resource
			for done := false; !done; {
				select {
				case batch := <-ch:
					for _, ev := range batch {
						if ev.Type == state.Bootstrapped {
							done = true
							break
						}
						boot = append(boot, ev.Resource)
					}
				case <-time.After(testTimeout):
					t.Fatal("no bootstrap")
				}
			}
			cancel()
			check("bootstrap", boot)
		}
	}

	// A destroy lets go of the resources the last List held (the view
	// would keep the destroyed one); updates do not.
	core := newCore(withoutMutationDetector())
	st = state.WrapCore(core)
	for i := range 100 {
		require.NoError(t, st.Create(ctx, newPair(fmt.Sprintf("r%03d", i), 0)))
	}
	_, err := st.List(ctx, testKind, state.WithReadOnlyList())
	require.NoError(t, err)
	ks := core.lookup(resource.KindOf(testKind))
	mustUpdate(t, ctx, st, "r001", 1)
	assert.Len(t, ks.view, 100, "kept after an update")
	require.NoError(t, st.Destroy(ctx, ptr("r050")))
	assert.Empty(t, ks.view, "kept after a destroy")
	assert.Equal(t, make([]unsafe.Pointer, 100), ks.view[:100], "the storage kept holds no resource")
}

// TestIDOrderOfAKindListedOnceStaysBounded: a kind listed once and then
// only created into keeps no more IDs for its order than the larger of
// addedKeep and the IDs it had at that List, and its next List is still
// the sorted store.
func TestIDOrderOfAKindListedOnceStaysBounded(t *testing.T) {
	items := itemMap{}
	var o idOrder
	for i := range 100 {
		id := fmt.Sprintf("a%05d", i)
		items[id] = nil
		o.created(id)
	}
	o.ids(items)
	for i := range 10 * addedKeep {
		id := fmt.Sprintf("b%05d", i)
		items[id] = nil
		o.created(id)
		require.LessOrEqual(t, len(o.added), addedKeep)
	}
	got, kept := o.ids(items)
	assert.Equal(t, slices.Sorted(maps.Keys(items)), got)
	assert.Zero(t, kept)
}

// TestIDOrderOfAKindListedEmptyKeepsNothing: a kind listed while it had
// no resource keeps no order for the IDs created after (its writers pay
// nothing for it), and its next List is still the sorted store.
func TestIDOrderOfAKindListedEmptyKeepsNothing(t *testing.T) {
	items := itemMap{}
	var o idOrder
	got, kept := o.ids(items)
	assert.Empty(t, got)
	assert.Zero(t, kept)
	for i := range 100 {
		id := fmt.Sprintf("a%05d", 99-i)
		items[id] = nil
		o.created(id)
	}
	assert.Nil(t, o.added, "an order kept for a kind listed empty")
	got, kept = o.ids(items)
	assert.Equal(t, slices.Sorted(maps.Keys(items)), got)
	assert.Zero(t, kept)
}
