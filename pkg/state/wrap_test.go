package state_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type numSpec struct{ N int }

type numDef struct{}

func (numDef) Definition() typed.Definition {
	return typed.Definition{Type: "Nums.test.resgraph.dev", DefaultNamespace: "default"}
}

type num = typed.Resource[numSpec, numDef]

func newNum(id string, n int) *num {
	return typed.NewDefault[numSpec, numDef](id, numSpec{N: n})
}

func ptrOf(id string) resource.Pointer {
	return resource.NewPointer("default", "Nums.test.resgraph.dev", id)
}

// setup returns a wrapped fake core holding the given resources.
func setup(t *testing.T, rs ...*num) (*fakeCore, state.State, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	core := newFakeCore()
	for _, r := range rs {
		require.NoError(t, core.Create(ctx, r))
	}
	return core, state.WrapCore(core), ctx
}

func setN(n int) state.UpdaterFunc {
	return func(r resource.Resource) error {
		r.(*num).TypedSpec().N = n
		return nil
	}
}

func TestWrapCore_InvalidInput(t *testing.T) {
	core, st, ctx := setup(t, newNum("a", 1))
	var nilMD *resource.Metadata
	noop := func(resource.Resource) error { return nil }
	bad := []resource.Pointer{nil, nilMD, resource.NewPointer("default", "Nums.test.resgraph.dev", ""), resource.NewPointer("", "T", "a"), resource.NewPointer("ns", "", "a")}
	for _, p := range bad {
		_, err := st.UpdateWithConflicts(ctx, p, setN(2))
		assert.True(t, state.IsInvalidError(err), "UpdateWithConflicts %v: %v", p, err)
		_, err = st.Teardown(ctx, p)
		assert.True(t, state.IsInvalidError(err), "Teardown: %v", err)
		assert.True(t, state.IsInvalidError(st.TeardownAndDestroy(ctx, p)))
		assert.True(t, state.IsInvalidError(st.AddFinalizer(ctx, p, "f")))
		assert.True(t, state.IsInvalidError(st.RemoveFinalizer(ctx, p, "f")))
		_, err = st.WatchFor(ctx, p)
		assert.True(t, state.IsInvalidError(err), "WatchFor: %v", err)
		_, err = st.ContextWithTeardown(ctx, p)
		assert.True(t, state.IsInvalidError(err), "ContextWithTeardown: %v", err)
	}
	_, err := st.UpdateWithConflicts(ctx, ptrOf("a"), nil)
	assert.True(t, state.IsInvalidError(err), "nil updater: %v", err)
	assert.True(t, state.IsInvalidError(st.Modify(ctx, nil, noop)))
	assert.True(t, state.IsInvalidError(st.Modify(ctx, (*num)(nil), noop)))
	assert.True(t, state.IsInvalidError(st.Modify(ctx, typed.New[numSpec, numDef](resource.NewMetadata("default", "T", "", resource.VersionUndefined), numSpec{}), noop)))
	assert.True(t, state.IsInvalidError(st.Modify(ctx, newNum("a", 1), nil)))
	assert.True(t, state.IsInvalidError(st.AddFinalizer(ctx, ptrOf("a"), "")))
	_, err = st.WatchFor(ctx, ptrOf("a"), state.WithCondition(nil))
	assert.True(t, state.IsInvalidError(err), "nil condition func: %v", err)
	assert.Equal(t, 1, core.writeCount(), "only the setup's Create was written")
}

func TestWrapCore_UpdaterMayNotChangeIdentityOrVersion(t *testing.T) {
	core, st, ctx := setup(t, newNum("a", 1))
	_, err := st.UpdateWithConflicts(ctx, ptrOf("a"), func(r resource.Resource) error {
		*r.Metadata() = resource.NewMetadata("default", "Nums.test.resgraph.dev", "b", r.Metadata().Version())
		return nil
	})
	assert.True(t, state.IsInvalidError(err), "%v", err)
	_, err = st.UpdateWithConflicts(ctx, ptrOf("a"), func(r resource.Resource) error {
		r.Metadata().SetVersion(r.Metadata().Version().Next())
		return nil
	})
	assert.True(t, state.IsInvalidError(err), "%v", err)
	err = st.Modify(ctx, newNum("c", 0), func(r resource.Resource) error {
		*r.Metadata() = resource.NewMetadata("default", "Nums.test.resgraph.dev", "d", resource.VersionUndefined)
		return nil
	})
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.Equal(t, 1, core.writeCount())
}

