// Package status is what the Runtime reports about each controller whether
// metrics are on or off: its state (starting, running, in restart backoff,
// stopped), its last failure and whether it has recovered from its
// failures, and what it is busy with (the activity behind
// runtimetest.Settle). Its states are package observe's.
package status

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/resgraph/resgraph/pkg/observe"
)

// Controller states (observe.ControllerStatus.State).
const (
	Starting = observe.LifecycleStarting
	Running  = observe.LifecycleRunning
	Backoff  = observe.LifecycleBackoff
	Stopped  = observe.LifecycleStopped
	Parked   = observe.LifecycleParked
)

// Snapshot is a controller's status at one instant.
type Snapshot struct {
	State observe.Lifecycle
	// Since is when the controller entered State (zero while it is
	// starting).
	Since        time.Time
	BackoffUntil time.Time
	LastError    string
	LastErrorAt  time.Time
	// RecoveredAt is when the controller recovered from its failures;
	// zero while it is failing or when it never failed.
	RecoveredAt time.Time
}

// Status tracks one controller's state, last failure and recovery. The
// zero value is a controller that is starting; all methods are safe for
// concurrent use.
//
// A controller is failing from a failure ([Status.Failed]) until it
// recovers ([Status.Recover]); what recovery means is the runner's
// decision (a Controller: a pass without a failure; a QController: no item
// failing any more).
type Status struct {
	// failing is set while the controller has failures it has not
	// recovered from: the success paths read it, and take mu only then.
	failing atomic.Bool

	mu sync.Mutex
	// The fields below are protected by mu.
	state        observe.Lifecycle
	since        time.Time
	backoffUntil time.Time
	lastError    string
	lastErrorAt  time.Time
	recoveredAt  time.Time
}

// SetState records the controller's state, and when it entered it if it
// changed (or was never set); backoffUntil is when a Controller in restart
// backoff restarts (zero otherwise).
func (s *Status) SetState(state observe.Lifecycle, backoffUntil time.Time) {
	now := time.Now()
	s.mu.Lock()
	if state != s.state || s.since.IsZero() {
		s.since = now
	}
	s.state, s.backoffUntil = state, backoffUntil
	s.mu.Unlock()
}

// State returns the controller's state.
func (s *Status) State() observe.Lifecycle {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Failed records msg as the last failure: the controller is failing until
// it recovers. It takes a message, never an error: an error's methods are
// user code, which never runs under a Runtime lock.
func (s *Status) Failed(msg string) {
	now := time.Now()
	s.mu.Lock()
	s.lastError, s.lastErrorAt, s.recoveredAt = msg, now, time.Time{}
	s.failing.Store(true)
	s.mu.Unlock()
}

// Recover records that a failing controller recovered, unless stillFailing
// (when not nil) reports failures left; it is called under the status's
// lock, so that a failure recorded meanwhile is ordered with it. While
// nothing fails it costs one atomic load.
func (s *Status) Recover(stillFailing func() bool) {
	if !s.failing.Load() {
		return
	}
	now := time.Now()
	s.mu.Lock()
	if s.failing.Load() && (stillFailing == nil || !stillFailing()) {
		s.failing.Store(false)
		s.recoveredAt = now
	}
	s.mu.Unlock()
}

// Failing reports whether the controller has a failure it has not
// recovered from.
func (s *Status) Failing() bool { return s.failing.Load() }

// Snapshot returns the status now.
func (s *Status) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Snapshot{
		State:        s.state,
		Since:        s.since,
		BackoffUntil: s.backoffUntil,
		LastError:    s.lastError,
		LastErrorAt:  s.lastErrorAt,
		RecoveredAt:  s.recoveredAt,
	}
}

// Activity is what a controller is busy with (see observe.ControllerActivity).
type Activity struct {
	Busy bool
	Why  string
	// Due, InFlight and Delayed count a QController's queued items.
	Due, InFlight, Delayed int
	// NextDue is when the earliest delayed item (or a Controller's
	// restart) is due.
	NextDue time.Time
}
