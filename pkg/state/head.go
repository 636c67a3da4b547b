package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
)

// KindHeadReporter is an optional interface of a [CoreState]: it tells
// where a kind's history stands, so that a watcher can tell whether it has
// received everything committed so far (the Runtime's quiescence check,
// runtimetest.Settle, uses it). A state returned by [WrapCore]
// implements it by asking its core, and answers with an error that
// matches [errors.ErrUnsupported] when the core does not implement it.
type KindHeadReporter interface {
	// KindHead returns the bookmark of the newest change committed to
	// the kind: the bookmark that the last event received by a watch of
	// the whole kind (WatchKind or WatchKindAggregated, no queries)
	// carries once that watch has delivered every change committed
	// before the call. Before the kind's first change it is the
	// bookmark of such a watch's Bootstrapped event. Bookmarks are
	// compared byte for byte. An error matching errors.ErrUnsupported
	// means the state cannot tell.
	KindHead(ctx context.Context, kind resource.Kind) (Bookmark, error)
}

// KindHead implements [KindHeadReporter] for a wrapped core.
func (w *coreWrapper) KindHead(ctx context.Context, kind resource.Kind) (Bookmark, error) {
	if h, ok := w.CoreState.(KindHeadReporter); ok {
		return h.KindHead(ctx, kind)
	}
	return nil, fmt.Errorf("state: %T does not report kind heads: %w", w.CoreState, errors.ErrUnsupported)
}