func TestWrapCore_UpdateWithConflicts(t *testing.T) {
	t.Run("retries version conflicts", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		core.updateConflicts = 2
		calls := 0
		r, err := st.UpdateWithConflicts(ctx, ptrOf("a"), func(r resource.Resource) error {
			calls++
			return setN(5)(r)
		})
		require.NoError(t, err)
		assert.Equal(t, 3, calls)
		assert.Equal(t, 5, r.(*num).TypedSpec().N)
		assert.Equal(t, uint64(2), r.Metadata().Version().Value())
		got, err := core.Get(ctx, ptrOf("a"))
		require.NoError(t, err)
		assert.True(t, resource.Equal(r, got), "returned %v, stored %v", r.Metadata(), got.Metadata())
	})
	t.Run("S6 equal result writes nothing", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		r, err := st.UpdateWithConflicts(ctx, ptrOf("a"), setN(1))
		require.NoError(t, err)
		assert.Equal(t, uint64(1), r.Metadata().Version().Value())
		assert.Equal(t, 1, core.writeCount())
	})
	t.Run("owner conflict is not retried", func(t *testing.T) {
		_, st, ctx := setup(t)
		core := st.(state.CoreState)
		require.NoError(t, core.Create(ctx, newNum("a", 1), state.WithCreateOwner("ctrl")))
		calls := 0
		_, err := st.UpdateWithConflicts(ctx, ptrOf("a"), func(r resource.Resource) error {
			calls++
			return setN(2)(r)
		})
		assert.True(t, state.IsOwnerConflictError(err), "%v", err)
		assert.Equal(t, 1, calls)
		// The no-op path reports the same conflict.
		_, err = st.UpdateWithConflicts(ctx, ptrOf("a"), setN(1))
		assert.True(t, state.IsOwnerConflictError(err), "%v", err)
		_, err = st.UpdateWithConflicts(ctx, ptrOf("a"), setN(2), state.WithUpdateOwner("ctrl"))
		assert.NoError(t, err)
	})
	t.Run("phase conflict is reported, also for a no-op", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		_, err := st.Teardown(ctx, ptrOf("a"))
		require.NoError(t, err)
		writes := core.writeCount()
		_, err = st.UpdateWithConflicts(ctx, ptrOf("a"), setN(2))
		assert.True(t, state.IsPhaseConflictError(err), "%v", err)
		_, err = st.UpdateWithConflicts(ctx, ptrOf("a"), setN(1))
		assert.True(t, state.IsPhaseConflictError(err), "%v", err)
		_, err = st.UpdateWithConflicts(ctx, ptrOf("a"), setN(2), state.WithExpectedPhaseAny())
		assert.NoError(t, err)
		assert.Equal(t, writes+1, core.writeCount())
	})
	t.Run("updater error aborts", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		boom := errors.New("boom")
		_, err := st.UpdateWithConflicts(ctx, ptrOf("a"), func(resource.Resource) error { return boom })
		assert.ErrorIs(t, err, boom)
		assert.Equal(t, 1, core.writeCount())
	})
	t.Run("not found", func(t *testing.T) {
		_, st, ctx := setup(t)
		_, err := st.UpdateWithConflicts(ctx, ptrOf("a"), setN(1))
		assert.True(t, state.IsNotFoundError(err), "%v", err)
	})
	t.Run("updater owner change is discarded", func(t *testing.T) {
		_, st, ctx := setup(t, newNum("a", 1))
		r, err := st.UpdateWithConflicts(ctx, ptrOf("a"), func(r resource.Resource) error {
			r.(*num).TypedSpec().N = 2
			return r.Metadata().SetOwner("intruder")
		})
		require.NoError(t, err)
		assert.Equal(t, "", r.Metadata().Owner())
	})
	t.Run("canceled context", func(t *testing.T) {
		_, st, ctx := setup(t, newNum("a", 1))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := st.UpdateWithConflicts(cctx, ptrOf("a"), setN(2))
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestWrapCore_Modify(t *testing.T) {
	t.Run("S6 creates when absent with the update owner", func(t *testing.T) {
		core, st, ctx := setup(t)
		empty := newNum("a", 0)
		r, err := st.ModifyWithResult(ctx, empty, setN(3), state.WithUpdateOwner("ctrl"))
		require.NoError(t, err)
		assert.Equal(t, 3, r.(*num).TypedSpec().N)
		assert.Equal(t, "ctrl", r.Metadata().Owner())
		assert.Equal(t, uint64(1), r.Metadata().Version().Value())
		assert.Equal(t, 0, empty.TypedSpec().N, "emptyResource is not modified")
		got, err := core.Get(ctx, ptrOf("a"))
		require.NoError(t, err)
		assert.True(t, resource.Equal(r, got))
	})
	t.Run("updates when present, nothing when equal", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		require.NoError(t, st.Modify(ctx, newNum("a", 0), setN(1)))
		assert.Equal(t, 1, core.writeCount())
		r, err := st.ModifyWithResult(ctx, newNum("a", 0), setN(4))
		require.NoError(t, err)
		assert.Equal(t, uint64(2), r.Metadata().Version().Value())
		assert.Equal(t, 4, r.(*num).TypedSpec().N)
		assert.Equal(t, 2, core.writeCount())
	})
	t.Run("create race goes to the update path", func(t *testing.T) {
		core, st, ctx := setup(t)
		once := true
		core.beforeCreate = func() {
			if once {
				once = false
				require.NoError(t, core.Create(ctx, newNum("a", 10)))
			}
		}
		var seen []int
		r, err := st.ModifyWithResult(ctx, newNum("a", 0), func(r resource.Resource) error {
			seen = append(seen, r.(*num).TypedSpec().N)
			r.(*num).TypedSpec().N++
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []int{0, 10}, seen)
		assert.Equal(t, 11, r.(*num).TypedSpec().N)
		assert.Equal(t, uint64(2), r.Metadata().Version().Value())
	})
	t.Run("version conflicts are retried", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		core.updateConflicts = 3
		r, err := st.ModifyWithResult(ctx, newNum("a", 0), setN(7))
		require.NoError(t, err)
		assert.Equal(t, 7, r.(*num).TypedSpec().N)
	})
	t.Run("fn error aborts the create", func(t *testing.T) {
		core, st, ctx := setup(t)
		boom := errors.New("boom")
		assert.ErrorIs(t, st.Modify(ctx, newNum("a", 0), func(resource.Resource) error { return boom }), boom)
		assert.Equal(t, 0, core.writeCount())
	})
}

func TestWrapCore_Teardown(t *testing.T) {
	core, st, ctx := setup(t)
	require.NoError(t, core.Create(ctx, newNum("a", 1), state.WithCreateOwner("ctrl")))
	require.NoError(t, st.AddFinalizer(ctx, ptrOf("a"), "f"))
	writes := core.writeCount()

	_, err := st.Teardown(ctx, ptrOf("a"))
	assert.True(t, state.IsOwnerConflictError(err), "%v", err)
	assert.Equal(t, writes, core.writeCount())

	empty, err := st.Teardown(ctx, ptrOf("a"), state.WithTeardownOwner("ctrl"))
	require.NoError(t, err)
	assert.False(t, empty)
	assert.Equal(t, writes+1, core.writeCount(), "one write")
	got, err := core.Get(ctx, ptrOf("a"))
	require.NoError(t, err)
	assert.Equal(t, resource.PhaseTearingDown, got.Metadata().Phase())
	assert.Equal(t, "ctrl", got.Metadata().Owner())

	empty, err = st.Teardown(ctx, ptrOf("a"), state.WithTeardownOwner("ctrl"))
	require.NoError(t, err)
	assert.False(t, empty)
	assert.Equal(t, writes+1, core.writeCount(), "already tearing down: no write")

	require.NoError(t, st.RemoveFinalizer(ctx, ptrOf("a"), "f"))
	empty, err = st.Teardown(ctx, ptrOf("a"), state.WithTeardownOwner("ctrl"))
	require.NoError(t, err)
	assert.True(t, empty)

	_, err = st.Teardown(ctx, ptrOf("missing"))
	assert.True(t, state.IsNotFoundError(err), "%v", err)

	core.updateConflicts = 2
	require.NoError(t, core.Create(ctx, newNum("b", 1)))
	empty, err = st.Teardown(ctx, ptrOf("b"))
	require.NoError(t, err, "version conflicts are retried")
	assert.True(t, empty)
}

func TestWrapCore_Finalizers(t *testing.T) {
	core, st, ctx := setup(t)
	require.NoError(t, core.Create(ctx, newNum("a", 1), state.WithCreateOwner("ctrl")))
	require.NoError(t, st.AddFinalizer(ctx, ptrOf("a"), "f1", "f2"))
	w := core.writeCount()
	require.NoError(t, st.AddFinalizer(ctx, ptrOf("a"), "f1", "f2"))
	require.NoError(t, st.RemoveFinalizer(ctx, ptrOf("a"), "absent"))
	require.NoError(t, st.AddFinalizer(ctx, ptrOf("a")))
	assert.Equal(t, w, core.writeCount(), "idempotent: nothing written")

	_, err := st.Teardown(ctx, ptrOf("a"), state.WithTeardownOwner("ctrl"))
	require.NoError(t, err)
	core.updateConflicts = 2
	require.NoError(t, st.RemoveFinalizer(ctx, ptrOf("a"), "f1"), "tearing down, with version conflicts")
	got, err := core.Get(ctx, ptrOf("a"))
	require.NoError(t, err)
	assert.Equal(t, resource.Finalizers{"f2"}, *got.Metadata().Finalizers())
	assert.Equal(t, "ctrl", got.Metadata().Owner(), "owner kept")
	assert.Equal(t, resource.PhaseTearingDown, got.Metadata().Phase())

	assert.True(t, state.IsNotFoundError(st.AddFinalizer(ctx, ptrOf("missing"), "f")))
}

func TestWrapCore_WatchFor(t *testing.T) {
	t.Run("waits for a condition", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		done := make(chan resource.Resource, 1)
		errc := make(chan error, 1)
		go func() {
			r, err := st.WatchFor(ctx, ptrOf("a"), state.WithCondition(func(r resource.Resource) (bool, error) {
				return r.(*num).TypedSpec().N >= 3, nil
			}), state.WithPhases(resource.PhaseRunning))
			done <- r
			errc <- err
		}()
		for n := 2; n <= 3; n++ {
			_, err := st.UpdateWithConflicts(ctx, ptrOf("a"), setN(n))
			require.NoError(t, err)
		}
		r := <-done
		require.NoError(t, <-errc)
		assert.Equal(t, 3, r.(*num).TypedSpec().N)
		assert.Eventually(t, func() bool { return core.watcherCount() == 0 }, 5*time.Second, time.Millisecond, "watch ended")
	})
	t.Run("absent resource: waits for creation by default", func(t *testing.T) {
		_, st, ctx := setup(t)
		errc := make(chan error, 1)
		go func() {
			_, err := st.WatchFor(ctx, ptrOf("a"), state.WithFinalizerEmpty())
			errc <- err
		}()
		require.NoError(t, st.Modify(ctx, newNum("a", 0), setN(1)))
		assert.NoError(t, <-errc)
	})
	t.Run("destroyed event type", func(t *testing.T) {
		_, st, ctx := setup(t)
		r, err := st.WatchFor(ctx, ptrOf("a"), state.WithEventTypes(state.Destroyed))
		require.NoError(t, err)
		assert.Equal(t, "a", r.Metadata().ID())
	})
	t.Run("condition error ends the wait", func(t *testing.T) {
		_, st, ctx := setup(t, newNum("a", 1))
		boom := errors.New("boom")
		_, err := st.WatchFor(ctx, ptrOf("a"), state.WithCondition(func(resource.Resource) (bool, error) { return false, boom }))
		assert.ErrorIs(t, err, boom)
	})
	t.Run("context ends the wait", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		cctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			_, err := st.WatchFor(cctx, ptrOf("a"), state.WithPhases(resource.PhaseTearingDown))
			errc <- err
		}()
		cancel()
		assert.ErrorIs(t, <-errc, context.Canceled)
		assert.Eventually(t, func() bool { return core.watcherCount() == 0 }, 5*time.Second, time.Millisecond)
	})
}

