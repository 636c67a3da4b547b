package inmem

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestStateConformanceBoxedItems runs the suite with every version
// stored boxed (sizes tracked from the first write): everything that
// reads a kind's items takes the version out of its box.
func TestStateConformanceBoxedItems(t *testing.T) {
	suite.Run(t, &conformance.StateSuite{
		NewState:        func() state.State { return NewState(WithHistoryCapacity(64), withTrackedSizes()) },
		HistoryCapacity: 64,
	})
}

// TestStateConformanceGuardSampled runs the suite under the guard
// sampling every other write: sampled versions are boxed, the others
// bare, and writes go from one to the other.
func TestStateConformanceGuardSampled(t *testing.T) {
	suite.Run(t, &conformance.StateSuite{
		NewState:        func() state.State { return NewState(WithHistoryCapacity(64), withGuardEvery(2)) },
		HistoryCapacity: 64,
	})
}

// boxes counts the boxed values among the kind's items.
func boxes(ks *kindStore) (n int) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	for _, v := range ks.items {
		if _, ok := v.(*boxed); ok {
			n++
		}
	}
	return n
}

// TestItemsHoldTheVersionBareUnlessSampledOrTracked: an entry of a
// kind's items is an ID and an interface value (32 bytes); a version is
// stored bare unless the guard sampled it or the kind tracks sizes, so
// that writes and reads of most versions touch no box.
func TestItemsHoldTheVersionBareUnlessSampledOrTracked(t *testing.T) {
	var slot struct {
		id resource.ID
		v  resource.Resource
	}
	assert.Equal(t, uintptr(32), unsafe.Sizeof(slot), "an ID and an interface value")

	for _, tc := range []struct {
		name      string
		opts      []Option
		wantBoxes int
	}{
		{"detector off", []Option{withoutMutationDetector()}, 0},
		{"detector", []Option{WithMutationDetector(nil)}, 0},
		{"guard", []Option{WithMutationGuard()}, 4}, // the first of every 128 writes: 0, 128, 256, 384 of 400 creates
		{"tracked sizes", []Option{withoutMutationDetector(), withTrackedSizes()}, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(tc.opts...)
			st, ctx := state.WrapCore(c), t.Context()
			for i := range 400 {
				require.NoError(t, st.Create(ctx, newPair(fmt.Sprintf("r%03d", i), i)))
			}
			ks := c.lookup(resource.KindOf(testKind))
			assert.Equal(t, tc.wantBoxes, boxes(ks))
			ks.mu.Lock()
			assert.Equal(t, tc.name == "tracked sizes", ks.tracking, "small versions under the default bound are not tracked")
			ks.mu.Unlock()
		})
	}
}

// blob returns a resource of about n bytes (see typed's ApproxSize).
func blob(id string, n int) resource.Resource {
	return typed.NewDefault[blobSpec, blobDef](id, blobSpec{Data: make([]byte, n)})
}

// keptBytes returns the estimated sizes of the versions the kept records
// of ks replaced, each estimated by sizeOf now, and the history's own
// count of them.
func keptBytes(ks *kindStore) (real, counted int64) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	head := ks.head.Load()
	for s := ks.oldest(head); s <= head; s++ {
		if rec := ks.recordLocked(s); rec != nil && rec.old != nil {
			real += sizeOf(rec.old)
		}
	}
	return real, ks.histBytes
}

