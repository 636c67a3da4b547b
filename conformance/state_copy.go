package conformance

import (
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// listPtr points to the ListResource id in the test's namespace.
func (s *StateSuite) listPtr(id resource.ID) resource.Pointer {
	return resource.NewPointer(s.ns, ListResourceType, id)
}

// getList reads the ListResource id.
func (s *StateSuite) getList(id resource.ID) *ListResource {
	r, err := s.State.Get(s.ctx, s.listPtr(id))
	s.Require().NoError(err)
	lr, ok := r.(*ListResource)
	s.Require().Truef(ok, "resource %s is a %T", resource.String(r), r)
	return lr
}

// TestR2_WrittenSpecsNeverAlias: a spec with a slice and a map (and no
// DeepCopy method) passed to Create, Update or an updater shares nothing
// with the stored state: mutating the caller's object afterwards changes
// nothing stored, at the same version, and sends no event (the issue's
// reproduction).
func (s *StateSuite) TestR2_WrittenSpecsNeverAlias() {
	ch := make(chan state.Event, eventBuffer)
	s.Require().NoError(s.State.WatchKind(s.ctx, resource.NewKind(s.ns, ListResourceType), ch))

	r := NewListResource(s.ns, "a", ListSpec{Items: []string{"a"}, Sets: map[string][]int{"k": {1}}})
	s.Require().NoError(s.State.Create(s.ctx, r))
	s.Require().Equal(state.Created, s.next(ch).Type)
	r.TypedSpec().Items[0] = "b"
	r.TypedSpec().Sets["k"][0] = 2
	got := s.getList("a")
	s.Equal([]string{"a"}, got.TypedSpec().Items, "after Create")
	s.Equal([]int{1}, got.TypedSpec().Sets["k"], "after Create")
	s.Equal(uint64(1), version(got))

	got.TypedSpec().Items[0] = "c" // a Get result is the caller's
	s.Equal([]string{"a"}, s.getList("a").TypedSpec().Items, "after mutating a Get result")

	upd := s.getList("a")
	upd.TypedSpec().Items = append(upd.TypedSpec().Items, "x")
	s.Require().NoError(s.State.Update(s.ctx, upd))
	s.Require().Equal(state.Updated, s.next(ch).Type)
	upd.TypedSpec().Items[1] = "y"
	s.Equal([]string{"a", "x"}, s.getList("a").TypedSpec().Items, "after Update")

	var kept *ListResource
	_, err := s.State.UpdateWithConflicts(s.ctx, s.listPtr("a"), func(r resource.Resource) error {
		kept = r.(*ListResource)
		kept.TypedSpec().Sets["k"] = append(kept.TypedSpec().Sets["k"], 5)
		return nil
	})
	s.Require().NoError(err)
	s.Require().Equal(state.Updated, s.next(ch).Type)
	kept.TypedSpec().Sets["k"][0] = 100
	s.Equal([]int{1, 5}, s.getList("a").TypedSpec().Sets["k"], "after UpdateWithConflicts")
	s.Equal(uint64(3), version(s.getList("a")))
	s.expectEmpty(ch)
}

// uncopyableSpec holds a sync primitive: it cannot be deep-copied.
type uncopyableSpec struct {
	Items []string
	Mu    sync.Mutex
}

// TestR2_UncopyableSpecRefused: Create, Update and Modify of a resource
// whose spec cannot be deep-copied fail with an invalid-class error
// naming the spec type, and nothing is written.
func (s *StateSuite) TestR2_UncopyableSpecRefused() {
	md := resource.NewMetadata(s.ns, ListResourceType, "u", resource.VersionUndefined)
	r := typed.New[uncopyableSpec, ListResourceDefinition](md, uncopyableSpec{Items: []string{"a"}})

	err := s.State.Create(s.ctx, r)
	s.Require().Error(err)
	s.Truef(state.IsInvalidError(err), "Create: %v", err)
	s.Contains(err.Error(), "uncopyableSpec")

	err = s.State.Modify(s.ctx, r, func(resource.Resource) error { return nil })
	s.Require().Error(err)
	s.Truef(state.IsInvalidError(err), "Modify: %v", err)

	s.Require().NoError(s.State.Create(s.ctx, NewListResource(s.ns, "u", ListSpec{})))
	r.Metadata().SetVersion(resource.NewVersion(1))
	err = s.State.Update(s.ctx, r)
	s.Require().Error(err)
	s.Truef(state.IsInvalidError(err), "Update: %v", err)
	s.Equal(uint64(1), version(s.getList("u")), "nothing written")

	_, err = s.State.Get(s.ctx, s.listPtr("missing"))
	s.True(state.IsNotFoundError(err))
}
