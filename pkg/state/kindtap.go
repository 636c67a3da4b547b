package state

import (
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TapKind implements kindtap.Tapper for a wrapped core: it asks the core,
// and fails with an error matching errors.ErrUnsupported when the core
// cannot tap a kind's commits.
func (w *coreWrapper) TapKind(kind resource.Kind, t kindtap.Tap) (func(), error) {
	if k, ok := w.CoreState.(kindtap.Tapper); ok {
		return k.TapKind(kind, t)
	}
	return nil, fmt.Errorf("state: %T cannot tap a kind's commits: %w", w.CoreState, errors.ErrUnsupported)
}
