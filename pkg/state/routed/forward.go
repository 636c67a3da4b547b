package routed

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Every method of [state.State] is the method of the backend that serves
// the namespace of its resource, pointer or kind, called with the same
// arguments: the backend's rules, errors, snapshots and goroutines are the
// call's.

// Get implements [state.CoreState].
func (s *State) Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	b, err := s.forPointer(ptr)
	if err != nil {
		return nil, err
	}
	return b.Get(ctx, ptr, opts...)
}

// List implements [state.CoreState].
func (s *State) List(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error) {
	b, err := s.forKind(kind)
	if err != nil {
		return resource.List{}, err
	}
	return b.List(ctx, kind, opts...)
}

// Create implements [state.CoreState].
func (s *State) Create(ctx context.Context, r resource.Resource, opts ...state.CreateOption) error {
	b, err := s.forResource(r)
	if err != nil {
		return err
	}
	return b.Create(ctx, r, opts...)
}

// Update implements [state.CoreState].
func (s *State) Update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	b, err := s.forResource(r)
	if err != nil {
		return err
	}
	return b.Update(ctx, r, opts...)
}

// Destroy implements [state.CoreState].
func (s *State) Destroy(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) error {
	b, err := s.forPointer(ptr)
	if err != nil {
		return err
	}
	return b.Destroy(ctx, ptr, opts...)
}

// Watch implements [state.CoreState].
func (s *State) Watch(ctx context.Context, ptr resource.Pointer, ch chan<- state.Event, opts ...state.WatchOption) error {
	b, err := s.forPointer(ptr)
	if err != nil {
		return err
	}
	return b.Watch(ctx, ptr, ch, opts...)
}

// WatchKind implements [state.CoreState].
func (s *State) WatchKind(ctx context.Context, kind resource.Kind, ch chan<- state.Event, opts ...state.WatchKindOption) error {
	b, err := s.forKind(kind)
	if err != nil {
		return err
	}
	return b.WatchKind(ctx, kind, ch, opts...)
}

// WatchKindAggregated implements [state.CoreState].
func (s *State) WatchKindAggregated(ctx context.Context, kind resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	b, err := s.forKind(kind)
	if err != nil {
		return err
	}
	return b.WatchKindAggregated(ctx, kind, ch, opts...)
}

// UpdateWithConflicts implements [state.State].
func (s *State) UpdateWithConflicts(ctx context.Context, ptr resource.Pointer, updater state.UpdaterFunc, opts ...state.UpdateOption) (resource.Resource, error) {
	b, err := s.forPointer(ptr)
	if err != nil {
		return nil, err
	}
	return b.UpdateWithConflicts(ctx, ptr, updater, opts...)
}

// WatchFor implements [state.State].
func (s *State) WatchFor(ctx context.Context, ptr resource.Pointer, conds ...state.WatchForConditionFunc) (resource.Resource, error) {
	b, err := s.forPointer(ptr)
	if err != nil {
		return nil, err
	}
	return b.WatchFor(ctx, ptr, conds...)
}

// Teardown implements [state.State].
func (s *State) Teardown(ctx context.Context, ptr resource.Pointer, opts ...state.TeardownOption) (bool, error) {
	b, err := s.forPointer(ptr)
	if err != nil {
		return false, err
	}
	return b.Teardown(ctx, ptr, opts...)
}

// TeardownAndDestroy implements [state.State].
func (s *State) TeardownAndDestroy(ctx context.Context, ptr resource.Pointer, opts ...state.TeardownAndDestroyOption) error {
	b, err := s.forPointer(ptr)
	if err != nil {
		return err
	}
	return b.TeardownAndDestroy(ctx, ptr, opts...)
}

// AddFinalizer implements [state.State].
func (s *State) AddFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	b, err := s.forPointer(ptr)
	if err != nil {
		return err
	}
	return b.AddFinalizer(ctx, ptr, fins...)
}

// RemoveFinalizer implements [state.State].
func (s *State) RemoveFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	b, err := s.forPointer(ptr)
	if err != nil {
		return err
	}
	return b.RemoveFinalizer(ctx, ptr, fins...)
}

// ContextWithTeardown implements [state.State].
func (s *State) ContextWithTeardown(ctx context.Context, ptr resource.Pointer) (context.Context, error) {
	b, err := s.forPointer(ptr)
	if err != nil {
		return nil, err
	}
	return b.ContextWithTeardown(ctx, ptr)
}

// Modify implements [state.State].
func (s *State) Modify(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...state.UpdateOption) error {
	b, err := s.forResource(emptyResource)
	if err != nil {
		return err
	}
	return b.Modify(ctx, emptyResource, fn, opts...)
}

// ModifyWithResult implements [state.State].
func (s *State) ModifyWithResult(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...state.UpdateOption) (resource.Resource, error) {
	b, err := s.forResource(emptyResource)
	if err != nil {
		return nil, err
	}
	return b.ModifyWithResult(ctx, emptyResource, fn, opts...)
}

// givingModifier is a backend whose Modify can store what fn changed as
// is (the states state.WrapCore returns): see [State.ModifyGiven].
type givingModifier interface {
	ModifyGiven(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...state.UpdateOption) error
}

// ModifyGiven is Modify for a caller whose fn keeps nothing it is handed
// (the Runtime, for its controllers): the backend's ModifyGiven when it
// has one (saving a copy), its Modify otherwise.
func (s *State) ModifyGiven(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...state.UpdateOption) error {
	b, err := s.forResource(emptyResource)
	if err != nil {
		return err
	}
	if g, ok := b.(givingModifier); ok {
		return g.ModifyGiven(ctx, emptyResource, fn, opts...)
	}
	return b.Modify(ctx, emptyResource, fn, opts...)
}
