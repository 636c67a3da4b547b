package adapter

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// committer returns st's [state.CommitReporter], or one that reads the
// version back after the write (see state.CommitReporterOf).
func committer(st state.State) state.CommitReporter { return state.CommitReporterOf(st) }

var _ state.CommitReporter = (*Fencing)(nil)

// TeardownCommitted implements [state.CommitReporter], fenced.
func (f *Fencing) TeardownCommitted(ctx context.Context, ptr resource.Pointer, opts ...state.TeardownOption) (bool, resource.Version, error) {
	ctx, l, err := f.enter(ctx, ptr)
	if err != nil {
		return false, resource.VersionUndefined, err
	}
	ok, v, err := committer(f.State).TeardownCommitted(ctx, ptr, opts...)
	return ok, v, l.check(err)
}

// DestroyCommitted implements [state.CommitReporter], fenced.
func (f *Fencing) DestroyCommitted(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) (resource.Version, error) {
	ctx, l, err := f.enter(ctx, ptr)
	if err != nil {
		return resource.VersionUndefined, err
	}
	v, err := committer(f.State).DestroyCommitted(ctx, ptr, opts...)
	return v, l.check(err)
}

// AddFinalizerCommitted implements [state.CommitReporter], fenced.
func (f *Fencing) AddFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (resource.Version, error) {
	ctx, l, err := f.enter(ctx, ptr)
	if err != nil {
		return resource.VersionUndefined, err
	}
	v, err := committer(f.State).AddFinalizerCommitted(ctx, ptr, fins...)
	return v, l.check(err)
}

// RemoveFinalizerCommitted implements [state.CommitReporter], fenced.
func (f *Fencing) RemoveFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (resource.Version, error) {
	ctx, l, err := f.enter(ctx, ptr)
	if err != nil {
		return resource.VersionUndefined, err
	}
	v, err := committer(f.State).RemoveFinalizerCommitted(ctx, ptr, fins...)
	return v, l.check(err)
}