func TestWrapCore_TeardownAndDestroy(t *testing.T) {
	t.Run("waits for finalizers", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		require.NoError(t, st.AddFinalizer(ctx, ptrOf("a"), "f"))
		errc := make(chan error, 1)
		go func() { errc <- st.TeardownAndDestroy(ctx, ptrOf("a")) }()
		_, err := st.WatchFor(ctx, ptrOf("a"), state.WithPhases(resource.PhaseTearingDown))
		require.NoError(t, err)
		select {
		case err := <-errc:
			t.Fatalf("returned before the finalizer was removed: %v", err)
		default:
		}
		require.NoError(t, st.RemoveFinalizer(ctx, ptrOf("a"), "f"))
		require.NoError(t, <-errc)
		_, err = core.Get(ctx, ptrOf("a"))
		assert.True(t, state.IsNotFoundError(err))
	})
	t.Run("finalizer added before the destroy: waits again", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		once := true
		core.beforeDestroy = func() {
			if once {
				once = false
				require.NoError(t, st.AddFinalizer(ctx, ptrOf("a"), "late"))
			}
		}
		errc := make(chan error, 1)
		go func() { errc <- st.TeardownAndDestroy(ctx, ptrOf("a")) }()
		_, err := st.WatchFor(ctx, ptrOf("a"), state.WithCondition(func(r resource.Resource) (bool, error) {
			return r.Metadata().Finalizers().Has("late"), nil
		}))
		require.NoError(t, err)
		require.NoError(t, st.RemoveFinalizer(ctx, ptrOf("a"), "late"))
		require.NoError(t, <-errc)
		_, err = core.Get(ctx, ptrOf("a"))
		assert.True(t, state.IsNotFoundError(err))
	})
	t.Run("recreated running while waiting: torn down again", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		require.NoError(t, st.AddFinalizer(ctx, ptrOf("a"), "f"))
		errc := make(chan error, 1)
		go func() { errc <- st.TeardownAndDestroy(ctx, ptrOf("a")) }()
		_, err := st.WatchFor(ctx, ptrOf("a"), state.WithPhases(resource.PhaseTearingDown))
		require.NoError(t, err)
		// Replace it in one step by a new running incarnation with a
		// finalizer, as if destroyed and created again meanwhile.
		fresh := newNum("a", 2)
		fresh.Metadata().SetVersion(resource.NewVersion(10))
		fresh.Metadata().Finalizers().Add("g")
		core.mu.Lock()
		core.res[resource.PointerOf(ptrOf("a"))] = fresh
		core.changedLocked()
		core.mu.Unlock()
		_, err = st.WatchFor(ctx, ptrOf("a"), state.WithCondition(func(r resource.Resource) (bool, error) {
			return r.Metadata().Finalizers().Has("g") && r.Metadata().Phase() == resource.PhaseTearingDown, nil
		}))
		require.NoError(t, err)
		require.NoError(t, st.RemoveFinalizer(ctx, ptrOf("a"), "g"))
		require.NoError(t, <-errc)
		_, err = core.Get(ctx, ptrOf("a"))
		assert.True(t, state.IsNotFoundError(err))
	})
	t.Run("absent at the start", func(t *testing.T) {
		_, st, ctx := setup(t)
		assert.True(t, state.IsNotFoundError(st.TeardownAndDestroy(ctx, ptrOf("a"))))
	})
	t.Run("owner", func(t *testing.T) {
		core, st, ctx := setup(t)
		require.NoError(t, core.Create(ctx, newNum("a", 1), state.WithCreateOwner("ctrl")))
		assert.True(t, state.IsOwnerConflictError(st.TeardownAndDestroy(ctx, ptrOf("a"))))
		require.NoError(t, st.TeardownAndDestroy(ctx, ptrOf("a"), state.WithTeardownAndDestroyOwner("ctrl")))
		_, err := core.Get(ctx, ptrOf("a"))
		assert.True(t, state.IsNotFoundError(err))
	})
	t.Run("destroyed by someone else while waiting", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		require.NoError(t, st.AddFinalizer(ctx, ptrOf("a"), "f"))
		errc := make(chan error, 1)
		go func() { errc <- st.TeardownAndDestroy(ctx, ptrOf("a")) }()
		_, err := st.WatchFor(ctx, ptrOf("a"), state.WithPhases(resource.PhaseTearingDown))
		require.NoError(t, err)
		// Remove the finalizer and destroy in one step as another actor.
		core.mu.Lock()
		delete(core.res, resource.PointerOf(ptrOf("a")))
		core.changedLocked()
		core.mu.Unlock()
		assert.NoError(t, <-errc)
	})
}

