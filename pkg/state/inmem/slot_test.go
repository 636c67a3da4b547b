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
	for _, e := range ks.items {
		if boxOf(e) != nil {
			n++
		}
	}
	return n
}

// TestItemsHoldAPointerToTheVersionBareUnlessSampledOrTracked: an entry
// of a kind's items is an ID and a pointer (24 bytes, as a map of
// pointers to structs); a version is stored bare (the entry is its data
// word) unless the guard sampled it or the kind tracks sizes, so that
// writes and reads of most versions touch no box.
func TestItemsHoldAPointerToTheVersionBareUnlessSampledOrTracked(t *testing.T) {
	var slot struct {
		id resource.ID
		e  unsafe.Pointer
	}
	assert.Equal(t, uintptr(24), unsafe.Sizeof(slot), "an ID and a pointer")
	var items itemMap
	assert.IsType(t, map[resource.ID]unsafe.Pointer(nil), items, "the entry is a pointer")

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
	head := ks.seq
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
		kept := ks.seq - ks.oldest(ks.seq) + 1
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
		b := boxOf(ks.items[id])
		require.NotNil(t, b, id)
		assert.Equal(t, int64(defaultResourceSize), b.size, id)
	}
	assert.Same(t, owned.pair, ks.bare(ks.items["o"]).(sizePanics).pair, "owned: stored itself")
}

// TestItemsBoxAVersionOfAnotherTypeThanTheKinds: a kind holds bare the
// versions of the type word it took while it stored nothing; a version of
// another type (a pointer-shaped one here, whose data word is a *pair as
// the kind's are) is boxed, and every read gives each version as it was
// written: Get, List (its first and from its kept view), a watch's events
// and the history. Once the kind
// stores nothing again, it takes the next version's type word.
func TestItemsBoxAVersionOfAnotherTypeThanTheKinds(t *testing.T) {
	c := newCore(withoutMutationDetector())
	st, ctx := state.WrapCore(c), t.Context()
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	ks := c.lookup(resource.KindOf(testKind))
	events := make(chan state.Event, 16)
	require.NoError(t, st.WatchKind(ctx, testKind, events, state.WithBootstrapContents(false)))
	require.NoError(t, st.Create(ctx, sizePanics{newPair("b", 2)}))
	assert.Equal(t, 1, boxes(ks), "the version of another type")

	a, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	assert.Equal(t, 1, specA(t, a.(*pair)))
	b, err := st.Get(ctx, ptr("b"))
	require.NoError(t, err)
	assert.Equal(t, 2, specA(t, b.(sizePanics).pair))
	l, err := st.List(ctx, testKind)
	require.NoError(t, err)
	require.Len(t, l.Items, 2)
	assert.IsType(t, (*pair)(nil), l.Items[0])
	assert.IsType(t, sizePanics{}, l.Items[1])

	b.(sizePanics).TypedSpec().A = 3
	require.NoError(t, st.Update(ctx, b)) // boxed, replacing a boxed one
	l, err = st.List(ctx, testKind)       // from the List's kept view
	require.NoError(t, err)
	require.Len(t, l.Items, 2)
	assert.Equal(t, 1, specA(t, l.Items[0].(*pair)))
	assert.Equal(t, 3, specA(t, l.Items[1].(sizePanics).pair))
	require.NoError(t, st.Destroy(ctx, ptr("a")))
	require.NoError(t, st.Destroy(ctx, ptr("b")))
	for _, want := range []struct {
		typ        state.EventType
		old, new   any
		oldA, newA int
	}{
		{state.Created, nil, sizePanics{}, 0, 2},
		{state.Updated, sizePanics{}, sizePanics{}, 2, 3},
		{state.Destroyed, (*pair)(nil), nil, 1, 0},
		{state.Destroyed, sizePanics{}, nil, 3, 0},
	} {
		ev := <-events
		require.Equal(t, want.typ, ev.Type)
		if want.new != nil {
			require.IsType(t, want.new, ev.Resource)
			assert.Equal(t, want.newA, specA(t, pairOf(ev.Resource)))
		}
		if want.old != nil {
			require.IsType(t, want.old, ev.Old)
			assert.Equal(t, want.oldA, specA(t, pairOf(ev.Old)))
		}
	}

	require.NoError(t, st.Create(ctx, sizePanics{newPair("c", 4)}))
	assert.Equal(t, 0, boxes(ks), "an empty kind takes the type word of its next version")
	r, err := st.Get(ctx, ptr("c"))
	require.NoError(t, err)
	assert.Equal(t, 4, specA(t, r.(sizePanics).pair))
}

// pairOf returns the *pair of r, a *pair or a sizePanics.
func pairOf(r resource.Resource) *pair {
	if s, ok := r.(sizePanics); ok {
		return s.pair
	}
	return r.(*pair)
}

// oddRes is a pointer-shaped resource whose data word is odd: it points
// to the second byte of its backing, as a pointer into bytes may.
type oddRes struct{ b *byte }

// oddBacking is what an oddRes points into.
type oddBacking struct {
	bytes [8]byte
	md    resource.Metadata
	a     int
}

func newOdd(id string, a int) oddRes {
	o := &oddBacking{md: resource.NewMetadata(testNS, testType, id, resource.VersionUndefined), a: a}
	return oddRes{&o.bytes[1]}
}

func (r oddRes) backing() *oddBacking {
	return (*oddBacking)(unsafe.Add(unsafe.Pointer(r.b), -1))
}

func (r oddRes) Metadata() *resource.Metadata { return &r.backing().md }
func (r oddRes) Spec() any                    { return r.backing().a }
func (r oddRes) DeepCopy() resource.Resource {
	c := newOdd("", r.backing().a)
	r.backing().md.CopyInto(&c.backing().md)
	return c
}

// TestItemsBoxAVersionWhoseDataWordLooksTagged: a version whose data word
// is odd cannot be stored bare (the entry would read as a box): it is
// boxed, and read back as it was written, alone in its kind (whose type
// word is its own) or not.
func TestItemsBoxAVersionWhoseDataWordLooksTagged(t *testing.T) {
	c := newCore(withoutMutationDetector())
	st, ctx := state.WrapCore(c), t.Context()
	require.NoError(t, st.Create(ctx, newOdd("o", 7)))
	ks := c.lookup(resource.KindOf(testKind))
	assert.Equal(t, 1, boxes(ks))
	require.NoError(t, st.Create(ctx, newOdd("p", 8)))
	for id, a := range map[string]int{"o": 7, "p": 8} {
		r, err := st.Get(ctx, ptr(id))
		require.NoError(t, err)
		require.IsType(t, oddRes{}, r)
		assert.Equal(t, a, r.Spec(), id)
		assert.Equal(t, id, r.Metadata().ID())
	}
	assert.Equal(t, 2, boxes(ks))
}
