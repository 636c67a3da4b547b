package runtime

import (
	"context"
	"errors"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/state"
)

// outputTracker records which outputs a Controller wrote since
// StartTrackingOutputs, for CleanupOutputs (rule C8).
type outputTracker struct {
	mu sync.Mutex
	// tracking is set by StartTrackingOutputs; protected by mu.
	tracking bool
	// written holds the outputs written since; protected by mu.
	written map[qkey]struct{}
}

// start begins a new tracking pass, forgetting the previous one.
func (t *outputTracker) start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tracking = true
	clear(t.written)
	if t.written == nil {
		t.written = map[qkey]struct{}{}
	}
}

// record notes a write of ptr. It is a no-op on a nil tracker (QControllers)
// and before tracking started.
func (t *outputTracker) record(ptr resource.Pointer) {
	if t == nil {
		return
	}
	t.mu.Lock()
	if t.tracking {
		t.written[qkey{ns: ptr.Namespace(), typ: ptr.Type(), id: ptr.ID()}] = struct{}{}
	}
	t.mu.Unlock()
}

// wasWritten reports whether ptr was written in the current pass.
func (t *outputTracker) wasWritten(ptr resource.Pointer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, written := t.written[qkey{ns: ptr.Namespace(), typ: ptr.Type(), id: ptr.ID()}]
	return written
}

func (t *outputTracker) isTracking() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tracking
}

// cleanupOutputs implements [controller.OutputTracker.CleanupOutputs] for
// adapter a: every output of the kinds, owned by the controller and not
// written in the current tracking pass, is torn down and, once it has no
// finalizers, destroyed. An output whose finalizers remain is left tearing
// down; a later CleanupOutputs (in the controller's next pass) destroys it
// once its finalizers are gone. Errors are joined; the other outputs are
// still processed.
func (a *rwAdapter) cleanupOutputs(ctx context.Context, kinds []resource.Kind) error {
	defer a.touch()
	for _, k := range kinds {
		if err := resource.ValidateKind(k); err != nil {
			return state.NewInvalidError(nil, "CleanupOutputs: %w", err)
		}
		if !a.access.Load().isOutput(k.Type()) {
			return a.deny("CleanupOutputs", resource.KindString(k), "not a declared output")
		}
	}
	if !a.tracker.isTracking() {
		return state.NewInvalidError(nil, "controller %q: CleanupOutputs called before StartTrackingOutputs", a.name)
	}

	var errs []error
	for _, k := range kinds {
		list, err := a.rt.st.List(ctx, k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, r := range list.Items {
			md := r.Metadata()
			if md.Owner() != a.name {
				continue
			}
			ptr := resource.PointerOf(md)
			if a.tracker.wasWritten(ptr) {
				continue
			}
			if err := a.destroyOutput(ctx, ptr, md); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// destroyOutput tears down one unwritten output and destroys it when it
// has no finalizers.
func (a *rwAdapter) destroyOutput(ctx context.Context, ptr resource.Pointer, md *resource.Metadata) error {
	if md.Phase() == resource.PhaseRunning {
		ready, err := a.rt.st.Teardown(ctx, ptr, state.WithTeardownOwner(a.name))
		if err != nil {
			if state.IsNotFoundError(err) {
				return nil
			}
			return err
		}
		if !ready {
			a.refreshCache(ctx, ptr)
			return nil
		}
	} else if !md.Finalizers().Empty() {
		return nil
	}
	err := a.rt.st.Destroy(ctx, ptr, state.WithDestroyOwner(a.name))
	switch {
	case err == nil, state.IsNotFoundError(err):
		if c := a.rt.caches.get(dependency.KeyOf(ptr)); c != nil {
			c.putDestroyed(ptr)
		}
		return nil
	case state.IsPendingFinalizersError(err):
		// A finalizer was added after the teardown: destroyed later.
		return nil
	default:
		return err
	}
}
