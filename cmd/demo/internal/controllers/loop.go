package controllers

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
)

// runLoop is the Run body of the agent's plain controllers: it calls
// reconcile on every wake-up from the engine (and from extra, when not nil)
// until ctx is done, then returns nil. A reconcile error ends the loop and
// is returned, so that the engine restarts the controller with backoff; a
// successful reconcile resets that backoff.
func runLoop(ctx context.Context, r controller.Runtime, extra <-chan struct{}, reconcile func(context.Context, controller.Runtime) error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		case <-extra: // a nil channel never fires
		}
		if err := reconcile(ctx, r); err != nil {
			return err
		}
		r.ResetRestartBackoff()
	}
}
