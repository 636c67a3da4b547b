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
	// commit is when the oldest of the changes was committed, or the
	// engine could first see it when later (see Batch); zero when unknown
	// (a destruction, a retry). startup tells that it is startup work: a
	// resource listed by the first listing of its kind (commit is then
	// the listing's time), a Controller's start pass (commit is its
	// (re)start).
	commit  time.Time
	startup bool
	set     bool
	// attempt counts a QController item's consecutive failures; it
	// outlives the rest (cleared at the item's start).
	attempt uint32
}

// change adds a change, routed at now in batch b, to p.
func (p *pending) change(t state.EventType, md *resource.Metadata, now time.Duration, b *Batch) {
	if !p.set {
		*p = pending{due: now, set: true, attempt: p.attempt}
	} else if now < p.due {
		p.due = now
	}
	p.cause = refOf(md)
	p.causes++
	if t != state.Destroyed {
		p.origin(b.origin(md))
	}
}

// origin takes at (zero: unknown) as the origin of a change of p (startup:
// of startup work), when it is the oldest.
func (p *pending) origin(at time.Time, startup bool) {
	if !at.IsZero() && (p.commit.IsZero() || at.Before(p.commit)) {
		p.commit, p.startup = at, startup
	}
}

// caused adds, at now, a change cause that originated at commit (zero:
// unknown; startup: startup work) and reaches p through another item
// (MapInput's results).
func (p *pending) caused(cause trace.Ref, commit time.Time, startup bool, now time.Duration) {
	if !p.set {
		*p = pending{due: now, set: true, attempt: p.attempt}
	} else if now < p.due {
		p.due = now
	}
	if !cause.IsZero() {
		p.cause = cause
		p.causes++
	}
	p.origin(commit, startup)
}

// dueAt makes p due at the latest at due (a retry or a requeue).
func (p *pending) dueAt(due time.Duration) {
	if !p.set {
		*p = pending{due: due, set: true, attempt: p.attempt}
	} else if due < p.due {
		p.due = due
	}
}

// opExisting is the trace's name of a resource routed by the first listing
// of its kind: it existed when the engine started watching.
const opExisting = "existing"

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
