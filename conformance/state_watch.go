package conformance

import (
	"fmt"
	"regexp"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// eventBuffer is the channel capacity of watches whose exact event
// sequence a test checks: ample room, so the watcher never falls behind
// and nothing is coalesced (S12).
const eventBuffer = 256

// TestS8_WatchExisting: Watch sends the current state as Created, then
// every change in order, with Old on Updated.
func (s *StateSuite) TestS8_WatchExisting() {
	s.create("a", 1)
	s.create("other", 1)
	ch := s.watch("a", eventBuffer)
	ev := s.expectEvent(ch, state.Created, "a", 1)
	s.Equal(1, s.asInt(ev.Resource).TypedSpec().Value)

	s.set("other", 2)
	s.set("a", 2)
	s.set("a", 3)
	_, err := s.State.Teardown(s.ctx, s.ptr("a"))
	s.Require().NoError(err)
	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("a")))
	s.create("a", 10)

	ev = s.expectEvent(ch, state.Updated, "a", 2)
	s.Equal(2, s.asInt(ev.Resource).TypedSpec().Value)
	s.Require().NotNil(ev.Old)
	s.Equal(uint64(1), version(ev.Old))
	s.Equal(1, s.asInt(ev.Old).TypedSpec().Value)
	ev = s.expectEvent(ch, state.Updated, "a", 3)
	s.Equal(uint64(2), version(ev.Old))
	ev = s.expectEvent(ch, state.Updated, "a", 4)
	s.Equal(resource.PhaseTearingDown, ev.Resource.Metadata().Phase())
	ev = s.expectEvent(ch, state.Destroyed, "a", 4)
	s.Equal(3, s.asInt(ev.Resource).TypedSpec().Value, "Destroyed carries the last state")
	ev = s.expectEvent(ch, state.Created, "a", 1)
	s.Equal(10, s.asInt(ev.Resource).TypedSpec().Value)
	s.expectEmpty(ch)
}

// TestS8_WatchAbsent: Watch of an absent resource sends Destroyed with a
// tombstone (resource.IsTombstone) that carries only the pointer, then the
// changes.
func (s *StateSuite) TestS8_WatchAbsent() {
	ch := s.watch("a", eventBuffer)
	ev := s.next(ch)
	s.Require().Equal(state.Destroyed, ev.Type, eventString(ev))
	s.Require().NotNil(ev.Resource)
	s.True(resource.IsTombstone(ev.Resource), "a tombstone: %T", ev.Resource)
	md := ev.Resource.Metadata()
	s.Equal(s.ns, md.Namespace())
	s.Equal(IntResourceType, md.Type())
	s.Equal("a", md.ID())
	s.Equal(resource.VersionUndefined, md.Version(), "only the pointer")
	s.Equal(0, md.Labels().Len())
	s.True(md.Finalizers().Empty())

	s.create("a", 1)
	ev = s.expectEvent(ch, state.Created, "a", 1)
	s.False(resource.IsTombstone(ev.Resource), "a resource that exists is no tombstone")
}

// TestS9_WatchKind: WatchKind sends every change of the kind (and only of
// the kind) in the order the state applied it.
func (s *StateSuite) TestS9_WatchKind() {
	s.create("pre", 1)
	ch := s.watchKind(eventBuffer)
	agg := make(chan []state.Event, eventBuffer)
	s.Require().NoError(s.State.WatchKindAggregated(s.ctx, s.kind(), agg))

	s.create("a", 1)
	s.create("b", 1)
	s.Require().NoError(s.State.Create(s.ctx, NewStrResource(s.ns, "a", "other type")))
	s.Require().NoError(s.State.Create(s.ctx, NewIntResource(s.ns+"-other", "a", 0)))
	s.set("a", 2)
	s.set("pre", 2)
	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("b")))
	s.set("a", 3)

	type change struct {
		typ state.EventType
		id  string
		ver uint64
	}
	want := []change{
		{state.Created, "a", 1}, {state.Created, "b", 1}, {state.Updated, "a", 2},
		{state.Updated, "pre", 2}, {state.Destroyed, "b", 1}, {state.Updated, "a", 3},
	}
	for _, w := range want {
		ev := s.expectEvent(ch, w.typ, w.id, w.ver)
		if w.typ == state.Updated {
			s.Require().NotNil(ev.Old)
			s.Equal(w.ver-1, version(ev.Old))
		}
	}
	s.expectEmpty(ch)

	var got []change
	for len(got) < len(want) {
		select {
		case batch := <-agg:
			s.Require().NotEmpty(batch, "aggregated batches are not empty")
			for _, ev := range batch {
				s.Require().NotNil(ev.Resource, eventString(ev))
				got = append(got, change{ev.Type, ev.Resource.Metadata().ID(), version(ev.Resource)})
			}
		case <-s.ctx.Done():
			s.FailNow("timed out waiting for aggregated events", "got %v", got)
		}
	}
	s.Equal(want, got, "WatchKindAggregated sends the same changes in order")
}