func TestWrapCore_ContextWithTeardown(t *testing.T) {
	t.Run("absent: already canceled", func(t *testing.T) {
		_, st, ctx := setup(t)
		tctx, err := st.ContextWithTeardown(ctx, ptrOf("a"))
		require.NoError(t, err)
		require.Error(t, tctx.Err())
		assert.ErrorIs(t, context.Cause(tctx), state.ErrDestroyed)
	})
	t.Run("tearing down: already canceled", func(t *testing.T) {
		_, st, ctx := setup(t, newNum("a", 1))
		_, err := st.Teardown(ctx, ptrOf("a"))
		require.NoError(t, err)
		tctx, err := st.ContextWithTeardown(ctx, ptrOf("a"))
		require.NoError(t, err)
		require.Error(t, tctx.Err())
		assert.ErrorIs(t, context.Cause(tctx), state.ErrTearingDown)
	})
	t.Run("canceled by teardown", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		tctx, err := st.ContextWithTeardown(ctx, ptrOf("a"))
		require.NoError(t, err)
		_, err = st.UpdateWithConflicts(ctx, ptrOf("a"), setN(2))
		require.NoError(t, err)
		assert.NoError(t, tctx.Err(), "an update does not cancel")
		_, err = st.Teardown(ctx, ptrOf("a"))
		require.NoError(t, err)
		select {
		case <-tctx.Done():
		case <-ctx.Done():
			t.Fatal("not canceled by teardown")
		}
		assert.ErrorIs(t, context.Cause(tctx), state.ErrTearingDown)
		assert.Eventually(t, func() bool { return core.watcherCount() == 0 }, 5*time.Second, time.Millisecond)
	})
	t.Run("canceled by destroy", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		tctx, err := st.ContextWithTeardown(ctx, ptrOf("a"))
		require.NoError(t, err)
		require.NoError(t, core.Destroy(ctx, ptrOf("a")))
		select {
		case <-tctx.Done():
		case <-ctx.Done():
			t.Fatal("not canceled by destroy")
		}
		assert.ErrorIs(t, context.Cause(tctx), state.ErrDestroyed)
	})
	t.Run("parent already done: its error and a done context", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		pctx, cancel := context.WithCancel(ctx)
		cancel()
		tctx, err := st.ContextWithTeardown(pctx, ptrOf("a"))
		require.ErrorIs(t, err, context.Canceled)
		require.NotNil(t, tctx, "a caller that waits on it must not panic")
		<-tctx.Done()
		assert.Equal(t, 0, core.watcherCount(), "no watch was started")
	})
	t.Run("parent cancel ends the watch", func(t *testing.T) {
		core, st, ctx := setup(t, newNum("a", 1))
		pctx, cancel := context.WithCancel(ctx)
		tctx, err := st.ContextWithTeardown(pctx, ptrOf("a"))
		require.NoError(t, err)
		assert.Equal(t, 1, core.watcherCount())
		cancel()
		<-tctx.Done()
		assert.ErrorIs(t, context.Cause(tctx), context.Canceled)
		assert.Eventually(t, func() bool { return core.watcherCount() == 0 }, 5*time.Second, time.Millisecond)
	})
}

