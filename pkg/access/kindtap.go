package access

import (
	"context"
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TapKind implements kindtap.Tapper (see guardCore.TapKind).
func (g *guarded) TapKind(kind resource.Kind, t kindtap.Tap) (func(), error) {
	return g.core.TapKind(kind, t)
}

// TapKind implements kindtap.Tapper: a tap sees every change of the kind,
// as a whole-kind watch does, so it is decided as the subject's watch of
// the kind (a denial is audited and returned, nothing is tapped); an
// allowed tap is the inner state's, or an error matching
// errors.ErrUnsupported when the inner state cannot tap a kind's commits.
// A flight recorder over the guard reads the kind's commits without a
// watch (recording rule RC11).
func (g *guardCore) TapKind(kind resource.Kind, t kindtap.Tap) (func(), error) {
	if err := resource.ValidateKind(kind); err != nil {
		return nil, err
	}
	if err := g.check(context.Background(), Watch, kind.Namespace(), kind.Type(), ""); err != nil {
		return nil, err
	}
	if k, ok := g.inner.(kindtap.Tapper); ok {
		return k.TapKind(kind, t)
	}
	return nil, fmt.Errorf("access: %T cannot tap a kind's commits: %w", g.inner, errors.ErrUnsupported)
}