// TestS9_BootstrapContents: with WithBootstrapContents(true), WatchKind sends
// Created for every existing resource, then Bootstrapped, then changes.
func (s *StateSuite) TestS9_BootstrapContents() {
	for _, id := range []string{"c", "a", "b"} {
		s.create(id, 1)
	}
	s.set("b", 2)
	ch := s.watchKind(eventBuffer, state.WithBootstrapContents(true))
	seen := map[string]uint64{}
	for range 3 {
		ev := s.next(ch)
		s.Require().Equal(state.Created, ev.Type, eventString(ev))
		seen[ev.Resource.Metadata().ID()] = version(ev.Resource)
	}
	s.Equal(map[string]uint64{"a": 1, "b": 2, "c": 1}, seen)
	ev := s.next(ch)
	s.Require().Equal(state.Bootstrapped, ev.Type, eventString(ev))
	s.set("c", 2)
	s.expectEvent(ch, state.Updated, "c", 2)

	// An empty kind bootstraps with no Created events.
	empty := make(chan state.Event, 4)
	s.Require().NoError(s.State.WatchKind(s.ctx, resource.NewKind(s.ns, StrResourceType), empty, state.WithBootstrapContents(true)))
	ev = s.next(empty)
	s.Equal(state.Bootstrapped, ev.Type, eventString(ev))

	// Aggregated: the bootstrap contents and Bootstrapped come first.
	agg := make(chan []state.Event, eventBuffer)
	s.Require().NoError(s.State.WatchKindAggregated(s.ctx, s.kind(), agg, state.WithBootstrapContents(true)))
	var evs []state.Event
	for len(evs) < 4 {
		select {
		case batch := <-agg:
			evs = append(evs, batch...)
		case <-s.ctx.Done():
			s.FailNow("timed out waiting for aggregated bootstrap")
		}
	}
	for _, ev := range evs[:3] {
		s.Equal(state.Created, ev.Type, eventString(ev))
	}
	s.Equal(state.Bootstrapped, evs[3].Type, eventString(evs[3]))
}

