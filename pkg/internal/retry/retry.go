// Package retry is how work that failed is retried, in one place for the
// whole module: a Controller's restarts (rule C6), a QController's items
// (rule Q3) and the initial lists of its inputs, the inputs that the
// generic Controllers retry inside their Run, the Runtime's kind watches
// and the etcd state's watch feeds.
//
// There is one backoff, [Backoff]: exponential, starting at its initial
// delay and doubling per consecutive failure up to its maximum, without
// jitter, never giving up. It is built on github.com/cenkalti/backoff/v4:
// [Backoff.Sequence] is a configured ExponentialBackOff for the retries
// that run one after another, and [Backoff.Delay] is the same sequence's
// n-th delay for the retries of many items at once, each of which keeps
// only its count ([Item]).
//
// A [Policy] is how the failing items of one controller are retried: its
// backoff, the attempts after which an item is parked, and whether a
// change abandons a retry (controller.RetryPolicy, resolved against the
// Runtime's options). The Runtime hands it to the Controllers that retry
// their own items through their Run context ([NewContext], [FromContext]).
package retry

import (
	"context"
	"errors"
	"math"
	"time"

	cenkalti "github.com/cenkalti/backoff/v4"
)

// Default bounds of a [Backoff], used for its zero fields.
const (
	DefaultInitial = 100 * time.Millisecond
	DefaultMax     = time.Minute
)

// Backoff is the one backoff: Initial after the first consecutive
// failure, twice as long after each further one, capped at Max, without
// jitter, never giving up. A zero field means its default
// ([DefaultInitial], [DefaultMax]).
type Backoff struct {
	Initial, Max time.Duration
}

// OrDefault returns b with its zero fields set to their defaults.
func (b Backoff) OrDefault() Backoff {
	if b.Initial == 0 {
		b.Initial = DefaultInitial
	}
	if b.Max == 0 {
		b.Max = DefaultMax
	}
	return b
}

// Validate reports whether b can work: no negative bound, and Max (after
// defaults) not below Initial.
func (b Backoff) Validate() error {
	if b.Initial < 0 || b.Max < 0 {
		return errors.New("negative backoff (initial " + b.Initial.String() + ", max " + b.Max.String() + ")")
	}
	if d := b.OrDefault(); d.Max < d.Initial {
		return errors.New("backoff max " + d.Max.String() + " is below its initial delay " + d.Initial.String())
	}
	return nil
}

// Delay returns the delay after the n-th consecutive failure (n >= 1;
// 0 counts as 1): the n-th delay of [Backoff.Sequence], Initial * 2^(n-1)
// capped at Max (zero fields meaning their defaults).
func (b Backoff) Delay(n uint32) time.Duration {
	b = b.OrDefault()
	d := b.Initial
	for i := uint32(1); i < n; i++ {
		if d >= b.Max-d { // 2d >= max, without overflow
			return b.Max
		}
		d *= 2
	}
	return min(d, b.Max)
}

// Sequence returns the delays of consecutive retries, one after another
// (zero fields meaning their defaults).
func (b Backoff) Sequence() *Sequence {
	b = b.OrDefault()
	return &Sequence{eb: cenkalti.NewExponentialBackOff(
		cenkalti.WithInitialInterval(b.Initial),
		cenkalti.WithMaxInterval(b.Max),
		cenkalti.WithMultiplier(2),
		cenkalti.WithRandomizationFactor(0),
		cenkalti.WithMaxElapsedTime(0),
	)}
}

// Sequence is the delays of one thing's consecutive retries (a
// Controller's restarts, a watch's re-establishment): [Sequence.Next]
// returns the delay before the next retry, [Sequence.Reset] starts over
// after a success. It is not safe for concurrent use.
type Sequence struct {
	eb *cenkalti.ExponentialBackOff
}

// Next returns the delay before the next retry: the backoff's initial
// delay after a start or a reset, then twice the previous one, up to its
// maximum.
func (s *Sequence) Next() time.Duration { return s.eb.NextBackOff() }

