package conformance

import (
	"regexp"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestR3_EmptyIdentityRejected: an empty namespace, type or ID (or a nil
// resource, pointer or channel) is refused with an invalid-input error and
// nothing is written.
func (s *StateSuite) TestR3_EmptyIdentityRejected() {
	bad := map[string]resource.Pointer{
		"empty ID":        resource.NewPointer(s.ns, IntResourceType, ""),
		"empty type":      resource.NewPointer(s.ns, "", "a"),
		"empty namespace": resource.NewPointer("", IntResourceType, "a"),
	}
	for name, p := range bad {
		r := NewIntResource(p.Namespace(), p.ID(), 1)
		*r.Metadata() = resource.NewMetadata(p.Namespace(), p.Type(), p.ID(), resource.VersionUndefined)
		err := s.State.Create(s.ctx, r)
		s.Truef(state.IsInvalidError(err), "%s: Create: %v", name, err)
		err = s.State.Update(s.ctx, r)
		s.Truef(state.IsInvalidError(err), "%s: Update: %v", name, err)
		_, err = s.State.Get(s.ctx, p)
		s.Truef(state.IsInvalidError(err), "%s: Get: %v", name, err)
		err = s.State.Destroy(s.ctx, p)
		s.Truef(state.IsInvalidError(err), "%s: Destroy: %v", name, err)
		err = s.State.Watch(s.ctx, p, make(chan state.Event, 1))
		s.Truef(state.IsInvalidError(err), "%s: Watch: %v", name, err)
		_, err = s.State.UpdateWithConflicts(s.ctx, p, func(resource.Resource) error { return nil })
		s.Truef(state.IsInvalidError(err), "%s: UpdateWithConflicts: %v", name, err)
		err = s.State.Modify(s.ctx, r, func(resource.Resource) error { return nil })
		s.Truef(state.IsInvalidError(err), "%s: Modify: %v", name, err)
		_, err = s.State.Teardown(s.ctx, p)
		s.Truef(state.IsInvalidError(err), "%s: Teardown: %v", name, err)
		err = s.State.AddFinalizer(s.ctx, p, "f")
		s.Truef(state.IsInvalidError(err), "%s: AddFinalizer: %v", name, err)
		_, err = s.State.ContextWithTeardown(s.ctx, p)
		s.Truef(state.IsInvalidError(err), "%s: ContextWithTeardown: %v", name, err)
		if p.Type() == "" || p.Namespace() == "" {
			_, err = s.State.List(s.ctx, p)
			s.Truef(state.IsInvalidError(err), "%s: List: %v", name, err)
			err = s.State.WatchKind(s.ctx, p, make(chan state.Event, 1))
			s.Truef(state.IsInvalidError(err), "%s: WatchKind: %v", name, err)
			err = s.State.WatchKindAggregated(s.ctx, p, make(chan []state.Event, 1))
			s.Truef(state.IsInvalidError(err), "%s: WatchKindAggregated: %v", name, err)
		}
	}
	s.True(state.IsInvalidError(s.State.Create(s.ctx, nil)), "nil resource")
	s.True(state.IsInvalidError(s.State.Update(s.ctx, nil)), "nil resource")
	_, err := s.State.Get(s.ctx, nil)
	s.True(state.IsInvalidError(err), "nil pointer: %v", err)
	s.True(state.IsInvalidError(s.State.Destroy(s.ctx, nil)), "nil pointer")
	s.True(state.IsInvalidError(s.State.Watch(s.ctx, s.ptr("a"), nil)), "nil channel")
	s.True(state.IsInvalidError(s.State.WatchKind(s.ctx, s.kind(), nil)), "nil channel")
	s.True(state.IsInvalidError(s.State.WatchKindAggregated(s.ctx, s.kind(), nil)), "nil channel")

	list, err := s.State.List(s.ctx, s.kind())
	s.Require().NoError(err)
	s.Empty(list.Items, "nothing written")
}

// TestS1_Create: Create stores version 1, the owner from WithCreateOwner
// (never the one carried by the resource), phase running and timestamps,
// and writes the version and timestamps back; a second Create conflicts.
func (s *StateSuite) TestS1_Create() {
	r := s.intRes("a", 1)
	s.Require().NoError(r.Metadata().SetOwner("carried"))
	r.Metadata().Labels().Set("app", "x")
	s.Require().NoError(s.State.Create(s.ctx, r, state.WithCreateOwner("ctrl")))

	s.Equal(uint64(1), version(r), "version written back")
	s.False(r.Metadata().Created().IsZero(), "created written back")
	s.False(r.Metadata().Updated().IsZero(), "updated written back")

	got := s.get("a")
	s.Equal(uint64(1), version(got))
	s.Equal("ctrl", got.Metadata().Owner(), "owner from WithCreateOwner")
	s.Equal(resource.PhaseRunning, got.Metadata().Phase())
	s.False(got.Metadata().Created().IsZero())
	s.False(got.Metadata().Updated().IsZero())
	s.Equal(1, got.TypedSpec().Value)
	v, _ := got.Metadata().Labels().Get("app")
	s.Equal("x", v)

	dup := s.intRes("a", 2)
	err := s.State.Create(s.ctx, dup)
	s.True(state.IsConflictError(err), "second Create: %v", err)
	s.Equal(1, s.get("a").TypedSpec().Value, "the conflicting Create wrote nothing")

	// The caller can Update the created resource without a Get.
	r.TypedSpec().Value = 2
	s.Require().NoError(s.State.Update(s.ctx, r, state.WithUpdateOwner("ctrl")))
	s.Equal(uint64(2), version(r))

	noOwner := s.intRes("b", 1)
	s.Require().NoError(noOwner.Metadata().SetOwner("carried"))
	s.Require().NoError(s.State.Create(s.ctx, noOwner))
	s.Equal("", s.get("b").Metadata().Owner(), "the owner carried by the resource is ignored")
}

// TestS2_Update: Update fails with not-found, version, owner and phase
// conflicts, and on success stores the next version and writes it back.
func (s *StateSuite) TestS2_Update() {
	err := s.State.Update(s.ctx, s.intRes("missing", 1))
	s.True(state.IsNotFoundError(err), "absent: %v", err)

	r := s.create("a", 1, state.WithCreateOwner("ctrl"))
	created := s.get("a").Metadata().Created()
	stale := s.get("a")

	r.TypedSpec().Value = 2
	s.Require().NoError(s.State.Update(s.ctx, r, state.WithUpdateOwner("ctrl")))
	s.Equal(uint64(2), version(r), "next version written back")
	got := s.get("a")
	s.Equal(uint64(2), version(got))
	s.Equal(2, got.TypedSpec().Value)
	s.Equal("ctrl", got.Metadata().Owner())
	s.True(got.Metadata().Created().Equal(created), "created timestamp kept")
	s.False(got.Metadata().Updated().Before(created), "updated timestamp not before created")

	stale.TypedSpec().Value = 3
	err = s.State.Update(s.ctx, stale, state.WithUpdateOwner("ctrl"))
	s.True(state.IsConflictError(err), "stale version: %v", err)
	s.False(state.IsOwnerConflictError(err) || state.IsPhaseConflictError(err) || state.IsPendingFinalizersError(err), "a plain version conflict: %v", err)

	r.TypedSpec().Value = 4
	err = s.State.Update(s.ctx, r, state.WithUpdateOwner("other"))
	s.True(state.IsOwnerConflictError(err), "other owner: %v", err)
	s.True(state.IsConflictError(err), "an owner conflict is a conflict")
	err = s.State.Update(s.ctx, r)
	s.True(state.IsOwnerConflictError(err), "no owner: %v", err)

	_, err = s.State.Teardown(s.ctx, s.ptr("a"), state.WithTeardownOwner("ctrl"))
	s.Require().NoError(err)
	r = s.get("a")
	r.TypedSpec().Value = 5
	err = s.State.Update(s.ctx, r, state.WithUpdateOwner("ctrl"))
	s.True(state.IsPhaseConflictError(err), "tearing down, running expected: %v", err)
	s.True(state.IsConflictError(err), "a phase conflict is a conflict")
	err = s.State.Update(s.ctx, r, state.WithUpdateOwner("ctrl"), state.WithExpectedPhase(resource.PhaseRunning))
	s.True(state.IsPhaseConflictError(err), "explicit running: %v", err)
	s.Equal(uint64(3), version(s.get("a")), "failed updates wrote nothing")

	s.Require().NoError(s.State.Update(s.ctx, r, state.WithUpdateOwner("ctrl"), state.WithExpectedPhase(resource.PhaseTearingDown)))
	s.Equal(uint64(4), version(r))
	r.TypedSpec().Value = 6
	s.Require().NoError(s.State.Update(s.ctx, r, state.WithUpdateOwner("ctrl"), state.WithExpectedPhaseAny()))
	got = s.get("a")
	s.Equal(6, got.TypedSpec().Value)
	s.Equal(resource.PhaseTearingDown, got.Metadata().Phase())
}

// TestS3_Destroy: Destroy fails with not-found, an owner conflict, and a
// pending-finalizers error (a conflict) while finalizers remain.
func (s *StateSuite) TestS3_Destroy() {
	err := s.State.Destroy(s.ctx, s.ptr("missing"))
	s.True(state.IsNotFoundError(err), "absent: %v", err)

	s.create("a", 1, state.WithCreateOwner("ctrl"))
	err = s.State.Destroy(s.ctx, s.ptr("a"))
	s.True(state.IsOwnerConflictError(err), "no owner: %v", err)
	err = s.State.Destroy(s.ctx, s.ptr("a"), state.WithDestroyOwner("other"))
	s.True(state.IsOwnerConflictError(err), "other owner: %v", err)

	s.Require().NoError(s.State.AddFinalizer(s.ctx, s.ptr("a"), "f"))
	err = s.State.Destroy(s.ctx, s.ptr("a"), state.WithDestroyOwner("ctrl"))
	s.True(state.IsPendingFinalizersError(err), "finalizers: %v", err)
	s.True(state.IsConflictError(err), "pending finalizers is a conflict")
	s.get("a")

	s.Require().NoError(s.State.RemoveFinalizer(s.ctx, s.ptr("a"), "f"))
	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("a"), state.WithDestroyOwner("ctrl")), "running resources without finalizers may be destroyed")
	_, err = s.State.Get(s.ctx, s.ptr("a"))
	s.True(state.IsNotFoundError(err), "gone: %v", err)
	err = s.State.Destroy(s.ctx, s.ptr("a"), state.WithDestroyOwner("ctrl"))
	s.True(state.IsNotFoundError(err), "second destroy: %v", err)

	// The ID is free again.
	s.create("a", 2)
	s.Equal(uint64(1), version(s.get("a")))
}

