package inmem

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestS1_CreateStoresVersionOwnerPhaseTimestamps(t *testing.T) {
	st, ctx := newTestState(t)
	r := newPair("a", 1)
	require.NoError(t, r.Metadata().SetOwner("carried-by-resource"))
	r.Metadata().SetPhase(resource.PhaseTearingDown)
	r.Metadata().SetVersion(resource.NewVersion(42))
	r.Metadata().Finalizers().Add("fin")
	r.Metadata().Labels().Set("k", "v")

	before := time.Now()
	require.NoError(t, st.Create(ctx, r, state.WithCreateOwner("ctrl")))

	got, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	md := got.Metadata()
	assert.Equal(t, uint64(1), md.Version().Value(), "stored version")
	assert.Equal(t, "ctrl", md.Owner(), "owner comes from WithCreateOwner, not from the resource")
	assert.Equal(t, resource.PhaseRunning, md.Phase())
	assert.True(t, md.Finalizers().Has("fin"))
	assert.Equal(t, map[string]string{"k": "v"}, md.Labels().Raw())
	assert.False(t, md.Created().Before(before))
	assert.Equal(t, md.Created(), md.Updated())

	// Written back into the caller's resource.
	assert.Equal(t, uint64(1), r.Metadata().Version().Value())
	assert.Equal(t, md.Created(), r.Metadata().Created())
	assert.Equal(t, md.Updated(), r.Metadata().Updated())
}

func TestS1_CreateConflict(t *testing.T) {
	st, ctx := newTestState(t)
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	err := st.Create(ctx, newPair("a", 2))
	require.Error(t, err)
	assert.True(t, state.IsConflictError(err))
	assert.False(t, state.IsOwnerConflictError(err))
	assert.Contains(t, err.Error(), "a")

	got, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	assert.Equal(t, 1, specA(t, got), "the failed create wrote nothing")
}

func TestS1_CallerCanUpdateWithoutGet(t *testing.T) {
	st, ctx := newTestState(t)
	r := newPair("a", 1)
	require.NoError(t, st.Create(ctx, r))
	r.TypedSpec().A = 2
	require.NoError(t, st.Update(ctx, r))
	r.TypedSpec().A = 3
	require.NoError(t, st.Update(ctx, r))
	got, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	assert.Equal(t, uint64(3), version(got))
	assert.Equal(t, 3, specA(t, got))
}

func TestS2_Update(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, ctx context.Context, st state.State)
		write func(r *pair) // applied to the resource read back
		opts  []state.UpdateOption
		check func(error) bool
	}{
		{
			name:  "absent is not found",
			setup: func(*testing.T, context.Context, state.State) {},
			check: state.IsNotFoundError,
		},
		{
			name:  "stale version is a conflict",
			write: func(r *pair) { r.Metadata().SetVersion(resource.NewVersion(7)) },
			check: func(err error) bool {
				return state.IsConflictError(err) && !state.IsOwnerConflictError(err) && !state.IsPhaseConflictError(err)
			},
		},
		{
			name:  "owner differs from WithUpdateOwner",
			opts:  []state.UpdateOption{state.WithUpdateOwner("other")},
			check: state.IsOwnerConflictError,
		},
		{
			name: "owned resource updated without owner",
			setup: func(t *testing.T, ctx context.Context, st state.State) {
				require.NoError(t, st.Create(ctx, newPair("a", 0), state.WithCreateOwner("ctrl")))
			},
			check: state.IsOwnerConflictError,
		},
		{
			name: "phase not the expected running",
			setup: func(t *testing.T, ctx context.Context, st state.State) {
				require.NoError(t, st.Create(ctx, newPair("a", 0)))
				_, err := st.Teardown(ctx, ptr("a"))
				require.NoError(t, err)
			},
			check: state.IsPhaseConflictError,
		},
		{
			name: "phase not the expected tearing down",
			opts: []state.UpdateOption{state.WithExpectedPhase(resource.PhaseTearingDown)},
			check: func(err error) bool {
				return state.IsPhaseConflictError(err) && state.IsConflictError(err)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, ctx := newTestState(t)
			if tt.setup != nil {
				tt.setup(t, ctx, st)
			} else {
				require.NoError(t, st.Create(ctx, newPair("a", 0)))
			}
			var r *pair
			if got, err := st.Get(ctx, ptr("a")); err == nil {
				r = got.(*pair)
			} else {
				r = newPair("a", 0)
			}
			before := r.Metadata().Version()
			if tt.write != nil {
				tt.write(r)
			}
			r.TypedSpec().A = 99
			err := st.Update(ctx, r, tt.opts...)
			require.Error(t, err)
			assert.True(t, tt.check(err), "wrong error class: %v", err)
			if got, gerr := st.Get(ctx, ptr("a")); gerr == nil {
				assert.Equal(t, before, got.Metadata().Version(), "nothing written")
				assert.NotEqual(t, 99, specA(t, got), "nothing written")
			}
		})
	}
}