// TestS9_BootstrapUnderConcurrentWrites: changes made while the bootstrap
// snapshot is taken are neither lost nor duplicated: the events form a
// consistent chain per resource that ends at the final state.
func (s *StateSuite) TestS9_BootstrapUnderConcurrentWrites() {
	const n, rounds = 10, 20
	for i := range n {
		s.create(fmt.Sprintf("r%02d", i), 0)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	wg.Go(func() {
		for round := 1; round <= rounds; round++ {
			for i := range n {
				r, err := s.State.Get(s.ctx, s.ptr(fmt.Sprintf("r%02d", i)))
				if err == nil {
					err = setValue(r, round)
				}
				if err == nil {
					err = s.State.Update(s.ctx, r)
				}
				if err == nil {
					err = s.State.Create(s.ctx, s.intRes(fmt.Sprintf("new%02d-%02d", round, i), round))
				}
				if err == nil && round%3 == 0 {
					err = s.State.Destroy(s.ctx, s.ptr(fmt.Sprintf("new%02d-%02d", round-1, i)))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}
	})
	ch := s.watchKind(4, state.WithBootstrapContents(true))
	v := newWatchView()
	for !v.bootstrapped {
		ev := s.next(ch)
		if !v.bootstrapped {
			s.Require().Contains([]state.EventType{state.Created, state.Bootstrapped}, ev.Type, "before Bootstrapped: %s", eventString(ev))
		}
		v.apply(ev)
	}
	wg.Wait()
	select {
	case err := <-errs:
		s.Require().NoError(err)
	default:
	}
	s.converge(ch, v, s.listVersions())
}

// TestS10_LabelQueryTransitions: under a label query, a resource that
// starts matching is reported as Created and one that stops matching as
// Destroyed; a resource that never matched is never reported.
func (s *StateSuite) TestS10_LabelQueryTransitions() {
	label := func(id, app string) {
		r := s.get(id)
		r.Metadata().Labels().Set("app", app)
		s.Require().NoError(s.State.Update(s.ctx, r))
	}
	pre := s.intRes("pre", 0)
	pre.Metadata().Labels().Set("app", "x")
	s.Require().NoError(s.State.Create(s.ctx, pre))
	preOther := s.intRes("pre-other", 0)
	preOther.Metadata().Labels().Set("app", "y")
	s.Require().NoError(s.State.Create(s.ctx, preOther))

	ch := s.watchKind(eventBuffer, state.WithBootstrapContents(true), state.WatchWithLabelQuery(resource.LabelEqual("app", "x")))
	s.expectEvent(ch, state.Created, "pre", 1)
	ev := s.next(ch)
	s.Require().Equal(state.Bootstrapped, ev.Type, "only matching resources are bootstrapped: %s", eventString(ev))

	a := s.intRes("a", 0)
	a.Metadata().Labels().Set("app", "y")
	s.Require().NoError(s.State.Create(s.ctx, a)) // v1, not matching
	label("a", "x")                               // v2, starts matching
	s.set("a", 1)                                 // v3
	label("a", "y")                               // v4, stops matching
	s.set("a", 2)                                 // v5, not matching
	label("a", "x")                               // v6, matches again

	b := s.intRes("b", 0)
	s.Require().NoError(s.State.Create(s.ctx, b)) // never matches
	s.set("b", 1)
	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("b")))
	b = s.intRes("b", 5)
	b.Metadata().Labels().Set("app", "x")
	s.Require().NoError(s.State.Create(s.ctx, b))
	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("pre-other")))

	s.expectEvent(ch, state.Created, "a", 2)
	ev = s.expectEvent(ch, state.Updated, "a", 3)
	s.Equal(uint64(2), version(ev.Old))
	s.expectEvent(ch, state.Destroyed, "a", 0)
	s.expectEvent(ch, state.Created, "a", 6)
	ev = s.expectEvent(ch, state.Created, "b", 1)
	s.Equal(5, s.asInt(ev.Resource).TypedSpec().Value, "the never-matching b was never reported")
	s.expectEmpty(ch)

	// ID queries filter the same way.
	idCh := s.watchKind(eventBuffer, state.WatchWithIDQuery(resource.IDRegexpMatch(regexp.MustCompile("^c"))))
	s.create("d", 0)
	s.create("c1", 0)
	s.expectEvent(idCh, state.Created, "c1", 1)
	s.expectEmpty(idCh)
}

// TestS11_TailEvents: WithTailEvents and WithKindTailEvents replay up to the
// last n changes first, then stream.
func (s *StateSuite) TestS11_TailEvents() {
	s.create("a", 1)
	for v := 2; v <= 5; v++ {
		s.set("a", v)
	}
	ch := s.watch("a", eventBuffer, state.WithTailEvents(3))
	for v := uint64(3); v <= 5; v++ {
		ev := s.expectEvent(ch, state.Updated, "a", v)
		s.NotEmpty(ev.Bookmark, "tail events carry bookmarks")
	}
	s.set("a", 6)
	s.expectEvent(ch, state.Updated, "a", 6)
	s.expectEmpty(ch)

	all := s.watch("a", eventBuffer, state.WithTailEvents(100))
	s.expectEvent(all, state.Created, "a", 1)
	for v := uint64(2); v <= 6; v++ {
		s.expectEvent(all, state.Updated, "a", v)
	}

	s.create("b", 1)
	s.set("a", 7)
	kch := s.watchKind(eventBuffer, state.WithKindTailEvents(2))
	s.expectEvent(kch, state.Created, "b", 1)
	s.expectEvent(kch, state.Updated, "a", 7)
	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("b")))
	s.expectEvent(kch, state.Destroyed, "b", 1)
	s.expectEmpty(kch)
}

