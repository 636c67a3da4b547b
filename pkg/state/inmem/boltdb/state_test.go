package boltdb_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// conformanceHistory is small, so that the conformance workloads overflow
// it (as in the inmem and etcd runs of the suite).
const conformanceHistory = 64

// TestStateConformance runs the state contract (S1–S15) on a persistent
// state, under each durability policy: persistence changes nothing a user
// of the state sees. The suite writes thousands of changes one at a time
// with a deadline, so under the default policy (a commit per write) its
// files are on a memory file system when there is one (/dev/shm): the
// suite checks the state's behavior, not the disk's speed.
func TestStateConformance(t *testing.T) {
	for name, opts := range map[string][]boltdb.Option{
		"sync":     nil,
		"interval": {boltdb.WithInterval(time.Millisecond, 0)},
	} {
		t.Run(name, func(t *testing.T) {
			dir := fastDir(t)
			n := 0
			var last *boltdb.State
			closeLast := func() {
				if last != nil {
					assert.NoError(t, last.Close())
					// A memory file system may be small (64 MiB in a
					// container): keep one test's file at a time.
					assert.NoError(t, os.Remove(last.Path()))
					last = nil
				}
			}
			defer closeLast()
			suite.Run(t, &conformance.StateSuite{
				NewState: func() state.State {
					closeLast() // the previous test's
					n++
					st, err := boltdb.Open(fmt.Sprintf("%s/%d.db", dir, n), registry(),
						append(opts, boltdb.WithStateOptions(inmem.WithHistoryCapacity(conformanceHistory)))...)
					require.NoError(t, err)
					last = st
					return st
				},
				HistoryCapacity: conformanceHistory,
			})
		})
	}
}

// fastDir is a temporary directory on a memory file system when there is
// one, else t.TempDir.
func fastDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/dev/shm", "boltdb-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// TestRestart_EverythingIsKept: every metadata field and the spec of every
// resource come back after a restart, destroyed resources stay
// destroyed, versions go on, and creation times are kept.
func TestRestart_EverythingIsKept(t *testing.T) {
	path := dbPath(t)
	ctx := testContext(t)
	st, err := boltdb.Open(path, registry())
	require.NoError(t, err)

	a := newPair("a", 1)
	require.NoError(t, st.Create(ctx, a, state.WithCreateOwner("ctl")))
	for i := range 6 {
		a.TypedSpec().A = 10 + i
		a.Metadata().Labels().Set("l", "v")
		a.Metadata().Annotations().Set("n", fmt.Sprint(i))
		require.NoError(t, st.Update(ctx, a, state.WithUpdateOwner("ctl")))
	}
	require.Equal(t, uint64(7), version(a))
	require.NoError(t, st.AddFinalizer(ctx, ptr("a"), "keep"))
	_, err = st.Teardown(ctx, ptr("a"), state.WithTeardownOwner("ctl"))
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, newPair("gone", 1)))
	require.NoError(t, st.Destroy(ctx, ptr("gone")))
	list := conformance.NewListResource(testNS, "l", conformance.ListSpec{Items: []string{"x", ""}, Sets: map[string][]int{"s": {1, 2}, "e": {}}})
	require.NoError(t, st.Create(ctx, list))
	before, err := st.List(ctx, testKind)
	require.NoError(t, err)
	beforeList, err := st.Get(ctx, resource.NewPointer(testNS, conformance.ListResourceType, "l"))
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st2 := open(t, path)
	after, err := st2.List(ctx, testKind)
	require.NoError(t, err)
	require.Len(t, after.Items, 1, "the destroyed resource stays destroyed")
	assertSame(t, before.Items[0], after.Items[0])
	afterList, err := st2.Get(ctx, resource.NewPointer(testNS, conformance.ListResourceType, "l"))
	require.NoError(t, err)
	assertSame(t, beforeList, afterList)

	r := after.Items[0]
	assert.Equal(t, resource.PhaseTearingDown, r.Metadata().Phase())
	assert.Equal(t, "ctl", r.Metadata().Owner())
	require.NoError(t, st2.RemoveFinalizer(ctx, ptr("a"), "keep"))
	got, err := st2.Get(ctx, ptr("a"))
	require.NoError(t, err)
	assert.Equal(t, uint64(10), version(got), "versions go on: 7, teardown 8 and finalizer 9 before the restart, 10 after")
	assert.True(t, got.Metadata().Created().Equal(r.Metadata().Created()), "the creation time is kept")

	// A resource created after the restart is created later than every
	// one before it.
	b := newPair("b", 1)
	require.NoError(t, st2.Create(ctx, b))
	assert.True(t, b.Metadata().Created().After(beforeList.Metadata().Created()))
}

// assertSame checks that two resources are equal, timestamps included.
func assertSame(t *testing.T, want, got resource.Resource) {
	t.Helper()
	assert.True(t, resource.Equal(want, got), "want %v\ngot  %v", want, got)
	assert.Equal(t, want.Metadata().Labels().Raw(), got.Metadata().Labels().Raw())
	assert.True(t, want.Metadata().Created().Equal(got.Metadata().Created()), "created")
	assert.True(t, want.Metadata().Updated().Equal(got.Metadata().Updated()), "updated")
}

