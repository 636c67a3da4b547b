package xform

import (
	"context"
	"time"

	"github.com/resgraph/resgraph/pkg/controller"
)

// RunLoop is the Run loop of a Controller that reconciles everything on
// every event: it calls pass after each event of r until ctx is canceled
// (and then returns nil). A failed pass ends the loop with its error, so
// that the Runtime restarts the controller with backoff; a successful one
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

// RetryLoop is the Run loop of a Controller that retries its failing items
// on their own schedule: it calls pass after each event of r (event true)
// and whenever next, asked after each pass, says a retry is due (event
// false), until ctx is canceled (and then returns nil). The wake-up timer
// belongs to the loop and is stopped when it returns. A failed pass (a
// failure of the controller as a whole, not of one item) ends the loop
// with its error, so that the Runtime restarts the controller with
// backoff; a successful one resets that backoff.
func RetryLoop(ctx context.Context, r controller.Runtime, next func() (time.Time, bool), pass func(event bool) error) error {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		var due <-chan time.Time
		if at, ok := next(); ok {
			timer.Reset(time.Until(at))
			due = timer.C
		}
		event := false
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
			event = true
		case <-due:
		}
		if err := pass(event); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		r.ResetRestartBackoff()
	}
}
