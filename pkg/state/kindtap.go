package state

import (
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
)

// CoreUnwrapper is a CoreState that wraps another and commits each write
// to it as it was given (a wrapper that logs, counts or serializes the
// writes; never one that changes, drops or adds a change): the changes
// the wrapped core commits are the wrapper's. UnwrapCore returns the
// wrapped core. A state [WrapCore] builds on a CoreUnwrapper lets what
// reads a kind's commits without a watch of it (a flight recorder,
// package recording) read them from the wrapped core, through any
// number of such wrappers.
type CoreUnwrapper interface {
	UnwrapCore() CoreState
}

// maxUnwrap bounds the wrappers TapKind looks through (a wrapper that
// unwraps to itself is a loop, not a core).
const maxUnwrap = 64

// TapKind implements kindtap.Tapper for a wrapped core: it asks the core,
// or the core a CoreUnwrapper wraps, and fails with an error matching
// errors.ErrUnsupported when none of them can tap a kind's commits.
func (w *coreWrapper) TapKind(kind resource.Kind, t kindtap.Tap) (func(), error) {
	core := w.CoreState
	for range maxUnwrap {
		if k, ok := core.(kindtap.Tapper); ok {
			return k.TapKind(kind, t)
		}
		u, ok := core.(CoreUnwrapper)
		if !ok {
			break
		}
		if next := u.UnwrapCore(); !usercode.IsNil(next) {
			core = next
			continue
		}
		break
	}
	return nil, fmt.Errorf("state: %T cannot tap a kind's commits: %w", w.CoreState, errors.ErrUnsupported)
}