// TestS11_Bookmarks: every change event and Bootstrapped event carries a
// bookmark, and a watch started from a bookmark resumes exactly after its
// event.
func (s *StateSuite) TestS11_Bookmarks() {
	ch := s.watchKind(eventBuffer, state.WithBootstrapContents(true))
	boot := s.next(ch)
	s.Require().Equal(state.Bootstrapped, boot.Type)
	s.Require().NotEmpty(boot.Bookmark, "Bootstrapped carries a bookmark")

	s.create("a", 1)
	s.create("b", 1)
	s.set("a", 2)
	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("b")))
	s.set("a", 3)
	var evs []state.Event
	for range 5 {
		ev := s.next(ch)
		s.Require().NotEmptyf(ev.Bookmark, "change events carry bookmarks: %s", eventString(ev))
		evs = append(evs, ev)
	}

	resumed := s.watchKind(eventBuffer, state.WithKindStartFromBookmark(boot.Bookmark))
	for _, want := range evs {
		s.expectEvent(resumed, want.Type, want.Resource.Metadata().ID(), version(want.Resource))
	}
	for i := range evs {
		rch := s.watchKind(eventBuffer, state.WithKindStartFromBookmark(evs[i].Bookmark))
		for _, want := range evs[i+1:] {
			got := s.expectEvent(rch, want.Type, want.Resource.Metadata().ID(), version(want.Resource))
			s.Equal(want.Bookmark, got.Bookmark, "the same change carries the same bookmark")
		}
		s.expectEmpty(rch)
	}

	// Single-resource watches resume the same way.
	ach := s.watch("a", eventBuffer, state.WithTailEvents(10))
	var aevs []state.Event
	for range 3 {
		ev := s.next(ach)
		s.Require().NotEmpty(ev.Bookmark, eventString(ev))
		aevs = append(aevs, ev)
	}
	s.Equal(uint64(3), version(aevs[2].Resource))
	r := s.watch("a", eventBuffer, state.WithStartFromBookmark(aevs[0].Bookmark))
	s.expectEvent(r, state.Updated, "a", 2)
	s.expectEvent(r, state.Updated, "a", 3)
	s.set("a", 4)
	s.expectEvent(r, state.Updated, "a", 4)
	s.expectEmpty(r)
}

// TestS11_BookmarkErrors: a bookmark older than the kept history gives a
// buffer-overrun error from the watch call itself; a malformed one is
// refused.
func (s *StateSuite) TestS11_BookmarkErrors() {
	err := s.State.WatchKind(s.ctx, s.kind(), make(chan state.Event, 1), state.WithKindStartFromBookmark(state.Bookmark("\x00garbage\xff")))
	s.Error(err, "malformed bookmark")
	err = s.State.Watch(s.ctx, s.ptr("a"), make(chan state.Event, 1), state.WithStartFromBookmark(state.Bookmark("\x00garbage\xff")))
	s.Error(err, "malformed bookmark")

	if s.HistoryCapacity <= 0 {
		s.T().Log("HistoryCapacity is not set: the buffer-overrun check is skipped")
		return
	}
	ch := s.watchKind(eventBuffer)
	s.create("a", 0)
	first := s.next(ch)
	s.Require().NotEmpty(first.Bookmark)
	for v := 1; v <= 2*s.HistoryCapacity+2; v++ {
		s.set("a", v)
	}
	err = s.State.WatchKind(s.ctx, s.kind(), make(chan state.Event, 1), state.WithKindStartFromBookmark(first.Bookmark))
	s.True(state.IsBufferOverrunError(err), "WatchKind from a bookmark past the history: %v", err)
	err = s.State.Watch(s.ctx, s.ptr("a"), make(chan state.Event, 1), state.WithStartFromBookmark(first.Bookmark))
	s.True(state.IsBufferOverrunError(err), "Watch from a bookmark past the history: %v", err)
}
