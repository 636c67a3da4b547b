package state

import (
	"context"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
)

// CommitReporter is an optional interface of a [State] whose writes tell
// the version they committed where the State methods do not: a teardown
// and the finalizer edits (the version they wrote, undefined when they had
// nothing to write: the resource was tearing down already, the finalizer
// there already or absent), and a destroy (the version it destroyed,
// undefined when the state cannot tell). Create and Update write the
// version back into the caller's resource (rules S1, S2) and
// ModifyWithResult returns it, so they need no such method.
//
// Each method is the State method of the same name, with the same checks,
// effects and errors. The Runtime traces every write of a controller with
// the version it committed, so that the versions a controller wrote are
// never taken for writes from outside the Runtime; over a State that does
// not implement this interface it reads the resource after the write
// instead (see [CommitReporterOf]). A State returned by
// [WrapCore] implements it (a destroy's version when its core reports it,
// as the inmem and etcd cores do).
type CommitReporter interface {
	TeardownCommitted(ctx context.Context, ptr resource.Pointer, opts ...TeardownOption) (ready bool, committed resource.Version, err error)
	DestroyCommitted(ctx context.Context, ptr resource.Pointer, opts ...DestroyOption) (destroyed resource.Version, err error)
	AddFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (committed resource.Version, err error)
	RemoveFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (committed resource.Version, err error)
}

var _ CommitReporter = (*coreWrapper)(nil)

// versionedDestroyer is a core whose Destroy can report the version it
// destroyed (the inmem and etcd cores).
type versionedDestroyer interface {
	DestroyVersion(ctx context.Context, ptr resource.Pointer, opts ...DestroyOption) (resource.Version, error)
}

// TeardownCommitted implements [CommitReporter].
func (w *coreWrapper) TeardownCommitted(ctx context.Context, ptr resource.Pointer, opts ...TeardownOption) (bool, resource.Version, error) {
	if err := resource.ValidatePointer(ptr); err != nil {
		return false, resource.VersionUndefined, err
	}
	var o TeardownOptions
	opt.Apply(&o, opts)
	ready, _, committed, err := w.teardown(ctx, ptr, o.Owner)
	return ready, committed, err
}

// DestroyCommitted implements [CommitReporter]: the version destroyed
// when the core reports it, undefined otherwise.
func (w *coreWrapper) DestroyCommitted(ctx context.Context, ptr resource.Pointer, opts ...DestroyOption) (resource.Version, error) {
	if d, ok := w.CoreState.(versionedDestroyer); ok {
		return d.DestroyVersion(ctx, ptr, opts...)
	}
	return resource.VersionUndefined, w.Destroy(ctx, ptr, opts...)
}

// AddFinalizerCommitted implements [CommitReporter].
func (w *coreWrapper) AddFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (resource.Version, error) {
	return w.editFinalizers(ctx, ptr, fins, (*resource.Finalizers).Add)
}

// RemoveFinalizerCommitted implements [CommitReporter].
func (w *coreWrapper) RemoveFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (resource.Version, error) {
	return w.editFinalizers(ctx, ptr, fins, (*resource.Finalizers).Remove)
}

// CommitReporterOf returns st as a [CommitReporter]: st itself when it is
// one, otherwise one that makes each write with st's method and reads the
// resource back after a teardown or a finalizer edit that succeeded (a
// version that may be a later writer's; undefined when the read fails),
// and tells no destroyed version.
func CommitReporterOf(st State) CommitReporter {
	if c, ok := st.(CommitReporter); ok {
		return c
	}
	return readBack{st}
}

// readBack is the [CommitReporter] of a State that is not one.
type readBack struct{ st State }

// versionOf reads ptr's version after a write that succeeded.
func (b readBack) versionOf(ctx context.Context, ptr resource.Pointer) resource.Version {
	r, err := b.st.Get(ctx, ptr, readOnlyGet...)
	if err != nil || r == nil || r.Metadata() == nil {
		return resource.VersionUndefined
	}
	return r.Metadata().Version()
}

func (b readBack) TeardownCommitted(ctx context.Context, ptr resource.Pointer, opts ...TeardownOption) (bool, resource.Version, error) {
	ready, err := b.st.Teardown(ctx, ptr, opts...)
	if err != nil {
		return false, resource.VersionUndefined, err
	}
	return ready, b.versionOf(ctx, ptr), nil
}

func (b readBack) DestroyCommitted(ctx context.Context, ptr resource.Pointer, opts ...DestroyOption) (resource.Version, error) {
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