// TestHistoryBytesCountAtLeastTheVersionsSizes: whether the kind tracks
// sizes or counts a bare version as the largest size it stored, the
// history's count of its replaced versions' bytes is never below their
// estimated sizes, and stays within the bound unless the history keeps
// the newest change alone; versions stored before the kind tracks sizes
// count as its largest size then (an upper bound), versions stored after
// as their own size.
func TestHistoryBytesCountAtLeastTheVersionsSizes(t *testing.T) {
	const capacity, budget = 64, 64 << 10 // tracked once a version is over 1 KiB
	c := newCore(withoutMutationDetector(), WithHistoryCapacity(capacity), WithHistoryBytes(budget))
	st, ctx := state.WrapCore(c), t.Context()
	ks := c.store(resource.KindOf(blobKind))
	rng := rand.New(rand.NewPCG(1, 2))
	const ids = 40
	for i := range ids {
		require.NoError(t, st.Create(ctx, blob(fmt.Sprintf("b%02d", i), rng.IntN(512))))
	}
	check := func(step string) {
		t.Helper()
		real, counted := keptBytes(ks)
		require.GreaterOrEqual(t, counted, real, "%s: the count is an upper bound", step)
		ks.mu.Lock()
		kept := ks.head.Load() - ks.oldest(ks.head.Load()) + 1
		ks.mu.Unlock()
		if kept > 1 {
			require.LessOrEqual(t, counted, int64(budget), "%s: within the bound", step)
		}
	}
	update := func(i, size int) {
		t.Helper()
		r, err := st.Get(ctx, resource.NewPointer(testNS, blobKind.Type(), fmt.Sprintf("b%02d", i)))
		require.NoError(t, err)
		r.(*typed.Resource[blobSpec, blobDef]).TypedSpec().Data = make([]byte, size)
		require.NoError(t, st.Update(ctx, r))
	}
	for step := range 200 {
		update(rng.IntN(ids), rng.IntN(512))
		check(fmt.Sprintf("small %d", step))
	}
	ks.mu.Lock()
	require.False(t, ks.tracking, "small versions: no tracking")
	largest := ks.maxSize
	ks.mu.Unlock()
	_, before := keptBytes(ks)
	assert.Equal(t, int64(capacity)*largest, before, "a full ring of bare versions counts as the largest size each")

	update(0, 4<<10) // the bound is reachable from now on
	ks.mu.Lock()
	require.True(t, ks.tracking)
	untracked := ks.untracked
	ks.mu.Unlock()
	require.GreaterOrEqual(t, untracked, largest)
	for step := range 400 {
		update(rng.IntN(ids), rng.IntN(3<<10))
		check(fmt.Sprintf("tracked %d", step))
	}
	for i := range ids { // every version stored while tracking: counted as itself
		update(i, 100)
	}
	for i := range ids {
		update(i, 100)
	}
	real, counted := keptBytes(ks)
	assert.Equal(t, real, counted, "versions stored while tracking count as their own size")
}

// sizePanics is a test resource whose ApproxSize (user code) panics.
type sizePanics struct{ *pair }

func (s sizePanics) DeepCopy() resource.Resource { return sizePanics{s.pair.DeepCopy().(*pair)} }
func (s sizePanics) ApproxSize() int             { panic("no size") }

// TestWrite_APanickingApproxSizeCountsAsTheDefault: a resource's
// ApproxSize is user code, run with its DeepCopy under one recover; a
// panic in it counts as the default size and the write goes through, as
// a copy or as the given resource itself.
func TestWrite_APanickingApproxSizeCountsAsTheDefault(t *testing.T) {
	c := newCore(withTrackedSizes())
	st, ctx := state.WrapCore(c), t.Context()
	require.NoError(t, st.Create(ctx, sizePanics{newPair("s", 1)}))
	owned := sizePanics{newPair("o", 1)}
	require.NoError(t, c.CreateOwned(ctx, owned, state.CreateOptions{}))
	r, err := st.Get(ctx, ptr("s"))
	require.NoError(t, err)
	assert.Equal(t, 1, specA(t, r.(sizePanics).pair))
	r.(sizePanics).TypedSpec().A = 2
	require.NoError(t, st.Update(ctx, r))
	ks := c.lookup(resource.KindOf(testKind))
	ks.mu.Lock()
	defer ks.mu.Unlock()
	for _, id := range []resource.ID{"s", "o"} {
		b, ok := ks.items[id].(*boxed)
		require.True(t, ok, id)
		assert.Equal(t, int64(defaultResourceSize), b.size, id)
	}
	assert.Same(t, owned.pair, bare(ks.items["o"]).(sizePanics).pair, "owned: stored itself")
}