// TestS7_WritesAndCopyingReadsArePrivate: mutating what was passed to
// Create or Update, or what a (copying) Get or List returned, changes
// neither the stored state nor what other readers see.
func (s *StateSuite) TestS7_WritesAndCopyingReadsArePrivate() {
	r := s.intRes("a", 1)
	r.Metadata().Labels().Set("k", "v")
	r.Metadata().Finalizers().Add("f")
	s.Require().NoError(s.State.Create(s.ctx, r))

	mutate := func(res resource.Resource) {
		ir := s.asInt(res)
		ir.TypedSpec().Value = 100
		ir.Metadata().Labels().Set("k", "mutated")
		ir.Metadata().Annotations().Set("a", "mutated")
		ir.Metadata().Finalizers().Add("mutated")
		ir.Metadata().SetPhase(resource.PhaseTearingDown)
	}
	unchanged := func(what string, want int, wantVersion uint64) {
		got := s.get("a")
		s.Equalf(want, got.TypedSpec().Value, "%s: spec", what)
		s.Equalf(wantVersion, version(got), "%s: version", what)
		v, _ := got.Metadata().Labels().Get("k")
		s.Equalf("v", v, "%s: labels", what)
		s.Equalf(0, got.Metadata().Annotations().Len(), "%s: annotations", what)
		s.Equalf(resource.Finalizers{"f"}, *got.Metadata().Finalizers(), "%s: finalizers", what)
		s.Equalf(resource.PhaseRunning, got.Metadata().Phase(), "%s: phase", what)
	}

	mutate(r)
	unchanged("after Create", 1, 1)

	mutate(s.get("a"))
	unchanged("Get result", 1, 1)

	list, err := s.State.List(s.ctx, s.kind())
	s.Require().NoError(err)
	s.Require().Len(list.Items, 1)
	mutate(list.Items[0])
	unchanged("List result", 1, 1)

	u := s.get("a")
	u.TypedSpec().Value = 2
	s.Require().NoError(s.State.Update(s.ctx, u))
	mutate(u)
	unchanged("after Update", 2, 2)
}

