package boltdb

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// A [State] answers the optional interfaces of package state as the inmem
// state it persists does: it numbers its changes (so the Runtime serves
// cached reads by revision), reports where a kind's history stands (so
// runtimetest.Settle checks quiescence exactly) and tracks the snapshots
// it hands out (so the mutation detector names the controller that held a
// changed snapshot), notifies the changes its production guard finds (so
// the Runtime names the controller), and tells the version each write
// committed (so the trace does), and resumes kind watches from their
// bookmarks (so the Runtime keeps no memory of what it routed). Revisions are not kept across runs, as
// [state.RevisionReporter] allows.
var (
	_ state.RevisionReporter = (*State)(nil)
	_ state.KindHeadReporter = (*State)(nil)
	_ state.SnapshotTracker  = (*State)(nil)
	_ state.MutationNotifier = (*State)(nil)
	_ state.CommitReporter   = (*State)(nil)
	_ state.KindWatchResumer = (*State)(nil)
)

// NotifyMutations implements [state.MutationNotifier].
func (st *State) NotifyMutations(fn func(resource.Pointer, resource.Version, error)) (stop func()) {
	return st.State.(state.MutationNotifier).NotifyMutations(fn)
}

// TeardownCommitted implements [state.CommitReporter].
func (st *State) TeardownCommitted(ctx context.Context, ptr resource.Pointer, opts ...state.TeardownOption) (bool, resource.Version, error) {
	return st.State.(state.CommitReporter).TeardownCommitted(ctx, ptr, opts...)
}

// DestroyCommitted implements [state.CommitReporter].
func (st *State) DestroyCommitted(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) (resource.Version, error) {
	return st.State.(state.CommitReporter).DestroyCommitted(ctx, ptr, opts...)
}

// AddFinalizerCommitted implements [state.CommitReporter].
func (st *State) AddFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (resource.Version, error) {
	return st.State.(state.CommitReporter).AddFinalizerCommitted(ctx, ptr, fins...)
}

// RemoveFinalizerCommitted implements [state.CommitReporter].
func (st *State) RemoveFinalizerCommitted(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (resource.Version, error) {
	return st.State.(state.CommitReporter).RemoveFinalizerCommitted(ctx, ptr, fins...)
}

// Revision implements [state.RevisionReporter].
func (st *State) Revision(ctx context.Context) (uint64, error) {
	return st.State.(state.RevisionReporter).Revision(ctx)
}

// KindRevision implements [state.RevisionReporter].
func (st *State) KindRevision(ctx context.Context, kind resource.Kind) (last, at uint64, err error) {
	return st.State.(state.RevisionReporter).KindRevision(ctx, kind)
}

// KindHead implements [state.KindHeadReporter].
func (st *State) KindHead(ctx context.Context, kind resource.Kind) (state.Bookmark, error) {
	return st.State.(state.KindHeadReporter).KindHead(ctx, kind)
}

// TracksSnapshots implements [state.SnapshotTracker].
func (st *State) TracksSnapshots() bool {
	return st.State.(state.SnapshotTracker).TracksSnapshots()
}

// HandedTo implements [state.SnapshotTracker].
func (st *State) HandedTo(h state.SnapshotHolder, rs ...resource.Resource) {
	st.State.(state.SnapshotTracker).HandedTo(h, rs...)
}

// CheckHanded implements [state.SnapshotTracker].
func (st *State) CheckHanded(h state.SnapshotHolder, rs ...resource.Resource) []error {
	return st.State.(state.SnapshotTracker).CheckHanded(h, rs...)
}

// ReportChange implements [state.SnapshotTracker].
func (st *State) ReportChange(err error) {
	st.State.(state.SnapshotTracker).ReportChange(err)
}

// ResumesKindWatches implements [state.KindWatchResumer].
func (st *State) ResumesKindWatches(kind resource.Kind) bool {
	return st.State.(state.KindWatchResumer).ResumesKindWatches(kind)
}
