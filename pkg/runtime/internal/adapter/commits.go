package adapter

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// committer returns st's [state.CommitReporter], or, for a state that
// does not report the versions its writes commit, one that reads the
// resource back after the write (a version that may be a later writer's;
// a read that fails reports nothing written).
func committer(st state.State) state.CommitReporter {
	if c, ok := st.(state.CommitReporter); ok {
		return c
	}
	return readBack{st}
}

// readBack is the [state.CommitReporter] of a state that is not one.
type readBack struct{ st state.State }

// versionOf reads ptr's version after a write that succeeded.
func (b readBack) versionOf(ctx context.Context, ptr resource.Pointer) resource.Version {
	r, err := b.st.Get(ctx, ptr, state.WithReadOnlyGet())
	if err != nil || r == nil || r.Metadata() == nil {
		return resource.VersionUndefined
	}
	return r.Metadata().Version()
}

func (b readBack) TeardownCommitted(ctx context.Context, ptr resource.Pointer, opts ...state.TeardownOption) (bool, resource.Version, error) {
	ready, err := b.st.Teardown(ctx, ptr, opts...)
	if err != nil {
		return false, resource.VersionUndefined, err
	}
	return ready, b.versionOf(ctx, ptr), nil
}

func (b readBack) DestroyCommitted(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) (resource.Version, error) {
	return resource.VersionUndefined, b.st.Destroy(ctx, ptr, opts...)
}

func (b readBack) AddFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (resource.Version, error) {
	if err := b.st.AddFinalizer(ctx, ptr, fins...); err != nil {
		return resource.VersionUndefined, err
	}
	return b.versionOf(ctx, ptr), nil
}

func (b readBack) RemoveFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (resource.Version, error) {
	if err := b.st.RemoveFinalizer(ctx, ptr, fins...); err != nil {
		return resource.VersionUndefined, err
	}
	return b.versionOf(ctx, ptr), nil
}

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
