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

// TestS7_EventResourcesAreCopies: mutating the Resource or Old of an event
// changes neither the stored state nor what another watcher receives.
func (s *StateSuite) TestS7_EventResourcesAreCopies() {
	s.create("a", 1)
	first, second := s.watch("a", eventBuffer), s.watch("a", eventBuffer)
	s.expectEvent(first, state.Created, "a", 1)
	s.expectEvent(second, state.Created, "a", 1)

	s.set("a", 2)
	ev := s.expectEvent(first, state.Updated, "a", 2)
	s.Require().NotNil(ev.Old)
	s.asInt(ev.Resource).TypedSpec().Value = 100
	s.asInt(ev.Old).TypedSpec().Value = 100
	ev.Resource.Metadata().Labels().Set("mutated", "yes")
	ev.Old.Metadata().Labels().Set("mutated", "yes")

	other := s.expectEvent(second, state.Updated, "a", 2)
	s.Require().NotNil(other.Old)
	s.Equal(2, s.asInt(other.Resource).TypedSpec().Value)
	s.Equal(1, s.asInt(other.Old).TypedSpec().Value)
	s.Equal(0, other.Resource.Metadata().Labels().Len())
	s.Equal(0, other.Old.Metadata().Labels().Len())

	got := s.get("a")
	s.Equal(2, got.TypedSpec().Value)
	s.Equal(0, got.Metadata().Labels().Len())
}
