package adapter

import (
	"context"
	"errors"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/state"
)

// tracker records which outputs a Controller wrote since
// StartTrackingOutputs, for CleanupOutputs (rule C8). A nil tracker (an
// adapter without output tracking: QControllers) never tracks.
type tracker struct {
	mu sync.Mutex
	// tracking is set by StartTrackingOutputs; protected by mu.
	tracking bool
	// written holds the outputs written since; protected by mu.
	written map[resource.PointerKey]struct{}
}

// start begins a new tracking pass, forgetting the previous one.
func (t *tracker) start() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tracking = true
	clear(t.written)
	if t.written == nil {
		t.written = map[resource.PointerKey]struct{}{}
	}
}

// record notes a write of ptr; nothing before tracking started.
func (t *tracker) record(ptr resource.Pointer) {
	if t == nil {
		return
	}
	t.mu.Lock()
	if t.tracking {
		t.written[resource.PointerOf(ptr)] = struct{}{}
	}
	t.mu.Unlock()
}

// wasWritten reports whether ptr was written in the current pass.
func (t *tracker) wasWritten(ptr resource.Pointer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, written := t.written[resource.PointerOf(ptr)]
	return written
}

func (t *tracker) isTracking() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tracking
}

// StartTrackingOutputs starts a tracking pass (rule C8): CleanupOutputs
// then destroys the outputs not written since.
func (a *Adapter) StartTrackingOutputs() { a.tracker.start() }

// CleanupOutputs implements [controller.OutputTracker.CleanupOutputs] (rule
// C8): every output of the kinds, owned by the controller and not
// written in the current tracking pass, is torn down and, once it has no
// finalizers, destroyed. An output whose finalizers remain is left tearing
// down; a later CleanupOutputs (in the controller's next pass) destroys it
// once its finalizers are gone. Each teardown and destroy is the
// controller's write: traced as its commit, as [Adapter.Teardown] and
// [Adapter.Destroy] trace theirs (a plan gives it its cause). Errors are
// joined; the other outputs are still processed.
func (a *Adapter) CleanupOutputs(ctx context.Context, kinds ...resource.Kind) (err error) {
	defer func() { a.tel.CallEnded(telemetry.OpCleanupOutputs, nil, err) }()
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
		list, err := a.st.List(ctx, k)
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
func (a *Adapter) destroyOutput(ctx context.Context, ptr resource.Pointer, md *resource.Metadata) error {
	if md.Phase() == resource.PhaseRunning {
		if err := a.gateWrite(ctx, ptr); err != nil {
			return err
		}
		ready, err := a.cleanupTeardown(ctx, ptr)
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
	if err := a.gateWrite(ctx, ptr); err != nil {
		return err
	}
	err := a.cleanupDestroy(ctx, ptr)
	switch {
	case err == nil, state.IsNotFoundError(err):
		a.caches.Get(resource.KindOf(ptr)).PutDestroyed(ptr)
		return nil
	case state.IsPendingFinalizersError(err):
		// A finalizer was added after the teardown: destroyed later.
		return nil
	default:
		return err
	}
}

// cleanupTeardown tears down the unwritten output ptr as a write of the
// controller: traced as its commit (a teardown that wrote nothing, as a
// Noop), with its version, and logged while a CommitLog is set; a
// teardown that leaves finalizers is traced as a finalizer wait, as
// [Adapter.Teardown]'s are.
func (a *Adapter) cleanupTeardown(ctx context.Context, ptr resource.Pointer) (ready bool, err error) {
	var v resource.Version
	defer func() { a.tel.CallCommitted(telemetry.OpTeardown, ptr, v, a.workerOf(ctx), err) }()
	ready, v, err = committer(a.st).TeardownCommitted(ctx, ptr, state.WithTeardownOwner(a.name))
	if err != nil {
		return false, err
	}
	a.logCommit(ctx, ptr, v.Value())
	if !ready {
		a.tel.TeardownPending(ptr, a.workerOf(ctx))
	}
	return ready, nil
}

// cleanupDestroy destroys the unwritten output ptr, traced and logged as
// cleanupTeardown's teardown (a destroy refused for pending finalizers,
// as a finalizer wait).
func (a *Adapter) cleanupDestroy(ctx context.Context, ptr resource.Pointer) (err error) {
	var v resource.Version
	defer func() { a.tel.CallCommitted(telemetry.OpDestroy, ptr, v, a.workerOf(ctx), err) }()
	if v, err = committer(a.st).DestroyCommitted(ctx, ptr, state.WithDestroyOwner(a.name)); err != nil {
		return err
	}
	a.logCommit(ctx, ptr, v.Value())
	return nil
}