// TestRestart_IncarnationRule: an update based on an incarnation that was
// destroyed before a restart is refused after it.
func TestRestart_IncarnationRule(t *testing.T) {
	path := dbPath(t)
	ctx := testContext(t)
	st, err := boltdb.Open(path, registry())
	require.NoError(t, err)
	first := newPair("x", 1)
	require.NoError(t, st.Create(ctx, first))
	require.NoError(t, st.Destroy(ctx, ptr("x")))
	require.NoError(t, st.Create(ctx, newPair("x", 2)))
	require.NoError(t, st.Close())

	st2 := open(t, path)
	first.TypedSpec().A = 3
	err = st2.Update(ctx, first) // version 1 of the first incarnation
	assert.True(t, state.IsConflictError(err), "%v", err)
	r, err := st2.Get(ctx, ptr("x"))
	require.NoError(t, err)
	assert.Equal(t, 2, r.(*pair).TypedSpec().A)
}

// TestRestart_BookmarkIsOverrun: a bookmark taken before a restart is
// refused with a buffer-overrun error after it (S11).
func TestRestart_BookmarkIsOverrun(t *testing.T) {
	path := dbPath(t)
	ctx := testContext(t)
	st, err := boltdb.Open(path, registry())
	require.NoError(t, err)
	ch := make(chan state.Event, 4)
	require.NoError(t, st.WatchKind(ctx, testKind, ch))
	require.NoError(t, st.Create(ctx, newPair("x", 1)))
	ev := <-ch
	require.NotEmpty(t, ev.Bookmark)
	require.NoError(t, st.Close())

	st2 := open(t, path)
	err = st2.WatchKind(ctx, testKind, make(chan state.Event), state.WithKindStartFromBookmark(ev.Bookmark))
	assert.True(t, state.IsBufferOverrunError(err), "%v", err)
}

// TestWrite_UnregisteredTypeIsRefused: a write of a type the registry
// does not know is refused as invalid, and nothing is written, in memory
// or in the file.
func TestWrite_UnregisteredTypeIsRefused(t *testing.T) {
	path := dbPath(t)
	ctx := testContext(t)
	st, err := boltdb.Open(path, codec.NewRegistry())
	require.NoError(t, err)
	err = st.Create(ctx, newPair("x", 1))
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.True(t, codec.IsUnknownTypeError(err), "%v", err)
	_, err = st.Get(ctx, ptr("x"))
	assert.True(t, state.IsNotFoundError(err), "%v", err)
	require.NoError(t, st.Close())
	assert.Equal(t, uint64(0), st.Stats().Writes)

	st2 := open(t, path)
	_, err = st2.Get(ctx, ptr("x"))
	assert.True(t, state.IsNotFoundError(err), "%v", err)
}

// TestWrite_KeyTooLongIsRefused: a pointer longer than bbolt's key limit
// is refused as invalid before it is written.
func TestWrite_KeyTooLongIsRefused(t *testing.T) {
	st := open(t, dbPath(t))
	long := make([]byte, 40000)
	for i := range long {
		long[i] = 'x'
	}
	err := st.Create(testContext(t), newPair(string(long), 1))
	assert.True(t, state.IsInvalidError(err), "%v", err)
	require.NoError(t, st.Create(testContext(t), newPair("ok", 1)), "the store goes on")
}

// TestClose: writes after Close fail with ErrClosed and write nothing;
// reads go on; Close commits what was accepted, stops its goroutine (the
// leak check of TestMain) and may be called again.
func TestClose(t *testing.T) {
	path := dbPath(t)
	ctx := testContext(t)
	st, err := boltdb.Open(path, registry(), boltdb.WithInterval(time.Hour, 0))
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, newPair("x", 1)), "queued, not committed (interval of an hour)")
	assert.Equal(t, uint64(0), st.Stats().Commits)
	require.NoError(t, st.Close())
	assert.Equal(t, uint64(1), st.Stats().Commits, "Close committed the queued write")
	require.NoError(t, st.Close(), "Close again")
	goleak.VerifyNone(t) // the committing goroutine has exited

	assert.ErrorIs(t, st.Create(ctx, newPair("y", 1)), boltdb.ErrClosed)
	_, err = st.Get(ctx, ptr("y"))
	assert.True(t, state.IsNotFoundError(err), "the refused create wrote nothing")
	_, err = st.Get(ctx, ptr("x"))
	assert.NoError(t, err, "reads go on after Close")

	st2 := open(t, path)
	_, err = st2.Get(ctx, ptr("x"))
	assert.NoError(t, err)
}

// TestOpen_Locked: a file another user holds open is refused with
// ErrLocked after the lock timeout (see lock_test.go for the default: at
// once, naming the holder).
func TestOpen_Locked(t *testing.T) {
	path := dbPath(t)
	open(t, path)
	_, err := boltdb.Open(path, registry(), boltdb.WithLockTimeout(50*time.Millisecond))
	assert.ErrorIs(t, err, boltdb.ErrLocked)
	var fe *boltdb.FileError
	assert.ErrorAs(t, err, &fe)
}

