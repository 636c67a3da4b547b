// Package trace is the Runtime's causal trace: what happened, in order, and
// why — which commit woke which controller, which changes a reconcile ran
// for, when a failed item runs again.
//
// A Runtime records [Record]s in a [Ring]: a bounded buffer that keeps the
// newest records and overwrites the oldest, cheap enough to stay on in
// production (a write is one atomic increment and one uncontended slot
// lock; nothing is allocated). [Ring.Snapshot] and [Ring.Since] read it;
// a [Follower] streams it out in order (to a file, a log, OpenTelemetry —
// whatever the user writes), told how many records it lost when it falls
// more than the ring's size behind. [WriteJSONLines] and [ReadJSONLines]
// are its JSON-lines form, one record per line, as the Runtime's
// /debug/trace page serves it.
//
// Causality: every record has a sequence number (Seq), increasing in the
// order the ring received the records. A [Route] record names the change it
// routed (Resource, with the committing controller as Resource.Writer when
// the Runtime knows it); a [ReconcileStart] names the newest change that
// caused it in Cause and how many changes were coalesced into it in
// Causes, so that a chain A writes X → B reconciles → B writes Y reads
// straight off the trace.
package trace

import (
	"fmt"
	"strconv"
	"time"
)

// Type is the type of an [Record].
type Type uint8

// Record types. The fields each type sets are listed with it; fields not
// listed are zero.
const (
	// Commit: Controller's write of Resource committed (Resource.Version
	// is the committed version — for a destroy, the version destroyed;
	// 0 when the state could not tell — and Op the operation: "create",
	// "update", "modify", "destroy", "teardown", "addFinalizer",
	// "removeFinalizer").
	Commit Type = iota + 1
	// Route: the change of Resource (Op is "created", "updated" or
	// "destroyed") was delivered to Controller: a wake-up of a Controller,
	// a queued item of a QController. Duration is the delivery lag, from
	// the commit (or, when later, the first listing of its kind: when the
	// Runtime could first see it) to the routing, when the commit time is
	// known. Op "existing": Resource was found by the Runtime's first
	// listing of its kind and queued for a QController (startup work; no
	// delivery lag).
	Route
	// Queue: Resource was queued for Controller (a QController item; Op is
	// "reconcile" or "map"), Cause being the change that queued it.
	Queue
	// Requeue: the item Resource of Controller asked to run again at Due
	// (a RequeueError); Error is set when it wrapped one.
	Requeue
	// Backoff: the item Resource of Controller failed (Error) and runs
	// again at Due; Attempt counts its consecutive failures.
	Backoff
	// ReconcileStart: Controller starts a reconcile — of the item
	// Resource for a QController (Op "reconcile" or "map"), a pass for a
	// Controller. Cause is the newest change that caused it, Causes how
	// many changes were coalesced into it (0 for a start or restart pass,
	// a retry, a requeue); Duration is the time it waited since it was
	// due (queue wait).
	ReconcileStart
	// ReconcileEnd: the reconcile ended after Duration with Outcome
	// (Error set for a failure).
	ReconcileEnd
	// Crash: Controller's Run failed or panicked (Error); it restarts at
	// Due, Attempt counting its consecutive crashes. For a QController, a
	// panic in Reconcile or MapInput of the item Resource.
	Crash
	// Restart: Controller's Run starts again after a crash (Attempt).
	Restart
	// FinalizerWait: Controller could not destroy Resource yet: its
	// finalizers (Detail) are still there.
	FinalizerWait
	// HotLoop: a hot loop or flapping cycle involving Controller was
	// detected (Detail describes the cycle, e.g. "A writes X → B writes
	// Y → A"), or, with Outcome OutcomeOK, ended.
	HotLoop
	// Lost: a Follower fell behind and Attempt records were overwritten
	// before it read them (only in a follower's stream, never in a ring).
	Lost
	// Noop: Controller's write of Resource (Op "modify") left it equal, so
	// nothing was committed (rule S6: no new version, no change routed);
	// Resource.Version is the version it left as is. So is a teardown of a
	// resource tearing down already, or a finalizer edit that found the
	// finalizers as asked (Op "teardown", "addFinalizer",
	// "removeFinalizer"; Resource.Version 0). Never a Commit.
	Noop
	// Parked: the item Resource of Controller (Op "reconcile" or "map")
	// is not retried until it changes, after Attempt consecutive failed
	// runs (Error the last one's): its retry policy's MaxAttempts, or an
	// access denial (rule C3, a programming error) at once. With Resource
	// empty, Controller's Run returned an access denial (Error) and is not
	// restarted until one of its inputs changes.
	Parked
)

var typeNames = [...]string{
	Commit:         "commit",
	Route:          "route",
	Queue:          "queue",
	Requeue:        "requeue",
	Backoff:        "backoff",
	ReconcileStart: "reconcileStart",
	ReconcileEnd:   "reconcileEnd",
	Crash:          "crash",
	Restart:        "restart",
	FinalizerWait:  "finalizerWait",
	HotLoop:        "hotLoop",
	Lost:           "lost",
	Noop:           "noop",
	Parked:         "parked",
}

// String returns the type's name as the JSON form writes it
// ("reconcileStart", ...).
func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// ParseType returns the type named s (as [Type.String] writes it).
func ParseType(s string) (Type, error) {
	for i, n := range typeNames {
		if n != "" && n == s {
			return Type(i), nil
		}
	}
	return 0, fmt.Errorf("trace: unknown record type %q", s)
}

// Outcome is how a reconcile ended ([ReconcileEnd]).
type Outcome uint8

