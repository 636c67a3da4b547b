package inmem

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// The persistence hook is tested here with a Persistence that keeps what
// it is told in memory (the bbolt store, in its own module, runs the whole
// contract on a file). logPersistence is a real implementation of the
// hook's contract, with faults on demand.

// change is one Append as logPersistence saw it.
type change struct {
	ns  resource.Namespace
	typ resource.Type
	id  resource.ID
	r   resource.Resource // nil: destroyed
}

type logPersistence struct {
	restored Restored

	mu       sync.Mutex
	restores int
	log      []change
	// appendErr refuses every Append when set.
	appendErr error
	// pending, when set, is what Append returns.
	pending Pending
}

func (p *logPersistence) Restore() Restored {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.restores++
	return p.restored
}

func (p *logPersistence) Append(ns resource.Namespace, typ resource.Type, id resource.ID, r resource.Resource) (Pending, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.appendErr != nil {
		return nil, p.appendErr
	}
	p.log = append(p.log, change{ns, typ, id, r})
	if p.pending != nil {
		return p.pending, nil
	}
	return done{}, nil
}

func (p *logPersistence) changes() []change {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]change(nil), p.log...)
}

// done is a Pending that is durable at once.
type done struct{}

func (done) Wait() error { return nil }

// gate is a Pending whose Wait blocks until the gate opens, then returns
// err.
type gate struct {
	entered chan struct{} // one value per Wait that started
	open    chan struct{}
	err     error
}

func (g *gate) Wait() error {
	g.entered <- struct{}{}
	<-g.open
	return g.err
}

// storedPair returns a pair as a persistence restores it: version,
// phase, owner and times set.
func storedPair(id string, a int, ver uint64, created time.Time) *pair {
	r := newPair(id, a)
	md := r.Metadata()
	md.SetVersion(resource.VersionUndefined)
	for range ver {
		md.SetVersion(md.Version().Next())
	}
	md.SetCreated(created)
	md.SetUpdated(created)
	return r
}

func TestPersistence_RestoredResourcesAreServedAndVersionsContinue(t *testing.T) {
	created := time.Now().Add(-time.Hour).Round(0)
	p := &logPersistence{restored: Restored{Resources: []resource.Resource{
		storedPair("b", 2, 7, created),
		storedPair("a", 1, 3, created.Add(time.Second)),
	}, Lineage: 1, Run: 2}}
	st, ctx := newTestState(t, WithPersistence(p))
	assert.Equal(t, 1, p.restores)

	l, err := st.List(ctx, testKind)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, ids(l.Items), "restored resources listed in ID order")

	ch := make(chan state.Event, 8)
	require.NoError(t, st.WatchKind(ctx, testKind, ch, state.WithBootstrapContents(true)))
	assert.Equal(t, "a", recv(t, ch).Resource.Metadata().ID())
	assert.Equal(t, "b", recv(t, ch).Resource.Metadata().ID())
	assert.Equal(t, state.Bootstrapped, recv(t, ch).Type)

	r := mustUpdate(t, ctx, st, "b", 20)
	assert.Equal(t, uint64(8), version(r), "a resource at version 7 is at 8 after its next update")
	assert.True(t, created.Equal(r.Metadata().Created()), "the creation time is kept")
	ev := recv(t, ch)
	assert.Equal(t, state.Updated, ev.Type)
	assert.Equal(t, uint64(7), version(ev.Old))
}