// TestGroupCommit_OneCommitForTheWritesThatArriveMeanwhile: while a
// commit runs (here: waits for bbolt's writer lock, which the test
// holds), the writes that arrive go into the next commit, together. All
// are of one kind: the kind's lock is not held while a commit runs.
func TestGroupCommit_OneCommitForTheWritesThatArriveMeanwhile(t *testing.T) {
	ctx := testContext(t)
	st := open(t, dbPath(t))
	release := boltdb.HoldWriterLock(st)
	defer release() // before Close, even when the test fails

	const writers = 8
	errs := make(chan error, writers)
	go func() { errs <- st.Create(ctx, newPair("first", 0)) }()
	require.Eventually(t, func() bool { return boltdb.Committing(st) == 1 }, testTimeout, time.Millisecond,
		"the first write's commit waits for the lock")
	for i := 1; i < writers; i++ {
		go func() { errs <- st.Create(ctx, newPair(fmt.Sprint(i), i)) }()
	}
	require.Eventually(t, func() bool { return boltdb.Queued(st) == writers-1 }, testTimeout, time.Millisecond,
		"the other seven queue behind it")
	release()
	for range writers {
		require.NoError(t, <-errs)
	}
	s := st.Stats()
	assert.Equal(t, uint64(writers), s.Writes)
	assert.Equal(t, uint64(2), s.Commits, "one commit for the first write, one for the seven others")
}

// TestIntervalPolicy: writes return before they are committed; the
// queue is committed once the interval elapsed, or as soon as it holds
// maxPending writes.
func TestIntervalPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := dbPath(t)
		ctx := context.Background()
		st, err := boltdb.Open(path, registry(), boltdb.WithInterval(time.Second, 3))
		require.NoError(t, err)
		defer func() { require.NoError(t, st.Close()) }()

		require.NoError(t, st.Create(ctx, newPair("a", 1)))
		require.NoError(t, st.Create(ctx, newPair("b", 1)))
		synctest.Wait()
		assert.Equal(t, uint64(0), st.Stats().Commits, "nothing committed before the interval")
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, boltdb.Stats{Commits: 1, Writes: 2}, withoutTime(st.Stats()), "committed after the interval")

		start := time.Now()
		for _, id := range []string{"c", "d", "e"} {
			require.NoError(t, st.Create(ctx, newPair(id, 1)))
		}
		synctest.Wait()
		assert.Equal(t, time.Duration(0), time.Since(start), "no interval elapsed")
		assert.Equal(t, boltdb.Stats{Commits: 2, Writes: 5}, withoutTime(st.Stats()), "a full queue is committed at once")
	})
}

// TestIntervalPolicy_BackPressure: while a commit runs, a writer that
// finds more than maxPending writes queued waits for their commit.
func TestIntervalPolicy_BackPressure(t *testing.T) {
	ctx := testContext(t)
	st := open(t, dbPath(t), boltdb.WithInterval(time.Hour, 2))
	release := boltdb.HoldWriterLock(st)
	defer release()
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	require.NoError(t, st.Create(ctx, newPair("b", 1)), "fills the batch: its commit starts (and waits for the lock)")
	require.Eventually(t, func() bool { return boltdb.Queued(st) == 0 }, testTimeout, time.Millisecond, "the committer took the batch")
	require.NoError(t, st.Create(ctx, newPair("c", 1)))
	require.NoError(t, st.Create(ctx, newPair("d", 1)), "fills the next batch while the commit runs")

	errc := make(chan error, 1)
	go func() { errc <- st.Create(ctx, newPair("e", 1)) }()
	require.Eventually(t, func() bool { return boltdb.Queued(st) == 3 }, testTimeout, time.Millisecond)
	select {
	case err := <-errc:
		t.Fatalf("the write past maxPending returned (%v) before its batch was committed", err)
	default:
	}
	release()
	require.NoError(t, <-errc)
	assert.Equal(t, uint64(5), st.Stats().Writes, "its batch was committed when it returned")
}

func withoutTime(s boltdb.Stats) boltdb.Stats {
	s.CommitTime = 0
	return s
}

// TestValidateType_NamesTheUnregisteredType: the state answers
// state.TypeValidator from its codec registry, before any write: a type
// the registry knows is accepted, another is refused as invalid with the
// codec's error, which names the type and how to register it.
func TestValidateType_NamesTheUnregisteredType(t *testing.T) {
	st := open(t, dbPath(t))
	var v state.TypeValidator = st
	assert.NoError(t, v.ValidateType(testKind))
	err := v.ValidateType(resource.NewKind(testNS, "Unknowns.test.resgraph.dev"))
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.True(t, codec.IsUnknownTypeError(err), "%v", err)
	assert.Contains(t, err.Error(), `"Unknowns.test.resgraph.dev"`)
	assert.Contains(t, err.Error(), "codec.Register")
	assert.True(t, state.IsInvalidError(v.ValidateType(resource.NewKind("", testType))), "empty namespace")
	assert.Equal(t, uint64(0), st.Stats().Writes, "nothing written")
}
