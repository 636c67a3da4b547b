package outcome

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// NewBackoff returns the deterministic backoff of the engine's retries (a
// Controller's restarts, a QController's initial lists): initial, doubling
// without jitter, capped at maxDelay, never giving up.
func NewBackoff(initial, maxDelay time.Duration) *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(initial),
		backoff.WithMaxInterval(maxDelay),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0),
	)
}

// Wait waits for d before a retry; false when ctx is done first.
func Wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
