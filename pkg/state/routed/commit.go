package routed

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// The versions a write committed (state.CommitReporter) and the changes a
// backend's guard finds in its snapshots (state.MutationNotifier) are the
// backends': each write is its backend's; a subscriber hears every
// backend's guard.
var (
	_ state.CommitReporter   = (*State)(nil)
	_ state.MutationNotifier = (*State)(nil)
)

// TeardownCommitted implements [state.CommitReporter].
func (s *State) TeardownCommitted(ctx context.Context, ptr resource.Pointer, opts ...state.TeardownOption) (bool, resource.Version, error) {
	b, err := s.forPointer(ptr)
	if err != nil {
		return false, resource.VersionUndefined, err
	}
	return state.CommitReporterOf(b).TeardownCommitted(ctx, ptr, opts...)
}

// DestroyCommitted implements [state.CommitReporter].
func (s *State) DestroyCommitted(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) (resource.Version, error) {
	b, err := s.forPointer(ptr)
	if err != nil {
		return resource.VersionUndefined, err
	}
	return state.CommitReporterOf(b).DestroyCommitted(ctx, ptr, opts...)
}

// AddFinalizerCommitted implements [state.CommitReporter].
func (s *State) AddFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (resource.Version, error) {
	b, err := s.forPointer(ptr)
	if err != nil {
		return resource.VersionUndefined, err
	}
	return state.CommitReporterOf(b).AddFinalizerCommitted(ctx, ptr, fins...)
}

// RemoveFinalizerCommitted implements [state.CommitReporter].
func (s *State) RemoveFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (resource.Version, error) {
	b, err := s.forPointer(ptr)
	if err != nil {
		return resource.VersionUndefined, err
	}
	return state.CommitReporterOf(b).RemoveFinalizerCommitted(ctx, ptr, fins...)
}

// NotifyMutations implements [state.MutationNotifier]: fn hears every
// backend that notifies.
func (s *State) NotifyMutations(fn func(resource.Pointer, resource.Version, error)) (stop func()) {
	var stops []func()
	for _, b := range s.backends {
		if n, ok := b.(state.MutationNotifier); ok {
			stops = append(stops, n.NotifyMutations(fn))
		}
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}