func TestS2_UpdateSuccess(t *testing.T) {
	st, ctx := newTestState(t)
	require.NoError(t, st.Create(ctx, newPair("a", 0), state.WithCreateOwner("ctrl")))
	stored, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	created := stored.Metadata().Created()

	r := stored.DeepCopy().(*pair)
	r.TypedSpec().A = 5
	require.NoError(t, r.Metadata().SetOwner(""))
	require.NoError(t, r.Metadata().SetOwner("someone-else"))
	r.Metadata().SetCreated(time.Time{})
	r.Metadata().SetPhase(resource.PhaseTearingDown)
	require.NoError(t, st.Update(ctx, r, state.WithUpdateOwner("ctrl")))

	assert.Equal(t, uint64(2), version(r), "next version written back")
	got, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	md := got.Metadata()
	assert.Equal(t, uint64(2), md.Version().Value())
	assert.Equal(t, "ctrl", md.Owner(), "stored owner kept, the resource's ignored")
	assert.True(t, created.Equal(md.Created()), "creation time kept")
	assert.False(t, md.Updated().Before(created))
	assert.Equal(t, md.Updated(), r.Metadata().Updated(), "updated time written back")
	assert.Equal(t, resource.PhaseTearingDown, md.Phase(), "phase comes from the resource")
	assert.Equal(t, 5, specA(t, got))
}

func TestS3_Destroy(t *testing.T) {
	st, ctx := newTestState(t)

	err := st.Destroy(ctx, ptr("a"))
	assert.True(t, state.IsNotFoundError(err), "absent: %v", err)

	r := newPair("a", 0)
	r.Metadata().Finalizers().Add("fin")
	require.NoError(t, st.Create(ctx, r, state.WithCreateOwner("ctrl")))

	err = st.Destroy(ctx, ptr("a"))
	assert.True(t, state.IsOwnerConflictError(err), "owner: %v", err)

	err = st.Destroy(ctx, ptr("a"), state.WithDestroyOwner("ctrl"))
	assert.True(t, state.IsPendingFinalizersError(err), "finalizers: %v", err)
	assert.True(t, state.IsConflictError(err), "pending finalizers is a conflict")

	_, err = st.Get(ctx, ptr("a"))
	require.NoError(t, err, "nothing destroyed so far")

	require.NoError(t, st.RemoveFinalizer(ctx, ptr("a"), "fin"))
	require.NoError(t, st.Destroy(ctx, ptr("a"), state.WithDestroyOwner("ctrl")))
	_, err = st.Get(ctx, ptr("a"))
	assert.True(t, state.IsNotFoundError(err))

	// A destroyed resource can be created again, from version 1.
	require.NoError(t, st.Create(ctx, newPair("a", 0)))
	got, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	assert.Equal(t, uint64(1), version(got))
}

func TestS7_CopiesOnWriteAndRead(t *testing.T) {
	st, ctx := newTestState(t)
	r := newPair("a", 1)
	r.Metadata().Labels().Set("k", "v")
	require.NoError(t, st.Create(ctx, r))

	// Mutating what was passed to Create changes nothing stored.
	r.TypedSpec().A = 100
	r.Metadata().Labels().Set("k", "mutated")

	got, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	assert.Equal(t, 1, specA(t, got))
	got.(*pair).TypedSpec().A = 200
	got.Metadata().Labels().Set("k", "mutated")
	got.Metadata().Finalizers().Add("x")

	list, err := st.List(ctx, testKind)
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	assert.Equal(t, 1, specA(t, list.Items[0]), "a Get result is a copy")
	assert.Equal(t, "v", mustLabel(t, list.Items[0], "k"))
	list.Items[0].(*pair).TypedSpec().A = 300

	again, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	assert.Equal(t, 1, specA(t, again), "a List result is a copy")
	assert.True(t, again.Metadata().Finalizers().Empty())

	// Mutating what was passed to Update changes nothing stored either.
	again.(*pair).TypedSpec().A = 2
	require.NoError(t, st.Update(ctx, again))
	again.(*pair).TypedSpec().A = 400
	final, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	assert.Equal(t, 2, specA(t, final))
}

