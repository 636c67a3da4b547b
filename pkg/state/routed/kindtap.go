package routed

import (
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TapKind implements kindtap.Tapper: the backend that serves the kind's
// namespace taps its commits (so that a flight recorder over the routed
// state reads them without a watch, recording rule RC11). It fails as
// every call does for a namespace no rule covers, and with an error
// matching errors.ErrUnsupported when that backend cannot tap a kind's
// commits.
func (s *State) TapKind(kind resource.Kind, t kindtap.Tap) (func(), error) {
	b, err := s.forKind(kind)
	if err != nil {
		return nil, err
	}
	if k, ok := b.(kindtap.Tapper); ok {
		return k.TapKind(kind, t)
	}
	return nil, fmt.Errorf("routed: %T cannot tap a kind's commits: %w", b, errors.ErrUnsupported)
}