func TestWrapCore_WatchErrors(t *testing.T) {
	core, st, ctx := setup(t, newNum("a", 1))
	boom := errors.New("boom")
	core.watchErr = boom

	_, err := st.WatchFor(ctx, ptrOf("a"))
	assert.ErrorIs(t, err, boom)

	tctx, err := st.ContextWithTeardown(ctx, ptrOf("a"))
	require.NoError(t, err)
	require.Error(t, tctx.Err(), "a failed watch cancels")
	assert.ErrorIs(t, context.Cause(tctx), boom)

	assert.ErrorIs(t, st.TeardownAndDestroy(ctx, ptrOf("a")), boom)
}

func TestWrapCore_ContextWithTeardownParentDone(t *testing.T) {
	_, st, ctx := setup(t, newNum("a", 1))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := st.ContextWithTeardown(cctx, ptrOf("a"))
	assert.ErrorIs(t, err, context.Canceled)
}

// TestWrapCore_EndedContextNamesTheCallAndResource: a helper whose context
// ends before an attempt (the first, or a retry after a conflict) returns
// the context's cause, wrapped in an error that names the operation and
// the resource, so that a log line of it says what was not done.
func TestWrapCore_EndedContextNamesTheCallAndResource(t *testing.T) {
	_, st, _ := setup(t, newNum("a", 1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, call := range map[string]func() error{
		"modify": func() error {
			return st.Modify(ctx, newNum("a", 0), func(resource.Resource) error { return nil })
		},
		"update": func() error {
			_, err := st.UpdateWithConflicts(ctx, ptrOf("a"), func(resource.Resource) error { return nil })
			return err
		},
		"teardown": func() error {
			_, err := st.Teardown(ctx, ptrOf("a"))
			return err
		},
		"edit finalizers of": func() error { return st.AddFinalizer(ctx, ptrOf("a"), "f") },
	} {
		err := call()
		require.Error(t, err, name)
		assert.ErrorIs(t, err, context.Canceled, name)
		assert.Contains(t, err.Error(), "state: "+name+" "+resource.PointerString(ptrOf("a")), name)
	}
}