func mustLabel(t *testing.T, r resource.Resource, key string) string {
	t.Helper()
	v, ok := r.Metadata().Labels().Get(key)
	require.True(t, ok)
	return v
}

// nilMetadata is a resource whose Metadata is nil.
type nilMetadata struct{}

func (nilMetadata) Metadata() *resource.Metadata { return nil }
func (nilMetadata) Spec() any                    { return nil }
func (nilMetadata) DeepCopy() resource.Resource  { return nilMetadata{} }

func TestBadInputIsInvalidAndWritesNothing(t *testing.T) {
	st, ctx := newTestState(t)
	ch := make(chan state.Event, 1)
	aggCh := make(chan []state.Event, 1)
	var typedNil *pair
	var nilMD *resource.Metadata
	noID := typedNewPair(testNS, testType, "")
	noNS := typedNewPair("", testType, "a")
	noType := typedNewPair(testNS, "", "a")
	badPhase := newPair("a", 0)
	badPhase.Metadata().SetPhase(resource.Phase(7))

	other := NewState()
	otherCh := make(chan state.Event, 4)
	require.NoError(t, other.Watch(ctx, ptr("x"), otherCh))
	foreign := recv(t, otherCh).Bookmark
	require.NotEmpty(t, foreign)

	ownCh := make(chan state.Event, 4)
	require.NoError(t, st.Watch(ctx, resource.NewPointer(testNS, "OtherType", "x"), ownCh))
	otherKind := recv(t, ownCh).Bookmark

	tests := map[string]func() error{
		"create nil":                  func() error { return st.Create(ctx, nil) },
		"create typed nil":            func() error { return st.Create(ctx, typedNil) },
		"create nil metadata":         func() error { return st.Create(ctx, nilMetadata{}) },
		"create empty id":             func() error { return st.Create(ctx, noID) },
		"create empty namespace":      func() error { return st.Create(ctx, noNS) },
		"create empty type":           func() error { return st.Create(ctx, noType) },
		"create unknown phase":        func() error { return st.Create(ctx, badPhase) },
		"update nil":                  func() error { return st.Update(ctx, nil) },
		"update typed nil":            func() error { return st.Update(ctx, typedNil) },
		"update empty id":             func() error { return st.Update(ctx, noID) },
		"get nil":                     func() error { _, err := st.Get(ctx, nil); return err },
		"get nil metadata pointer":    func() error { _, err := st.Get(ctx, nilMD); return err },
		"get empty id":                func() error { _, err := st.Get(ctx, ptr("")); return err },
		"destroy nil":                 func() error { return st.Destroy(ctx, nil) },
		"destroy empty id":            func() error { return st.Destroy(ctx, ptr("")) },
		"list nil kind":               func() error { _, err := st.List(ctx, nil); return err },
		"list empty type":             func() error { _, err := st.List(ctx, resource.NewKind(testNS, "")); return err },
		"watch nil pointer":           func() error { return st.Watch(ctx, nil, ch) },
		"watch nil channel":           func() error { return st.Watch(ctx, ptr("a"), nil) },
		"watch negative tail":         func() error { return st.Watch(ctx, ptr("a"), ch, state.WithTailEvents(-1)) },
		"watch malformed bookmark":    func() error { return st.Watch(ctx, ptr("a"), ch, state.WithStartFromBookmark([]byte("nope"))) },
		"watch empty bookmark":        func() error { return st.Watch(ctx, ptr("a"), ch, state.WithStartFromBookmark([]byte{})) },
		"watch foreign bookmark":      func() error { return st.Watch(ctx, ptr("x"), ch, state.WithStartFromBookmark(foreign)) },
		"watch other kind's bookmark": func() error { return st.Watch(ctx, ptr("x"), ch, state.WithStartFromBookmark(otherKind)) },
		"watch tail and bookmark": func() error {
			return st.Watch(ctx, ptr("x"), ch, state.WithTailEvents(1), state.WithStartFromBookmark(otherKind))
		},
		"watch kind nil kind":      func() error { return st.WatchKind(ctx, nil, ch) },
		"watch kind empty ns":      func() error { return st.WatchKind(ctx, resource.NewKind("", testType), ch) },
		"watch kind nil channel":   func() error { return st.WatchKind(ctx, testKind, nil) },
		"watch kind negative tail": func() error { return st.WatchKind(ctx, testKind, ch, state.WithKindTailEvents(-3)) },
		"watch kind foreign bookmark": func() error {
			return st.WatchKind(ctx, testKind, ch, state.WithKindStartFromBookmark(foreign))
		},
		"watch kind bootstrap and tail": func() error {
			return st.WatchKind(ctx, testKind, ch, state.WithBootstrapContents(true), state.WithKindTailEvents(2))
		},
		"aggregated nil channel": func() error { return st.WatchKindAggregated(ctx, testKind, nil) },
		"watch nil context":      func() error { return st.Watch(nilContext, ptr("a"), ch) },
		"watch kind nil context": func() error { return st.WatchKind(nilContext, testKind, ch) },
		"aggregated malformed bookmark": func() error {
			return st.WatchKindAggregated(ctx, testKind, aggCh, state.WithKindStartFromBookmark([]byte{1, 2, 3}))
		},
	}
	for name, call := range tests {
		t.Run(name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = call() })
			require.Error(t, err)
			assert.True(t, state.IsInvalidError(err), "not an invalid error: %v", err)
		})
	}
	list, err := st.List(ctx, testKind)
	require.NoError(t, err)
	assert.Empty(t, list.Items, "nothing written")
	assert.Empty(t, ch, "no watch started")
}

