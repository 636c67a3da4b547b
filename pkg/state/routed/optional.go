package routed

import (
	"context"
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// The optional interfaces of package state, answered for the backends
// (see "Across backends" in the package documentation).
var (
	_ state.RevisionReporter = (*State)(nil)
	_ state.KindHeadReporter = (*State)(nil)
	_ state.TypeValidator    = (*State)(nil)
	_ state.Fencer           = (*State)(nil)
	_ state.KindWatchResumer = (*State)(nil)
)

// errNoGlobalRevision is the answer of Revision and KindRevision over
// several backends.
var errNoGlobalRevision = fmt.Errorf("routed state: the namespaces live in several backends, whose changes are not numbered by one sequence: %w", errors.ErrUnsupported)

// Revision implements [state.RevisionReporter] for a state with one
// backend (whatever the rules): that backend's answer. Over several
// backends there is no revision shared by their changes, and it fails with
// an error that matches [errors.ErrUnsupported]: the Runtime then serves
// consistent reads as over a state that does not number its changes.
func (s *State) Revision(ctx context.Context) (uint64, error) {
	rr, err := s.revisions()
	if err != nil {
		return 0, err
	}
	return rr.Revision(ctx)
}

// KindRevision implements [state.RevisionReporter], as Revision does.
func (s *State) KindRevision(ctx context.Context, kind resource.Kind) (last, at uint64, err error) {
	rr, err := s.revisions()
	if err != nil {
		return 0, 0, err
	}
	return rr.KindRevision(ctx, kind)
}

// revisions returns the reporter of the one backend.
func (s *State) revisions() (state.RevisionReporter, error) {
	if len(s.backends) > 1 {
		return nil, errNoGlobalRevision
	}
	rr, ok := s.backends[0].(state.RevisionReporter)
	if !ok {
		return nil, fmt.Errorf("routed state: %T does not number its changes: %w", s.backends[0], errors.ErrUnsupported)
	}
	return rr, nil
}

// KindHead implements [state.KindHeadReporter]: the answer of the kind's
// backend (a kind lives in one backend), or an error that matches
// [errors.ErrUnsupported] when that backend cannot tell.
func (s *State) KindHead(ctx context.Context, kind resource.Kind) (state.Bookmark, error) {
	b, err := s.forKind(kind)
	if err != nil {
		return nil, err
	}
	h, ok := b.(state.KindHeadReporter)
	if !ok {
		return nil, fmt.Errorf("routed state: %T does not report kind heads: %w", b, errors.ErrUnsupported)
	}
	return h.KindHead(ctx, kind)
}

// ValidateType implements [state.TypeValidator]: a kind of a namespace no
// rule covers is refused with an invalid-class error naming the rules
// (so the Runtime refuses a controller that declares it at registration);
// otherwise the kind's backend answers ([state.ValidateType]).
func (s *State) ValidateType(kind resource.Kind) error {
	if err := resource.ValidateKind(kind); err != nil {
		return state.NewInvalidError(nil, "%w", err)
	}
	b, err := s.forKind(kind)
	if err != nil {
		return err
	}
	return state.ValidateType(b, kind)
}

// CheckFence implements [state.Fencer]: the state checks a fence only when
// every backend does (a write to a backend that ignores fences would land
// after the fence fell). It returns the first refusal, naming the backend.
func (s *State) CheckFence(f state.Fence) error {
	for _, b := range s.backends {
		fc, ok := b.(state.Fencer)
		if !ok {
			return state.NewInvalidError(nil, "routed state: backend %T does not check fences: leadership needs every backend to fence its writes", b)
		}
		if err := fc.CheckFence(f); err != nil {
			return fmt.Errorf("routed state: backend %T: %w", b, err)
		}
	}
	return nil
}

// ResumesKindWatches implements [state.KindWatchResumer] for a state with
// one backend: that backend's answer for the kind. Over several backends
// the changes are not numbered by one sequence, and it answers false.
func (s *State) ResumesKindWatches(kind resource.Kind) bool {
	if len(s.backends) > 1 {
		return false
	}
	return state.ResumesKindWatches(s.backends[0], kind)
}