// Reset starts the sequence over: the next delay is the initial one.
func (s *Sequence) Reset() { s.eb.Reset() }

// Wait waits d before a retry; false when ctx is done first.
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

// Policy is how the failing items of one controller are retried: the
// resolved controller.RetryPolicy. The zero value retries forever with the
// default backoff, and a change to a failing item keeps its counts.
type Policy struct {
	// Backoff is the delay after an item's consecutive failures.
	Backoff Backoff
	// MaxAttempts, when not zero, parks an item after that many
	// consecutive failed runs, until its next change.
	MaxAttempts uint32
	// ChangeAbandonsRetry makes a change to a failing item start its
	// counts over.
	ChangeAbandonsRetry bool
}

// Result is how one run of an item went, as its retry counts it.
type Result uint8

// Results of a run.
const (
	// Succeeded: the item is done; its counts start over.
	Succeeded Result = iota
	// Failed: the item runs again after its backoff; one more
	// consecutive failure and one more failed run.
	Failed
	// Requeued: the item asked to run again after an interval of its own
	// (a controller.RequeueError wrapping no error): not a failed run
	// (the attempts start over), and its backoff stays where it is.
	Requeued
	// RequeuedFailing: a failure that the item retries after an interval
	// of its own (a controller.RequeueError wrapping an error): a failed
	// run, and its backoff stays where it is.
	RequeuedFailing
	// Denied: a failure that no retry can fix — the item's user code was
	// denied access (rule C3: a write to an undeclared output, a read
	// outside its inputs), a programming error: a failed run that parks
	// the item at once, whatever the policy's MaxAttempts, until it
	// changes.
	Denied
)

// Failure reports whether r is a failed run.
func (r Result) Failure() bool { return r == Failed || r == RequeuedFailing || r == Denied }

// Item is the retry state of one item: its consecutive failures, which
// set its backoff, and its consecutive failed runs, which
// [Policy.MaxAttempts] counts. The zero value is a fresh item.
type Item struct {
	failures uint32
	attempts uint32
}

// Ran counts a run of the item that came to r, and reports whether the
// item has exhausted p.MaxAttempts, or was denied (it is to be parked).
func (it *Item) Ran(p Policy, r Result) (exhausted bool) {
	switch r {
	case Succeeded:
		it.failures = 0
	case Failed, Denied:
		if it.failures < math.MaxUint32 {
			it.failures++
		}
	}
	if !r.Failure() {
		it.attempts = 0
		return false
	}
	if it.attempts < math.MaxUint32 {
		it.attempts++
	}
	return r == Denied || (p.MaxAttempts > 0 && it.attempts >= p.MaxAttempts)
}

// Delay returns the delay before the item's retry after a failure: the
// backoff of its consecutive failures.
func (it Item) Delay(p Policy) time.Duration { return p.Backoff.Delay(it.failures) }

// Attempts returns the item's consecutive failed runs.
func (it Item) Attempts() uint32 { return it.attempts }

// Changed applies a change of the item to its counts: with
// p.ChangeAbandonsRetry they start over; by default they are kept, so an
// item that fails on every change still backs off.
func (it *Item) Changed(p Policy) {
	if p.ChangeAbandonsRetry {
		it.Reset()
	}
}

// Reset starts the item's counts over (a parked item coming back).
func (it *Item) Reset() { *it = Item{} }

// policyKey is the context key of a Policy.
type policyKey struct{}

// NewContext returns ctx carrying p: the Runtime's retry policy for the
// items of the controller whose Run gets ctx.
func NewContext(ctx context.Context, p Policy) context.Context {
	return context.WithValue(ctx, policyKey{}, p)
}

// FromContext returns the policy ctx carries; ok is false when it carries
// none (a Run that the Runtime did not start).
func FromContext(ctx context.Context) (p Policy, ok bool) {
	p, ok = ctx.Value(policyKey{}).(Policy)
	return p, ok
}
