package telemetry

import (
	"time"

	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// pending is the work a controller has been asked to do and has not
// started: the changes coalesced into a Controller's next pass, or into a
// QController item waiting in its queue. It gives the reconcile that
// takes it its cause (the newest change), how many changes it covers, its
// queue wait and its end-to-end lag.
type pending struct {
	// cause is the newest change; causes how many were coalesced.
	cause  trace.Ref
	causes uint32
	// due is when the work became due (the first change since the last
	// start, or the end of a backoff), on the engine's clock.
	due time.Duration
	// commit is when the oldest of the changes was committed (zero when
	// unknown: a destruction, a retry).
	commit time.Time
	set    bool
	// attempt counts a QController item's consecutive failures; it
	// outlives the rest (cleared at the item's start).
	attempt uint32
}

// change adds a change, routed at now, to p.
func (p *pending) change(t state.EventType, md *resource.Metadata, now time.Duration) {
	if !p.set {
		*p = pending{due: now, set: true, attempt: p.attempt}
	} else if now < p.due {
		p.due = now
	}
	p.cause = refOf(md)
	p.causes++
	if t != state.Destroyed {
		if c := md.Updated(); !c.IsZero() && (p.commit.IsZero() || c.Before(p.commit)) {
			p.commit = c
		}
	}
}

// caused adds, at now, a change cause committed at commit (zero: unknown)
// that reaches p through another item (MapInput's results).
func (p *pending) caused(cause trace.Ref, commit time.Time, now time.Duration) {
	if !p.set {
		*p = pending{due: now, set: true, attempt: p.attempt}
	} else if now < p.due {
		p.due = now
	}
	if !cause.IsZero() {
		p.cause = cause
		p.causes++
	}
	if !commit.IsZero() && (p.commit.IsZero() || commit.Before(p.commit)) {
		p.commit = commit
	}
}

// dueAt makes p due at the latest at due (a retry or a requeue).
func (p *pending) dueAt(due time.Duration) {
	if !p.set {
		*p = pending{due: due, set: true, attempt: p.attempt}
	} else if due < p.due {
		p.due = due
	}
}

// opName is the trace's name of a change.
func opName(t state.EventType) string {
	switch t {
	case state.Created:
		return "created"
	case state.Updated:
		return "updated"
	case state.Destroyed:
		return "destroyed"
	}
	return ""
}
