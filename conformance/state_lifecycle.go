package conformance

import (
	"context"
	"fmt"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestS4_Teardown: Teardown moves the phase to tearing-down with one version
// bump and one Updated event (none when already tearing down), checks the
// owner, and reports whether the finalizers are empty.
func (s *StateSuite) TestS4_Teardown() {
	_, err := s.State.Teardown(s.ctx, s.ptr("missing"))
	s.True(state.IsNotFoundError(err), "absent: %v", err)

	s.create("a", 1, state.WithCreateOwner("ctrl"))
	s.Require().NoError(s.State.AddFinalizer(s.ctx, s.ptr("a"), "f"))
	ch := s.watch("a", 8)
	s.expectEvent(ch, state.Created, "a", 2)

	_, err = s.State.Teardown(s.ctx, s.ptr("a"), state.WithTeardownOwner("other"))
	s.True(state.IsOwnerConflictError(err), "other owner: %v", err)

	empty, err := s.State.Teardown(s.ctx, s.ptr("a"), state.WithTeardownOwner("ctrl"))
	s.Require().NoError(err)
	s.False(empty, "a finalizer is left")
	ev := s.expectEvent(ch, state.Updated, "a", 3)
	s.Equal(resource.PhaseTearingDown, ev.Resource.Metadata().Phase())
	s.Require().NotNil(ev.Old)
	s.Equal(resource.PhaseRunning, ev.Old.Metadata().Phase())
	s.Equal("ctrl", ev.Resource.Metadata().Owner())

	empty, err = s.State.Teardown(s.ctx, s.ptr("a"), state.WithTeardownOwner("ctrl"))
	s.Require().NoError(err)
	s.False(empty)
	s.Equal(uint64(3), version(s.get("a")), "already tearing down: no version bump")

	s.Require().NoError(s.State.RemoveFinalizer(s.ctx, s.ptr("a"), "f"))
	// The next event is the finalizer removal: the second Teardown sent none.
	s.expectEvent(ch, state.Updated, "a", 4)
	empty, err = s.State.Teardown(s.ctx, s.ptr("a"), state.WithTeardownOwner("ctrl"))
	s.Require().NoError(err)
	s.True(empty, "no finalizers left")
	s.Equal(uint64(4), version(s.get("a")))
}

// TestS4_TeardownAndDestroy: TeardownAndDestroy blocks until the finalizers
// are empty, then destroys; it checks the owner and reports an absent
// resource.
func (s *StateSuite) TestS4_TeardownAndDestroy() {
	err := s.State.TeardownAndDestroy(s.ctx, s.ptr("missing"))
	s.True(state.IsNotFoundError(err), "absent: %v", err)

	s.create("a", 1, state.WithCreateOwner("ctrl"))
	err = s.State.TeardownAndDestroy(s.ctx, s.ptr("a"), state.WithTeardownAndDestroyOwner("other"))
	s.True(state.IsOwnerConflictError(err), "other owner: %v", err)
	s.Equal(resource.PhaseRunning, s.get("a").Metadata().Phase(), "refused teardown wrote nothing")

	s.Require().NoError(s.State.AddFinalizer(s.ctx, s.ptr("a"), "f1", "f2"))
	errc := make(chan error, 1)
	go func() {
		errc <- s.State.TeardownAndDestroy(s.ctx, s.ptr("a"), state.WithTeardownAndDestroyOwner("ctrl"))
	}()
	_, err = s.State.WatchFor(s.ctx, s.ptr("a"), state.WithPhases(resource.PhaseTearingDown))
	s.Require().NoError(err)
	s.Require().NoError(s.State.RemoveFinalizer(s.ctx, s.ptr("a"), "f1"))
	_, err = s.State.WatchFor(s.ctx, s.ptr("a"), state.WithCondition(func(r resource.Resource) (bool, error) {
		return !r.Metadata().Finalizers().Has("f1"), nil
	}))
	s.Require().NoError(err)
	select {
	case err := <-errc:
		s.FailNow("TeardownAndDestroy returned while a finalizer was left", "%v", err)
	default:
	}
	_, err = s.State.Get(s.ctx, s.ptr("a"))
	s.Require().NoError(err, "still there while a finalizer is left")

	s.Require().NoError(s.State.RemoveFinalizer(s.ctx, s.ptr("a"), "f2"))
	select {
	case err := <-errc:
		s.Require().NoError(err)
	case <-s.ctx.Done():
		s.FailNow("TeardownAndDestroy did not return after the finalizers were removed")
	}
	_, err = s.State.Get(s.ctx, s.ptr("a"))
	s.True(state.IsNotFoundError(err), "destroyed: %v", err)

	// Without finalizers it destroys at once.
	s.create("b", 1)
	s.Require().NoError(s.State.TeardownAndDestroy(s.ctx, s.ptr("b")))
	_, err = s.State.Get(s.ctx, s.ptr("b"))
	s.True(state.IsNotFoundError(err), "destroyed: %v", err)
}

// TestS4_ContextWithTeardown: the context is canceled when the resource
// starts tearing down or is destroyed, and already canceled for an absent
// resource; other changes leave it alone.
func (s *StateSuite) TestS4_ContextWithTeardown() {
	absent, err := s.State.ContextWithTeardown(s.ctx, s.ptr("missing"))
	s.Require().NoError(err, "absent: no error")
	s.Error(absent.Err(), "absent: already canceled")

	waitDone := func(what string, ctx context.Context) {
		select {
		case <-ctx.Done():
		case <-s.ctx.Done():
			s.FailNow(what + ": context not canceled")
		}
	}

	s.create("a", 1)
	s.create("b", 1)
	ctxA, err := s.State.ContextWithTeardown(s.ctx, s.ptr("a"))
	s.Require().NoError(err)
	ctxB, err := s.State.ContextWithTeardown(s.ctx, s.ptr("b"))
	s.Require().NoError(err)
	s.set("a", 2)
	s.Require().NoError(s.State.AddFinalizer(s.ctx, s.ptr("a"), "f"))
	// Wait until a watcher has surely seen the changes: WatchFor sees them.
	_, err = s.State.WatchFor(s.ctx, s.ptr("a"), state.WithCondition(func(r resource.Resource) (bool, error) {
		return r.Metadata().Finalizers().Has("f"), nil
	}))
	s.Require().NoError(err)
	s.NoError(ctxA.Err(), "updates do not cancel")

	_, err = s.State.Teardown(s.ctx, s.ptr("a"))
	s.Require().NoError(err)
	waitDone("teardown", ctxA)
	s.NoError(ctxB.Err(), "another resource's teardown does not cancel")

	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("b")))
	waitDone("destroy", ctxB)

	tearing, err := s.State.ContextWithTeardown(s.ctx, s.ptr("a"))
	s.Require().NoError(err)
	s.Error(tearing.Err(), "already tearing down: already canceled")

	// The parent's cancel cancels it too.
	s.create("c", 1)
	parent, cancel := context.WithCancel(s.ctx)
	ctxC, err := s.State.ContextWithTeardown(parent, s.ptr("c"))
	s.Require().NoError(err)
	cancel()
	waitDone("parent cancel", ctxC)
}

