package conformance

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestS1_CreateIgnoresCarriedVersionAndPhase: Create stores version 1 and
// phase running whatever version and phase the caller's resource carries,
// and writes version 1 back.
func (s *StateSuite) TestS1_CreateIgnoresCarriedVersionAndPhase() {
	r := s.intRes("a", 1)
	r.Metadata().SetVersion(resource.NewVersion(7))
	r.Metadata().SetPhase(resource.PhaseTearingDown)
	s.Require().NoError(s.State.Create(s.ctx, r))
	s.Equal(uint64(1), version(r), "version 1 written back")

	got := s.get("a")
	s.Equal(uint64(1), version(got))
	s.Equal(resource.PhaseRunning, got.Metadata().Phase())
}

// TestS11_TailEventsOfDestroyedResource: WithTailEvents replays the kept
// changes of a resource that no longer exists, its destruction included,
// instead of S8's current-state event.
func (s *StateSuite) TestS11_TailEventsOfDestroyedResource() {
	s.create("a", 1)
	s.set("a", 2)
	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("a")))

	ch := s.watch("a", eventBuffer, state.WithTailEvents(10))
	s.expectEvent(ch, state.Created, "a", 1)
	s.expectEvent(ch, state.Updated, "a", 2)
	ev := s.expectEvent(ch, state.Destroyed, "a", 2)
	s.NotEmpty(ev.Bookmark)
	s.expectEmpty(ch)

	s.create("a", 3)
	s.expectEvent(ch, state.Created, "a", 1)
}

// TestS7_WatchersShareSnapshots: every watcher of a change receives the
// same objects (Resource and Old), kind and single-resource watchers
// alike; a read-only Get or List returns what a copying one does; Update
// of an event's shared Resource is refused with an invalid-class error
// and writes nothing, while its DeepCopy updates.
func (s *StateSuite) TestS7_WatchersShareSnapshots() {
	s.create("a", 1)
	first, second := s.watch("a", eventBuffer), s.watch("a", eventBuffer)
	kindCh := s.watchKind(eventBuffer)
	c1 := s.expectEvent(first, state.Created, "a", 1)
	c2 := s.expectEvent(second, state.Created, "a", 1)
	s.Same(c1.Resource, c2.Resource, "one object per change for every watcher")

	s.set("a", 2)
	evs := []state.Event{
		s.expectEvent(first, state.Updated, "a", 2),
		s.expectEvent(second, state.Updated, "a", 2),
		s.expectEvent(kindCh, state.Updated, "a", 2),
	}
	for _, ev := range evs[1:] {
		s.Same(evs[0].Resource, ev.Resource, "one object per change for every watcher")
		s.Same(evs[0].Old, ev.Old, "one Old per change for every watcher")
	}
	s.Equal(2, s.asInt(evs[0].Resource).TypedSpec().Value)
	s.Equal(1, s.asInt(evs[0].Old).TypedSpec().Value)

	ro, err := s.State.Get(s.ctx, s.ptr("a"), state.WithReadOnlyGet())
	s.Require().NoError(err)
	s.True(resource.Equal(ro, s.get("a")), "a read-only Get returns the stored state")
	list, err := s.State.List(s.ctx, s.kind(), state.WithReadOnlyList())
	s.Require().NoError(err)
	s.Require().Len(list.Items, 1)
	s.True(resource.Equal(list.Items[0], s.get("a")), "a read-only List returns the stored state")

	err = s.State.Update(s.ctx, evs[0].Resource)
	s.Require().Error(err, "Update of a shared snapshot")
	s.Truef(state.IsInvalidError(err), "Update of a shared snapshot: %v", err)
	s.Equal(uint64(2), version(s.get("a")), "nothing written")
	s.expectEmpty(first)

	c := s.asInt(evs[0].Resource.DeepCopy())
	c.TypedSpec().Value = 3
	s.Require().NoError(s.State.Update(s.ctx, c))
	s.expectEvent(first, state.Updated, "a", 3)
	s.Equal(2, s.asInt(evs[0].Resource).TypedSpec().Value, "the event's snapshot is unchanged")
}

// TestS7_SharedSnapshotsAreFrozen: the objects watch events carry
// (Resource and Old, of kind and single-resource watches) are frozen
// (resource.Metadata.Freeze), so that every watcher may read them at once,
// while a copying Get and a DeepCopy of a snapshot return metadata that is
// not frozen: the caller's to change. A labelled snapshot's copy changed
// leaves the snapshot as it was.
func (s *StateSuite) TestS7_SharedSnapshotsAreFrozen() {
	r := s.intRes("a", 1)
	r.Metadata().Labels().Set("l", "1")
	s.Require().NoError(s.State.Create(s.ctx, r, state.WithCreateOwner("ctrl")))
	one, kindCh := s.watch("a", eventBuffer), s.watchKind(eventBuffer)
	s.expectEvent(one, state.Created, "a", 1)
	s.set("a", 2)
	for _, ev := range []state.Event{s.expectEvent(one, state.Updated, "a", 2), s.expectEvent(kindCh, state.Updated, "a", 2)} {
		s.True(ev.Resource.Metadata().Frozen(), "an event's Resource is frozen")
		s.True(ev.Old.Metadata().Frozen(), "an event's Old is frozen")
		c := ev.Resource.DeepCopy()
		s.False(c.Metadata().Frozen(), "a DeepCopy is the caller's")
		c.Metadata().Labels().Set("l", "changed")
		v, _ := ev.Resource.Metadata().Labels().Get("l")
		s.Equal("1", v, "the snapshot is unchanged")
		s.Equal("ctrl", ev.Resource.Metadata().Owner())
	}
	s.False(s.get("a").Metadata().Frozen(), "a copying Get is the caller's")
}
