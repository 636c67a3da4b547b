package crunner

import (
	"strings"
	"sync/atomic"
	"time"
)

// passes tracks a Controller's reconcile passes: the one notion of a pass
// behind its activity (is it busy, for runtimetest.Settle), its recovery (a
// pass that ended without a failure, for ControllerStatus.Recovered) and
// its busy time (telemetry.Controller.EventTaken).
//
// A pass starts when the controller takes a ReconcileEvent and ends when
// it calls EventCh again: a Run loop calls EventCh once per wait, before it
// takes an event. The forwarder counts the events it delivered, EventCh its
// calls: after the n-th delivery the controller is back at its wait once it
// made more than n calls. The calls are reset to the deliveries at every
// (re)start, when the controller is not waiting yet; the first call of a
// Run ends no pass.
//
// Wake-ups: the router counts the wake-ups it sent (route.Wake.Sent,
// counted before the send), the forwarder those it took from the channel
// (consumed) and, at each delivery, how many the delivered event covers
// (covered). A wake-up sent and not covered by a delivered event is work
// pending.
type passes struct {
	// pending is set while the start event has not been taken.
	pending   atomic.Bool
	covered   atomic.Uint64
	delivered atomic.Uint64
	calls     atomic.Uint64
	// base is the value calls was reset to when the current Run started.
	base atomic.Uint64
	// failed is set by a failure reported in the current pass.
	failed atomic.Bool
	// consumed counts the wake-ups taken from the channel; written only by
	// the goroutine that drains the channel (the run goroutine before it
	// starts the forwarder, then the forwarder).
	consumed uint64
	// since is when the current pass started (Unix nanoseconds; 0 before
	// the first), and ended is set once a pass ended since the
	// controller was registered: for its health (see Runner.Health).
	since atomic.Int64
	ended atomic.Bool
}

// restart is called before a Run starts, with its start event pending.
func (p *passes) restart() {
	p.pending.Store(true)
	d := p.delivered.Load()
	p.base.Store(d)
	p.calls.Store(d)
	p.failed.Store(false)
}

// taken counts a delivered event: a pass starts. The forwarder calls it
// after the send. The order of the stores matters: busy reads pending, then
// covered, then delivered, so whoever sees the new covered (or pending
// cleared) also sees the new delivered count, which puts the controller in
// its pass.
func (p *passes) taken() {
	p.since.Store(time.Now().UnixNano())
	p.delivered.Add(1)
	p.covered.Store(p.consumed)
	p.pending.Store(false)
}

// eventCh counts a call of EventCh, which ends the current pass (unless it
// is the Run's first call); it reports whether the call ended a pass, and
// whether that pass had no failure reported in it — a recovery.
func (p *passes) eventCh() (ended, clean bool) {
	n := p.calls.Add(1)
	failed := p.failed.Swap(false)
	ended = n > p.base.Load()+1
	if ended && !p.ended.Load() {
		p.ended.Store(true)
	}
	return ended, ended && !failed
}

// inPass reports whether the controller is in a pass (it took an event
// and has not called EventCh since), and since when.
func (p *passes) inPass() (bool, time.Time) {
	pending := p.pending.Load()
	calls := p.calls.Load()
	delivered := p.delivered.Load()
	since := p.since.Load()
	if pending || calls > delivered || since == 0 {
		return false, time.Time{}
	}
	return true, time.Unix(0, since)
}

// fail records a failure reported in the current pass.
func (p *passes) fail() { p.failed.Store(true) }

// failedInPass reports whether a failure was reported in the current pass.
func (p *passes) failedInPass() bool { return p.failed.Load() }

// busy reports whether the controller has an event pending or is in a
// pass, and why; wakes is the count of wake-ups sent. The loads are in the
// order taken relies on: pending, covered, then delivered.
func (p *passes) busy(wakes uint64) (bool, string) {
	pending := p.pending.Load()
	covered := p.covered.Load()
	calls := p.calls.Load()
	delivered := p.delivered.Load()
	var why []string
	switch {
	case pending:
		why = append(why, "its start wake-up is waiting to be taken")
	case calls <= delivered:
		why = append(why, "in a reconcile pass (took a ReconcileEvent and has not called EventCh since)")
	}
	if !pending && wakes != covered {
		why = append(why, "woken: a ReconcileEvent is waiting to be taken")
	}
	return len(why) > 0, strings.Join(why, "; ")
}

// joinWhy joins two reasons for being busy; either may be empty.
func joinWhy(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