// TestS5_Finalizers: AddFinalizer and RemoveFinalizer work in any phase,
// keep the owner, are idempotent (nothing written when nothing changes),
// and retry on version conflicts under concurrent writers.
func (s *StateSuite) TestS5_Finalizers() {
	err := s.State.AddFinalizer(s.ctx, s.ptr("missing"), "f")
	s.True(state.IsNotFoundError(err), "absent: %v", err)

	s.create("a", 1, state.WithCreateOwner("ctrl"))
	ch := s.watch("a", 16)
	s.expectEvent(ch, state.Created, "a", 1)

	s.Require().NoError(s.State.AddFinalizer(s.ctx, s.ptr("a"), "f1"))
	ev := s.expectEvent(ch, state.Updated, "a", 2)
	s.Equal(resource.Finalizers{"f1"}, *ev.Resource.Metadata().Finalizers())
	s.Equal("ctrl", ev.Resource.Metadata().Owner(), "owner kept")

	s.Require().NoError(s.State.AddFinalizer(s.ctx, s.ptr("a"), "f1"))
	s.Require().NoError(s.State.RemoveFinalizer(s.ctx, s.ptr("a"), "absent"))
	s.Equal(uint64(2), version(s.get("a")), "no-op: no version bump")

	_, err = s.State.Teardown(s.ctx, s.ptr("a"), state.WithTeardownOwner("ctrl"))
	s.Require().NoError(err)
	s.expectEvent(ch, state.Updated, "a", 3) // the no-ops sent no event

	s.Require().NoError(s.State.AddFinalizer(s.ctx, s.ptr("a"), "f2"), "tearing down")
	s.Require().NoError(s.State.RemoveFinalizer(s.ctx, s.ptr("a"), "f1"), "tearing down")
	s.expectEvent(ch, state.Updated, "a", 4)
	ev = s.expectEvent(ch, state.Updated, "a", 5)
	s.Equal(resource.Finalizers{"f2"}, *ev.Resource.Metadata().Finalizers())
	s.Equal("ctrl", ev.Resource.Metadata().Owner(), "owner kept")
	s.Equal(resource.PhaseTearingDown, ev.Resource.Metadata().Phase(), "phase kept")

	// Concurrent adders and removers all succeed.
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() { errs <- s.State.AddFinalizer(s.ctx, s.ptr("a"), fmt.Sprintf("c%d", i)) })
	}
	wg.Wait()
	for i := range n {
		s.Require().NoError(<-errs)
		s.True(s.get("a").Metadata().Finalizers().Has(fmt.Sprintf("c%d", i)))
	}
	for i := range n {
		wg.Go(func() { errs <- s.State.RemoveFinalizer(s.ctx, s.ptr("a"), fmt.Sprintf("c%d", i)) })
	}
	wg.Wait()
	for range n {
		s.Require().NoError(<-errs)
	}
	got := s.get("a")
	s.Equal(resource.Finalizers{"f2"}, *got.Metadata().Finalizers())
	s.Equal(uint64(5+2*n), version(got), "one write per change")
}

