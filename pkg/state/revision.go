package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
)

// RevisionReporter is an optional interface of a [CoreState] that numbers
// its changes: every committed change (Create, Update, Destroy, and the
// writes of the helpers built on them) gets a revision from one sequence
// shared by every kind, increasing in the order the changes commit. Within
// a kind, revision order is the order in which the changes were applied
// (and watches deliver them); across kinds, a change committed after
// another one returned has a higher revision. The state at revision R is
// the one that every change with a revision up to R, and none after it,
// produced; a read told its revision (see [WithGetRevision],
// [WithListRevision]) and a watch event (see [Event].Revision) each
// reflect the state at a revision, projected on their kind, so reads of
// several kinds at one revision are of one cut of the state.
//
// Revisions start above 0 and are not kept across runs of a persistent
// state. A state returned by [WrapCore] implements this interface by
// asking its core, and answers with an error that matches
// [errors.ErrUnsupported] when the core does not number its changes.
type RevisionReporter interface {
	// Revision returns the revision of the newest committed change (0
	// before the first): a change whose write returned before the call
	// has a revision no higher.
	Revision(ctx context.Context) (uint64, error)
	// KindRevision returns, for one kind, the revision last of its newest
	// change (0: none yet) and a revision at >= last such that no change
	// of the kind has a revision in (last, at]: the kind's resources in
	// the state at revision at are those after its change last.
	KindRevision(ctx context.Context, kind resource.Kind) (last, at uint64, err error)
}

// Revision implements [RevisionReporter] for a wrapped core.
func (w *coreWrapper) Revision(ctx context.Context) (uint64, error) {
	if r, ok := w.CoreState.(RevisionReporter); ok {
		return r.Revision(ctx)
	}
	return 0, fmt.Errorf("state: %T does not number its changes: %w", w.CoreState, errors.ErrUnsupported)
}

// KindRevision implements [RevisionReporter] for a wrapped core.
func (w *coreWrapper) KindRevision(ctx context.Context, kind resource.Kind) (last, at uint64, err error) {
	if r, ok := w.CoreState.(RevisionReporter); ok {
		return r.KindRevision(ctx, kind)
	}
	return 0, 0, fmt.Errorf("state: %T does not number its changes: %w", w.CoreState, errors.ErrUnsupported)
}