// TestBadInputOfAStoredTypeIsInvalidAndWritesNothing: once the state
// stored a resource of a type plainly (and so validates and copies that
// type's resources in one step, see core.typeCopy), bad input of that type
// still gets the very error state.ValidateResource gives it, and writes
// nothing.
func TestBadInputOfAStoredTypeIsInvalidAndWritesNothing(t *testing.T) {
	st, ctx := newTestState(t)
	require.NoError(t, st.Create(ctx, newPair("good", 1)))
	mustUpdate(t, ctx, st, "good", 2)
	var typedNil *pair
	badPhase := newPair("a", 0)
	badPhase.Metadata().SetPhase(resource.Phase(7))
	for name, r := range map[string]*pair{
		"typed nil":       typedNil,
		"empty id":        typedNewPair(testNS, testType, ""),
		"empty namespace": typedNewPair("", testType, "a"),
		"empty type":      typedNewPair(testNS, "", "a"),
		"unknown phase":   badPhase,
	} {
		_, want := state.ValidateResource(r)
		require.Error(t, want, name)
		for op, write := range map[string]func(context.Context, resource.Resource, ...state.CreateOption) error{
			"create": st.Create,
			"update": func(ctx context.Context, r resource.Resource, _ ...state.CreateOption) error {
				return st.Update(ctx, r)
			},
		} {
			var err error
			require.NotPanics(t, func() { err = write(ctx, r) }, "%s %s", op, name)
			assert.Equal(t, want, err, "%s %s", op, name)
		}
	}
	list, err := st.List(ctx, testKind)
	require.NoError(t, err)
	require.Len(t, list.Items, 1, "nothing written")
	assert.Equal(t, uint64(2), version(list.Items[0]))
}

// nilContext is a nil context, bad input for the watches.
var nilContext context.Context

// typedNewPair builds a pair with any identity, even an invalid one.
func typedNewPair(ns, typ, id string) *pair {
	p := newPair("x", 0)
	*p.Metadata() = resource.NewMetadata(ns, typ, id, resource.VersionUndefined)
	return p
}

func TestInvalidErrorNamesTheResource(t *testing.T) {
	st, ctx := newTestState(t)
	err := st.Create(ctx, typedNewPair(testNS, "", "my-id"))
	require.True(t, state.IsInvalidError(err))
	assert.Contains(t, err.Error(), "my-id")
}

