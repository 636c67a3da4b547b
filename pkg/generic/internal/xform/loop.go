package xform

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
)

// RunLoop is the Run loop of a Controller that reconciles everything on
// every event: it calls pass after each event of r until ctx is canceled
// (and then returns nil). A failed pass ends the loop with its error, so
// that the engine restarts the controller with backoff; a successful one
// resets that backoff.
func RunLoop(ctx context.Context, r controller.Runtime, pass func() error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		if err := pass(); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		r.ResetRestartBackoff()
	}
}