func TestPersistence_EveryWriteIsAppendedAsStored(t *testing.T) {
	p := &logPersistence{}
	st, ctx := newTestState(t, WithPersistence(p))

	r := newPair("x", 1)
	require.NoError(t, st.Create(ctx, r, state.WithCreateOwner("me")))
	mustUpdateOwned := func(a int) {
		r.TypedSpec().A = a
		require.NoError(t, st.Update(ctx, r, state.WithUpdateOwner("me")))
	}
	mustUpdateOwned(2)
	require.NoError(t, st.AddFinalizer(ctx, ptr("x"), "f"))
	require.NoError(t, st.AddFinalizer(ctx, ptr("x"), "f")) // S5: writes nothing
	_, err := st.Teardown(ctx, ptr("x"), state.WithTeardownOwner("me"))
	require.NoError(t, err)
	require.NoError(t, st.RemoveFinalizer(ctx, ptr("x"), "f"))
	require.NoError(t, st.Destroy(ctx, ptr("x"), state.WithDestroyOwner("me")))

	log := p.changes()
	require.Len(t, log, 6, "create, update, add finalizer, teardown, remove finalizer, destroy")
	for i, c := range log[:5] {
		assert.Equal(t, testNS, c.ns)
		assert.Equal(t, testType, c.typ)
		assert.Equal(t, "x", c.id)
		require.NotNil(t, c.r, "change %d", i)
		assert.Equal(t, uint64(i+1), version(c.r), "change %d carries its final version", i)
		assert.Equal(t, "me", c.r.Metadata().Owner(), "change %d carries the stored owner", i)
		assert.False(t, c.r.Metadata().Created().IsZero())
	}
	assert.Equal(t, 2, log[1].r.(*pair).TypedSpec().A)
	assert.Equal(t, resource.PhaseTearingDown, log[3].r.Metadata().Phase())
	assert.True(t, log[4].r.Metadata().Finalizers().Empty())
	assert.Nil(t, log[5].r, "a destroy is appended without a resource")
	assert.Equal(t, "x", log[5].id)
}

func TestPersistence_RefusedWritesAreNotAppended(t *testing.T) {
	p := &logPersistence{}
	st, ctx := newTestState(t, WithPersistence(p))
	require.NoError(t, st.Create(ctx, newPair("x", 1), state.WithCreateOwner("me")))

	assert.True(t, state.IsConflictError(st.Create(ctx, newPair("x", 1))))
	stale := newPair("x", 9)
	assert.True(t, state.IsConflictError(st.Update(ctx, stale, state.WithUpdateOwner("me"))))
	assert.True(t, state.IsNotFoundError(st.Update(ctx, newPair("y", 1))))
	assert.True(t, state.IsOwnerConflictError(st.Destroy(ctx, ptr("x"))))
	assert.True(t, state.IsInvalidError(st.Create(ctx, newPair("", 1))))
	assert.Len(t, p.changes(), 1, "only the create was appended")
}

func TestPersistence_AppendErrorRefusesTheWrite(t *testing.T) {
	p := &logPersistence{}
	st, ctx := newTestState(t, WithPersistence(p))
	require.NoError(t, st.Create(ctx, newPair("x", 1)))
	ch := make(chan state.Event, 8)
	require.NoError(t, st.WatchKind(ctx, testKind, ch))

	refused := state.NewInvalidError(nil, "not encodable")
	p.mu.Lock()
	p.appendErr = refused
	p.mu.Unlock()

	r := newPair("y", 1)
	assert.Equal(t, refused, st.Create(ctx, r), "the error is returned as is")
	assert.True(t, r.Metadata().Version().Equal(resource.VersionUndefined), "nothing written back")
	x, err := st.Get(ctx, ptr("x"))
	require.NoError(t, err)
	x.(*pair).TypedSpec().A = 2
	assert.Equal(t, refused, st.Update(ctx, x))
	assert.Equal(t, refused, st.Destroy(ctx, ptr("x")))

	l, err := st.List(ctx, testKind)
	require.NoError(t, err)
	require.Equal(t, []string{"x"}, ids(l.Items))
	assert.Equal(t, uint64(1), version(l.Items[0]), "nothing was written")
	assert.Equal(t, 1, specA(t, l.Items[0]))
	select {
	case ev := <-ch:
		t.Fatalf("a refused write sent an event: %v", ev)
	default:
	}

	// The refused create burned no creation time of the kind: it may be
	// made once the persistence accepts writes again.
	p.mu.Lock()
	p.appendErr = nil
	p.mu.Unlock()
	require.NoError(t, st.Create(ctx, r))
	assert.Equal(t, state.Created, recv(t, ch).Type)
}