// TestS12a_ListSortedAndFiltered: List returns the resources of the kind
// sorted by ID, filtered by label and ID queries, and nothing of other
// kinds or namespaces.
func (s *StateSuite) TestS12a_ListSortedAndFiltered() {
	for i, id := range []string{"m", "b", "z", "a", "k", "aa"} {
		r := s.intRes(id, i)
		if i%2 == 0 {
			r.Metadata().Labels().Set("even", "yes")
		}
		r.Metadata().Labels().Set("tier", []string{"web", "db", "cache"}[i%3])
		s.Require().NoError(s.State.Create(s.ctx, r))
	}
	s.Require().NoError(s.State.Create(s.ctx, NewStrResource(s.ns, "other-type", "x")))
	s.Require().NoError(s.State.Create(s.ctx, NewIntResource(s.ns+"-other", "other-ns", 0)))

	ids := func(opts ...state.ListOption) []string {
		list, err := s.State.List(s.ctx, s.kind(), opts...)
		s.Require().NoError(err)
		out := make([]string, 0, len(list.Items))
		for _, r := range list.Items {
			s.asInt(r)
			out = append(out, r.Metadata().ID())
		}
		return out
	}
	s.Equal([]string{"a", "aa", "b", "k", "m", "z"}, ids())
	s.Equal([]string{"k", "m", "z"}, ids(state.WithLabelQuery(resource.LabelExists("even"))))
	s.Equal([]string{"a", "aa", "b"}, ids(state.WithLabelQuery(resource.LabelExists("even", resource.NotMatches))))
	s.Equal([]string{"a", "m"}, ids(state.WithLabelQuery(resource.LabelEqual("tier", "web"))))
	s.Equal([]string{"aa", "b", "k", "z"}, ids(state.WithLabelQuery(resource.LabelIn("tier", []string{"db", "cache"}))))
	s.Equal([]string{"k", "z"}, ids(state.WithLabelQuery(resource.LabelIn("tier", []string{"db", "cache"}), resource.LabelExists("even"))))
	s.Equal([]string{"a", "aa"}, ids(state.WithIDQuery(resource.IDRegexpMatch(regexp.MustCompile("^a")))))
	s.Equal([]string{"aa"}, ids(state.WithIDQuery(resource.IDRegexpMatch(regexp.MustCompile("^a"))), state.WithLabelQuery(resource.LabelEqual("tier", "cache"))))

	list, err := s.State.List(s.ctx, resource.NewKind(s.ns, StrResourceType))
	s.Require().NoError(err)
	s.Require().Len(list.Items, 1)
	s.Equal("other-type", list.Items[0].Metadata().ID())
}

// TestS2_UpdateBasedOnAnEarlierIncarnation: an update based on a resource
// that was destroyed and created again since it was read is a conflict,
// although both incarnations share a version number; the new incarnation
// is left as it is. (Versions restart at 1 on every Create, so the check
// is on the creation time, which the state writes back on Create and
// returns on every read.)
func (s *StateSuite) TestS2_UpdateBasedOnAnEarlierIncarnation() {
	s.create("a", 1)
	stale := s.get("a")
	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("a")))
	s.create("a", 2)
	s.Equal(version(stale), version(s.get("a")), "both incarnations are at version 1")

	stale.TypedSpec().Value = 3
	err := s.State.Update(s.ctx, stale)
	s.True(state.IsConflictError(err), "update of an earlier incarnation: %v", err)
	got := s.get("a")
	s.Equal(2, got.TypedSpec().Value, "the new incarnation is untouched")
	s.Equal(uint64(1), version(got))

	_, err = s.State.UpdateWithConflicts(s.ctx, s.ptr("a"), func(r resource.Resource) error {
		r.(*IntResource).TypedSpec().Value = 4
		return nil
	})
	s.Require().NoError(err, "a read-modify-write of the current incarnation works")
	s.Equal(4, s.get("a").TypedSpec().Value)
}