func TestS12a_ListSortedByID(t *testing.T) {
	st, ctx := newTestState(t)
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = fmt.Sprintf("r-%03d", i)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids {
		require.NoError(t, st.Create(ctx, newPair(id, 0)))
	}
	assertSorted := func(want int) {
		t.Helper()
		list, err := st.List(ctx, testKind)
		require.NoError(t, err)
		got := make([]string, len(list.Items))
		for i, r := range list.Items {
			got[i] = r.Metadata().ID()
		}
		assert.True(t, slices.IsSorted(got), "List is sorted by ID")
		assert.Len(t, got, want)
	}
	assertSorted(200)
	// The cached index follows creates and destroys.
	require.NoError(t, st.Destroy(ctx, ptr(ids[0])))
	require.NoError(t, st.Create(ctx, newPair("a-first", 0)))
	require.NoError(t, st.Create(ctx, newPair("z-last", 0)))
	assertSorted(201)
	list, err := st.List(ctx, testKind)
	require.NoError(t, err)
	assert.Equal(t, "a-first", list.Items[0].Metadata().ID())
	assert.Equal(t, "z-last", list.Items[200].Metadata().ID())
	// Updates keep the index and List shows the new state.
	mustUpdate(t, ctx, st, "z-last", 9)
	list, err = st.List(ctx, testKind)
	require.NoError(t, err)
	assert.Equal(t, 9, specA(t, list.Items[200]))
}

func TestListQueriesAndUnknownKind(t *testing.T) {
	st, ctx := newTestState(t)
	for i := range 6 {
		r := newPair(fmt.Sprintf("r%d", i), i)
		if i%2 == 0 {
			r.Metadata().Labels().Set("even", "yes")
		}
		require.NoError(t, st.Create(ctx, r))
	}
	list, err := st.List(ctx, testKind, state.WithLabelQuery(resource.LabelEqual("even", "yes")))
	require.NoError(t, err)
	assert.Equal(t, []string{"r0", "r2", "r4"}, ids(list.Items))

	list, err = st.List(ctx, testKind, state.WithLabelQuery(resource.LabelExists("even", resource.NotMatches)),
		state.WithIDQuery(resource.IDRegexpMatch(regexp.MustCompile(`^r[15]$`))))
	require.NoError(t, err)
	assert.Equal(t, []string{"r1", "r5"}, ids(list.Items))

	list, err = st.List(ctx, resource.NewKind("elsewhere", testType))
	require.NoError(t, err)
	assert.Empty(t, list.Items)
	_, err = st.Get(ctx, resource.NewPointer("elsewhere", testType, "r0"))
	assert.True(t, state.IsNotFoundError(err), "namespaces are separate")
}

func ids(rs []resource.Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Metadata().ID()
	}
	return out
}

// TestKindsDoNotSerialize holds one kind's lock and checks that another
// kind can be written meanwhile.
func TestKindsDoNotSerialize(t *testing.T) {
	c := newCore()
	ctx := context.Background()
	require.NoError(t, c.Create(ctx, newPair("a", 0)))
	ks := c.lookup(resource.KindOf(resource.NewKind(testNS, testType)))
	ks.mu.Lock()
	defer ks.mu.Unlock()

	done := make(chan error, 1)
	go func() {
		other := typedNewPair(testNS, "Other", "b")
		if err := c.Create(ctx, other); err != nil {
			done <- err
			return
		}
		other.TypedSpec().A = 1
		done <- c.Update(ctx, other)
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(testTimeout):
		require.FailNow(t, "a write to another kind waited for this kind's lock")
	}
}

func TestS14_ConcurrentUse(t *testing.T) {
	st, ctx := newTestState(t)
	const writers, perWriter = 4, 200
	ch := make(chan state.Event, 16)
	require.NoError(t, st.WatchKind(ctx, testKind, ch, state.WithBootstrapContents(true)))
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			id := fmt.Sprintf("w%d", w)
			assert.NoError(t, st.Create(ctx, newPair(id, 0)))
			for i := 1; i <= perWriter; i++ {
				_, err := st.UpdateWithConflicts(ctx, ptr(id), func(r resource.Resource) error {
					r.(*pair).TypedSpec().A = i
					return nil
				})
				assert.NoError(t, err)
				_, _ = st.Get(ctx, ptr(id))
				_, _ = st.List(ctx, testKind)
			}
			assert.NoError(t, st.Destroy(ctx, ptr(id)))
		})
	}
	// Read until every writer's resource is gone.
	live := map[string]bool{}
	gone := 0
	for gone < writers {
		ev := recv(t, ch)
		switch ev.Type {
		case state.Created:
			live[ev.Resource.Metadata().ID()] = true
		case state.Destroyed:
			require.True(t, live[ev.Resource.Metadata().ID()])
			delete(live, ev.Resource.Metadata().ID())
			gone++
		case state.Errored:
			require.FailNow(t, "error event", ev.Error)
		}
	}
	wg.Wait()
}