func TestPersistence_WaitErrorIsReturnedAfterTheWriteApplied(t *testing.T) {
	lost := errors.New("fsync failed")
	g := &gate{entered: make(chan struct{}, 1), open: make(chan struct{}), err: lost}
	close(g.open)
	p := &logPersistence{pending: g}
	st, ctx := newTestState(t, WithPersistence(p))
	r := newPair("x", 1)
	assert.ErrorIs(t, st.Create(ctx, r), lost)
	assert.True(t, r.Metadata().Version().Equal(resource.VersionUndefined), "a failed write writes nothing back")
}

// TestPersistence_KindLockIsNotHeldWhileWaiting: while a write waits for
// its durability, reads and other writes of its kind go on.
func TestPersistence_KindLockIsNotHeldWhileWaiting(t *testing.T) {
	g := &gate{entered: make(chan struct{}, 1), open: make(chan struct{})}
	p := &logPersistence{pending: g}
	st, ctx := newTestState(t, WithPersistence(p))

	errc := make(chan error, 1)
	go func() { errc <- st.Create(ctx, newPair("x", 1)) }()
	<-g.entered // the create waits in Wait

	r, err := st.Get(ctx, ptr("x"))
	require.NoError(t, err, "the waiting write is applied in memory")
	assert.Equal(t, uint64(1), version(r))

	p.mu.Lock()
	p.pending = nil
	p.mu.Unlock()
	require.NoError(t, st.Create(ctx, newPair("y", 1)), "another write of the kind goes on")
	close(g.open)
	require.NoError(t, <-errc)
}

// TestPersistence_CreatedFloor: creation times follow the restored floor
// even when the clock is behind it, so the incarnation rule holds across
// a restart.
func TestPersistence_CreatedFloor(t *testing.T) {
	floor := time.Now().Add(time.Hour)
	p := &logPersistence{restored: Restored{CreatedFloor: floor}}
	st, ctx := newTestState(t, WithPersistence(p))
	r := newPair("x", 1)
	require.NoError(t, st.Create(ctx, r))
	assert.True(t, r.Metadata().Created().After(floor), "created %v, floor %v", r.Metadata().Created(), floor)

	// Another kind, first written after the start, follows it too.
	other := typedNewPair(testNS, "Others.test.resgraph.dev", "x")
	require.NoError(t, st.Create(ctx, other))
	assert.True(t, other.Metadata().Created().After(floor))
}

// TestPersistence_CreationTimesFollowTheRestoredOnes: without a creation
// floor, a resource created after a restart is created after every
// restored resource of its kind, even one restored with a creation time
// ahead of the clock (creation times strictly increase within a kind).
func TestPersistence_CreationTimesFollowTheRestoredOnes(t *testing.T) {
	ahead := time.Now().Add(time.Hour).Round(0)
	p := &logPersistence{restored: Restored{Resources: []resource.Resource{storedPair("x", 1, 1, ahead)}}}
	st, ctx := newTestState(t, WithPersistence(p))
	r := newPair("y", 1)
	require.NoError(t, st.Create(ctx, r))
	assert.True(t, r.Metadata().Created().After(ahead), "created %v, restored %v", r.Metadata().Created(), ahead)
}

// TestPersistence_IncarnationRuleHoldsAcrossRestart: an update based on a
// resource of an earlier incarnation (another creation time) is refused
// after a restart as before it.
func TestPersistence_IncarnationRuleHoldsAcrossRestart(t *testing.T) {
	created := time.Now().Add(-time.Minute).Round(0)
	p := &logPersistence{restored: Restored{Resources: []resource.Resource{storedPair("x", 1, 1, created)}}}
	st, ctx := newTestState(t, WithPersistence(p))

	earlier := storedPair("x", 5, 1, created.Add(-time.Second))
	err := st.Update(ctx, earlier)
	assert.True(t, state.IsConflictError(err), "%v", err)

	same := storedPair("x", 5, 1, created)
	require.NoError(t, st.Update(ctx, same))
	assert.Equal(t, uint64(2), version(same))
}

