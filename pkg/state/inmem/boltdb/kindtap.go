package boltdb

import (
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TapKind implements kindtap.Tapper: the inmem state the file persists
// taps the kind's commits as it applies them, before they are durable (as
// its watches see them), so that a flight recorder over the file reads
// them without a watch (recording rule RC11).
func (st *State) TapKind(kind resource.Kind, t kindtap.Tap) (func(), error) {
	if k, ok := st.State.(kindtap.Tapper); ok {
		return k.TapKind(kind, t)
	}
	return nil, fmt.Errorf("boltdb: %T cannot tap a kind's commits: %w", st.State, errors.ErrUnsupported)
}