// TestS6_NoopWritesNothing: UpdateWithConflicts, Modify and
// ModifyWithResult write nothing when the result is equal; Modify creates
// an absent resource with the owner from WithUpdateOwner.
func (s *StateSuite) TestS6_NoopWritesNothing() {
	setValue := func(v int) func(resource.Resource) error {
		return func(r resource.Resource) error {
			s.asInt(r).TypedSpec().Value = v
			return nil
		}
	}

	s.Require().NoError(s.State.Modify(s.ctx, s.intRes("a", 0), setValue(1), state.WithUpdateOwner("ctrl")))
	got := s.get("a")
	s.Equal(1, got.TypedSpec().Value, "Modify created it")
	s.Equal("ctrl", got.Metadata().Owner(), "with the update owner")
	s.Equal(uint64(1), version(got))

	ch := s.watch("a", 16)
	s.expectEvent(ch, state.Created, "a", 1)

	r, err := s.State.UpdateWithConflicts(s.ctx, s.ptr("a"), setValue(1), state.WithUpdateOwner("ctrl"))
	s.Require().NoError(err)
	s.Equal(uint64(1), version(r), "UpdateWithConflicts no-op returns the current resource")
	s.Require().NoError(s.State.Modify(s.ctx, s.intRes("a", 0), setValue(1), state.WithUpdateOwner("ctrl")))
	r, err = s.State.ModifyWithResult(s.ctx, s.intRes("a", 0), setValue(1), state.WithUpdateOwner("ctrl"))
	s.Require().NoError(err)
	s.Equal(uint64(1), version(r))
	s.Equal(1, s.asInt(r).TypedSpec().Value)
	s.Equal(uint64(1), version(s.get("a")), "no version bump")

	r, err = s.State.UpdateWithConflicts(s.ctx, s.ptr("a"), setValue(2), state.WithUpdateOwner("ctrl"))
	s.Require().NoError(err)
	s.Equal(uint64(2), version(r))
	s.Equal(2, s.asInt(r).TypedSpec().Value)
	// The first event after Created is this change: the no-ops sent none.
	s.expectEvent(ch, state.Updated, "a", 2)

	r, err = s.State.ModifyWithResult(s.ctx, s.intRes("a", 0), setValue(3), state.WithUpdateOwner("ctrl"))
	s.Require().NoError(err)
	s.Equal(uint64(3), version(r))
	stored := s.get("a")
	s.True(resource.Equal(stored, r), "ModifyWithResult returns the stored resource: %v vs %v", r.Metadata(), stored.Metadata())
	s.expectEvent(ch, state.Updated, "a", 3)

	r, err = s.State.ModifyWithResult(s.ctx, s.intRes("b", 0), setValue(7))
	s.Require().NoError(err)
	s.Equal(uint64(1), version(r), "created")
	s.True(resource.Equal(s.get("b"), r), "ModifyWithResult returns the created resource")

	// A function that leaves the resource equal (deleting an absent label)
	// writes nothing.
	_, err = s.State.UpdateWithConflicts(s.ctx, s.ptr("b"), func(r resource.Resource) error {
		r.Metadata().Labels().Delete("absent")
		return nil
	})
	s.Require().NoError(err)
	s.Equal(uint64(1), version(s.get("b")))
}

// TestS6_ConcurrentModify: many concurrent Modify calls on one resource,
// some racing to create it, all apply exactly once.
func (s *StateSuite) TestS6_ConcurrentModify() {
	const n, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, n*each)
	for range n {
		wg.Go(func() {
			for range each {
				errs <- s.State.Modify(s.ctx, s.intRes("a", 0), func(r resource.Resource) error {
					ir, ok := r.(*IntResource)
					if !ok {
						return fmt.Errorf("modify got a %T", r)
					}
					ir.TypedSpec().Value++
					return nil
				}, state.WithUpdateOwner("ctrl"))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		s.Require().NoError(err)
	}
	got := s.get("a")
	s.Equal(n*each, got.TypedSpec().Value)
	s.Equal(uint64(n*each), version(got))
	s.Equal("ctrl", got.Metadata().Owner())
}