// Outcomes of a reconcile.
const (
	OutcomeNone Outcome = iota
	// OutcomeOK: it succeeded.
	OutcomeOK
	// OutcomeError: it returned an error (retried with backoff, for a
	// QController item).
	OutcomeError
	// OutcomeRequeue: it asked to run again after an interval (a
	// RequeueError).
	OutcomeRequeue
	// OutcomePanic: it panicked.
	OutcomePanic
)

var outcomeNames = [...]string{OutcomeNone: "", OutcomeOK: "ok", OutcomeError: "error", OutcomeRequeue: "requeue", OutcomePanic: "panic"}

// Outcomes lists the outcomes of a reconcile, OutcomeOK first (for
// exporters that label a metric per outcome).
var Outcomes = []Outcome{OutcomeOK, OutcomeError, OutcomeRequeue, OutcomePanic}

// String returns the outcome's name: "ok", "error", "requeue", "panic",
// or "" for none.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// ParseOutcome returns the outcome named s (as [Outcome.String] writes
// it).
func ParseOutcome(s string) (Outcome, error) {
	for i, n := range outcomeNames {
		if n == s {
			return Outcome(i), nil
		}
	}
	return 0, fmt.Errorf("trace: unknown outcome %q", s)
}

// Ref names a resource at a version: the resource a change is about, or
// the change that caused something.
//
// In JSON it is {"namespace", "type", "id", "version", "writer"}, the last
// two left out when unknown.
type Ref struct {
	Namespace string `json:"namespace"`
	Type      string `json:"type"`
	ID        string `json:"id"`
	// Version is the resource's version after the change; 0 when unknown
	// (an item, a destroyed resource).
	Version uint64 `json:"version,omitempty"`
	// Writer is the controller that committed the change, "" when the
	// Runtime does not know it (a write from outside the Runtime).
	Writer string `json:"writer,omitempty"`
}

// IsZero reports whether r names nothing.
func (r Ref) IsZero() bool { return r == Ref{} }

// String formats r as "type(namespace/id)@version by writer", leaving out
// what is unknown.
func (r Ref) String() string {
	if r.IsZero() {
		return ""
	}
	s := r.Type + "(" + r.Namespace + "/" + r.ID + ")"
	if r.Version != 0 {
		s += fmt.Sprintf("@%d", r.Version)
	}
	if r.Writer != "" {
		s += " by " + r.Writer
	}
	return s
}

// SameResource reports whether r and o name the same resource, whatever
// their versions and writers.
func (r Ref) SameResource(o Ref) bool {
	return r.Namespace == o.Namespace && r.Type == o.Type && r.ID == o.ID
}

// Record is one Runtime record; [Type] says which fields it sets. It is a
// plain value: the ring stores it by value and readers get copies.
type Record struct {
	// Seq is the record's sequence number, set by the ring (from 1, in the
	// order records were added).
	Seq uint64
	// Time is when it happened.
	Time time.Time
	Type Type
	// Outcome is set on ReconcileEnd (and HotLoop, see there).
	Outcome Outcome
	// Attempt counts consecutive failures (Backoff, Crash, Restart) or
	// lost records (Lost).
	Attempt uint32
	// Causes is the number of changes coalesced into a reconcile or an
	// item (ReconcileStart, Queue).
	Causes uint32
	// Worker is the worker (from 1) of a QController of several workers,
	// or of one worker and a RunHook, that ran it: set on the
	// ReconcileStart of its items and on the Commit, Noop and
	// FinalizerWait records of the writes made with the context of their
	// Reconcile or MapInput; 0 for any other record (a Controller's, a
	// QController's of one worker and no RunHook, a RunHook's write). The
	// reconcile that made a commit is the last ReconcileStart before it
	// of the same Controller and Worker.
	Worker uint32
	// Controller is the controller concerned.
	Controller string
	// Op qualifies the type: the write operation of a Commit or a Noop,
	// the change of a Route, the kind of item of a Queue or
	// ReconcileStart.
	Op string
	// Resource is the resource or item concerned.
	Resource Ref
	// Duration is the delivery lag (Route), the queue wait
	// (ReconcileStart) or the reconcile's duration (ReconcileEnd).
	Duration time.Duration
	// The fields above are the ones most records set (see [Head]); those
	// below, which few set, come last so that a record that does not set
	// them leaves their memory untouched in the ring.

	// Cause is the change that caused it (ReconcileStart, Queue).
	Cause Ref
	// Due is when the item or the controller runs again (Requeue,
	// Backoff, Crash).
	Due time.Time
	// Error is the failure's text (Backoff, Crash, ReconcileEnd, Requeue).
	Error string
	// Detail is free text: the finalizers waited for, the cycle of a hot
	// loop.
	Detail string
}

// String formats the record on one line, for logs and text pages.
func (e *Record) String() string {
	s := fmt.Sprintf("#%d %s %s", e.Seq, e.Time.Format("15:04:05.000000"), e.Type)
	add := func(k, v string) {
		if v != "" {
			s += " " + k + "=" + v
		}
	}
	add("controller", e.Controller)
	add("op", e.Op)
	add("resource", e.Resource.String())
	add("cause", e.Cause.String())
	if e.Causes > 1 {
		add("causes", fmt.Sprint(e.Causes))
	}
	if e.Worker > 0 {
		add("worker", fmt.Sprint(e.Worker))
	}
	add("outcome", e.Outcome.String())
	if e.Attempt > 0 {
		add("attempt", fmt.Sprint(e.Attempt))
	}
	if !e.Due.IsZero() {
		add("due", e.Due.Format("15:04:05.000000"))
	}
	if e.Duration != 0 {
		add("duration", e.Duration.String())
	}
	if e.Error != "" {
		add("error", strconv.Quote(e.Error))
	}
	add("detail", e.Detail)
	return s
}
