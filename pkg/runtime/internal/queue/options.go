package queue

import (
	"errors"
	"fmt"
	"time"
)

// Default backoff bounds, used for zero [Options] fields.
const (
	DefaultBackoffInitial = 100 * time.Millisecond
	DefaultBackoffMax     = time.Minute
)

// Options configure a [Queue]. The zero value is valid and means the
// defaults.
type Options struct {
	// BackoffInitial is the retry delay after a key's first consecutive
	// failure; 0 means [DefaultBackoffInitial].
	BackoffInitial time.Duration
	// BackoffMax caps the retry delay; 0 means [DefaultBackoffMax]. It must
	// not be below the (defaulted) BackoffInitial.
	BackoffMax time.Duration
	// MaxAttempts parks a key after that many consecutive failed runs
	// (see [Queue.Complete]); 0, the default, never parks.
	MaxAttempts uint32
	// AddResets makes an [Queue.Add] abandon a key's retry: the key's
	// failure and attempt counts start over (for a key in flight, after its
	// Done). By default they are kept, so that a key that keeps failing
	// keeps backing off while it keeps changing.
	AddResets bool
}

// withDefaults returns o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.BackoffInitial == 0 {
		o.BackoffInitial = DefaultBackoffInitial
	}
	if o.BackoffMax == 0 {
		o.BackoffMax = DefaultBackoffMax
	}
	return o
}

// Validate reports whether o is usable: no negative duration, and
// BackoffMax (after defaults) not below BackoffInitial.
func (o Options) Validate() error {
	if o.BackoffInitial < 0 {
		return fmt.Errorf("queue options: negative BackoffInitial %v", o.BackoffInitial)
	}
	if o.BackoffMax < 0 {
		return fmt.Errorf("queue options: negative BackoffMax %v", o.BackoffMax)
	}
	d := o.withDefaults()
	if d.BackoffMax < d.BackoffInitial {
		return errors.New("queue options: BackoffMax " + d.BackoffMax.String() +
			" is below BackoffInitial " + d.BackoffInitial.String())
	}
	return nil
}

// backoff returns the delay after the n-th consecutive failure (n >= 1):
// initial * 2^(n-1), capped at max.
func (o Options) backoff(n uint32) time.Duration {
	d := o.BackoffInitial
	for i := uint32(1); i < n; i++ {
		if d > o.BackoffMax-d { // 2d > max, without overflow
			return o.BackoffMax
		}
		d *= 2
	}
	return min(d, o.BackoffMax)
}