// brokenCopy is a resource whose DeepCopy misbehaves.
type brokenCopy struct {
	md   resource.Metadata
	copy func(*brokenCopy) resource.Resource
}

func (b *brokenCopy) Metadata() *resource.Metadata { return &b.md }
func (b *brokenCopy) Spec() any                    { return nil }
func (b *brokenCopy) DeepCopy() resource.Resource  { return b.copy(b) }

func TestBrokenDeepCopyIsInvalid(t *testing.T) {
	st, ctx := newTestState(t)
	for name, copyFn := range map[string]func(*brokenCopy) resource.Resource{
		"nil":          func(*brokenCopy) resource.Resource { return nil },
		"nil metadata": func(*brokenCopy) resource.Resource { return nilMetadata{} },
		"other identity": func(b *brokenCopy) resource.Resource {
			return &brokenCopy{md: resource.NewMetadata(testNS, testType, "other", resource.VersionUndefined), copy: b.copy}
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := &brokenCopy{md: resource.NewMetadata(testNS, testType, "a", resource.VersionUndefined), copy: copyFn}
			var err error
			require.NotPanics(t, func() { err = st.Create(ctx, r) })
			assert.True(t, state.IsInvalidError(err), "create: %v", err)
		})
	}
	list, err := st.List(ctx, testKind)
	require.NoError(t, err)
	assert.Empty(t, list.Items)
}

// TestS12a_RepeatedListsSeeEveryWrite: Lists that follow one another with
// no write in between (which the state serves from a kept snapshot) and
// the List after each kind of write return exactly what is stored, in ID
// order, copying or read-only; bootstrap contents too.
func TestS12a_RepeatedListsSeeEveryWrite(t *testing.T) {
	st, ctx := newTestState(t)
	want := map[string]int{}
	check := func(what string) {
		t.Helper()
		for range 3 {
			for _, ro := range []bool{false, true} {
				var opts []state.ListOption
				if ro {
					opts = append(opts, state.WithReadOnlyList())
				}
				l, err := st.List(ctx, testKind, opts...)
				require.NoError(t, err)
				got := map[string]int{}
				for i, r := range l.Items {
					if i > 0 {
						require.Less(t, l.Items[i-1].Metadata().ID(), r.Metadata().ID(), "%s: in ID order", what)
					}
					got[r.Metadata().ID()] = specA(t, r)
				}
				require.Equal(t, want, got, "%s (read-only %t)", what, ro)
				if !ro && len(l.Items) > 0 {
					l.Items[0] = nil // the caller owns its slice
				}
			}
		}
	}
	check("empty")
	for i := range 5 {
		id := fmt.Sprintf("r%d", 4-i)
		require.NoError(t, st.Create(ctx, newPair(id, i)))
		want[id] = i
	}
	check("created")
	mustUpdate(t, ctx, st, "r2", 20)
	want["r2"] = 20
	check("updated")
	require.NoError(t, st.Destroy(ctx, ptr("r0")))
	delete(want, "r0")
	check("destroyed")
	require.NoError(t, st.Create(ctx, newPair("r0", 7)))
	want["r0"] = 7
	check("created again")

	ch := make(chan state.Event, 16)
	require.NoError(t, st.WatchKind(ctx, testKind, ch, state.WithBootstrapContents(true)))
	got := map[string]int{}
	for ev := recv(t, ch); ev.Type != state.Bootstrapped; ev = recv(t, ch) {
		got[ev.Resource.Metadata().ID()] = specA(t, ev.Resource)
	}
	require.Equal(t, want, got, "bootstrap contents")
}