// TestS11_BookmarkOfAnEarlierRunIsOverrun: a bookmark taken before a
// restart of a persistent state is refused with a buffer-overrun error
// (the history is not kept across restarts); one of another storage or of
// a state without persistence stays invalid.
func TestS11_BookmarkOfAnEarlierRunIsOverrun(t *testing.T) {
	bookmarkOf := func(st state.State, ctx context.Context) state.Bookmark {
		ch := make(chan state.Event, 4)
		require.NoError(t, st.WatchKind(ctx, testKind, ch, state.WithBootstrapContents(true)))
		ev := recv(t, ch)
		require.NotEmpty(t, ev.Bookmark)
		return ev.Bookmark
	}
	run1, ctx := newTestState(t, WithPersistence(&logPersistence{restored: Restored{Lineage: 7, Run: 1}}))
	old := bookmarkOf(run1, ctx)
	other, _ := newTestState(t, WithPersistence(&logPersistence{restored: Restored{Lineage: 8, Run: 1}}))
	foreign := bookmarkOf(other, ctx)
	plain, _ := newTestState(t)
	plainMark := bookmarkOf(plain, ctx)

	run2, _ := newTestState(t, WithPersistence(&logPersistence{restored: Restored{Lineage: 7, Run: 2}}))
	ch := make(chan state.Event, 1)
	err := run2.WatchKind(ctx, testKind, ch, state.WithKindStartFromBookmark(old))
	assert.True(t, state.IsBufferOverrunError(err), "%v", err)
	err = run2.Watch(ctx, ptr("x"), ch, state.WithStartFromBookmark(old))
	assert.True(t, state.IsBufferOverrunError(err), "%v", err)
	for _, b := range []state.Bookmark{foreign, plainMark} {
		err = run2.WatchKind(ctx, testKind, ch, state.WithKindStartFromBookmark(b))
		assert.True(t, state.IsInvalidError(err), "%v", err)
	}
}

// TestPersistence_RestoredSnapshotsAreGuarded: the mutation detector
// watches restored snapshots like written ones.
func TestPersistence_RestoredSnapshotsAreGuarded(t *testing.T) {
	var reported []error
	var mu sync.Mutex
	report := func(err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() }
	p := &logPersistence{restored: Restored{Resources: []resource.Resource{storedPair("x", 1, 3, time.Now())}}}
	st, ctx := newTestState(t, WithPersistence(p), WithMutationDetector(report))

	snap, err := st.Get(ctx, ptr("x"), state.WithReadOnlyGet())
	require.NoError(t, err)
	snap.(*pair).TypedSpec().A = 42 // a mutation of the shared snapshot
	// The update copies the changed version (a Get, then Update): it is
	// refused, the version restored (see TestS7_GuardNeverPersistsAChangeMadeInPlace).
	r, err := st.Get(ctx, ptr("x"))
	require.NoError(t, err)
	require.True(t, state.IsConflictError(st.Update(ctx, r)))
	mustUpdate(t, ctx, st, "x", 2)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reported, 1)
	var me *MutationError
	require.ErrorAs(t, reported[0], &me)
	assert.Equal(t, "x", me.Resource.ID())
}

// typedPersistence stores only the type it knows, and says so.
type typedPersistence struct {
	logPersistence
	known resource.Type
}

func (p *typedPersistence) ValidateType(kind resource.Kind) error {
	if kind.Type() != p.known {
		return state.NewInvalidError(nil, "type %q: register it", kind.Type())
	}
	return nil
}

// TestPersistence_ValidateTypeAsksThePersistence: a persistent state
// answers state.TypeValidator with its Persistence's; a state whose
// Persistence does not validate, or without persistence, stores every
// type.
func TestPersistence_ValidateTypeAsksThePersistence(t *testing.T) {
	other := resource.NewKind(testNS, "Others.test.resgraph.dev")

	st, _ := newTestState(t, WithPersistence(&typedPersistence{known: testType}))
	assert.NoError(t, state.ValidateType(st, resource.NewKind(testNS, testType)))
	err := state.ValidateType(st, other)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.Contains(t, err.Error(), "Others.test.resgraph.dev")

	plain, _ := newTestState(t, WithPersistence(&logPersistence{}))
	assert.NoError(t, state.ValidateType(plain, other))
	mem, _ := newTestState(t)
	assert.NoError(t, state.ValidateType(mem, other))
}
