package telemetry

import (
	"time"

	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Pending is the work a controller has been asked to do and has not
// started: the changes coalesced into a Controller's next pass, or into a
// QController item waiting in its queue — where it is the note of the
// item's queue entry (queue.Queue's notes), updated with [Pending.Queued],
// [Pending.Mapped] and [Pending.Settled] under the queue's lock and handed
// to [Controller.ItemStarted] with the item. It gives the reconcile that
// takes it its cause (the newest change), how many changes it covers, its
// queue wait and its end-to-end lag. The zero value is no work.
type Pending struct {
	// cause is the newest change; causes how many were coalesced.
	cause  cause
	causes uint32
	// startup tells that it is startup work: a resource listed by the
	// first listing of its kind (commit is then the listing's time), a
	// Controller's start pass (commit is its (re)start).
	startup bool
	set     bool
	// due is when the work became due (the first change since the last
	// start, or the end of a backoff), on the Runtime's clock.
	due time.Duration
	// commit is when the oldest of the changes was committed, or the
	// Runtime could first see it when later (see Batch), in Unix
	// nanoseconds; 0 when unknown (a destruction, a retry).
	commit int64
}

// cause names the change that caused some work: the trace.Ref of a
// resource's version, without the writer (which the routing does not
// know), kept small since every queued item holds one.
type cause struct {
	ns, typ, id string
	version     uint64
}

// causeOf names the version md of a resource.
func causeOf(md *resource.Metadata) cause {
	ns, typ, id := md.Identity()
	return cause{ns: ns, typ: typ, id: id, version: md.Version().Value()}
}

// ref returns the cause as the trace names it.
func (c cause) ref() trace.Ref {
	return trace.Ref{Namespace: c.ns, Type: c.typ, ID: c.id, Version: c.version}
}

// Queued adds to an item's pending work the change t of the resource md,
// routed at now (see [Controller.Now]) in batch b, which queued it. md is
// read, never kept.
func (p *Pending) Queued(t state.EventType, md *resource.Metadata, now time.Duration, b *Batch) {
	p.change(t, md, now, b)
}

// Mapped adds to an item's pending work the cause of the MapInput item
// started at from, which returned the item at now.
func (p *Pending) Mapped(from Stamp, now time.Duration) {
	p.caused(from.cause, from.commit, from.startup, now)
}

// Settled updates an item's pending work when its run ended at now and the
// queue kept it, due again after delay: an item queued again while it ran
// is due from now on; otherwise it is due when its retry or requeue is.
func (p *Pending) Settled(now, delay time.Duration) {
	if p.set {
		p.due = max(p.due, now)
	} else {
		p.dueAt(now + delay)
	}
}

// change adds a change, routed at now in batch b, to p.
func (p *Pending) change(t state.EventType, md *resource.Metadata, now time.Duration, b *Batch) {
	if !p.set {
		*p = Pending{due: now, set: true}
	} else if now < p.due {
		p.due = now
	}
	p.cause = causeOf(md)
	p.causes++
	if t != state.Destroyed {
		at, startup := b.origin(md)
		p.origin(unixNano(at), startup)
	}
}

// origin takes at (Unix nanoseconds; 0: unknown) as the origin of a change
// of p (startup: of startup work), when it is the oldest.
func (p *Pending) origin(at int64, startup bool) {
	if at != 0 && (p.commit == 0 || at < p.commit) {
		p.commit, p.startup = at, startup
	}
}

// unixNano is t in Unix nanoseconds, 0 for the zero time (unknown).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// caused adds, at now, the change by that originated at commit (0:
// unknown; startup: startup work) and reaches p through another item
// (MapInput's results).
func (p *Pending) caused(by cause, commit int64, startup bool, now time.Duration) {
	if !p.set {
		*p = Pending{due: now, set: true}
	} else if now < p.due {
		p.due = now
	}
	if by != (cause{}) {
		p.cause = by
		p.causes++
	}
	p.origin(commit, startup)
}

// dueAt makes p due at the latest at due (a retry or a requeue).
func (p *Pending) dueAt(due time.Duration) {
	if !p.set {
		*p = Pending{due: due, set: true}
	} else if due < p.due {
		p.due = due
	}
}

// opExisting is the trace's name of a resource routed by the first listing
// of its kind: it existed when the Runtime started watching.
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
