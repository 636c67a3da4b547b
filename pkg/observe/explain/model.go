// Package explain is the model of a Runtime's answer to "why is X (not)
// reconciled": for a resource ([Resource]), who writes it, who reads it,
// its last changes and the reconciles each caused, and what each
// controller concerned is doing now; for a controller ([Controller]), the
// same from its side. The Runtime gathers what it knows ([Facts],
// [ResourceFacts]) and [BuildResource] and [BuildController] derive the
// explanations from them (runtime.Explain, runtime.ExplainController);
// this package renders them as text ([WriteText]), HTML ([WriteHTML]) and
// JSON (the types' JSON form: lowerCamelCase, zero values left out), and
// extracts a resource's or a controller's history from a trace
// ([Changes], [Reconciles]).
package explain

import (
	"time"

	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// Work is what a controller is doing, as [Doing] reports it.
type Work string

// What a controller may be doing. For a resource's readers and writers it
// is about that resource when the Runtime can tell (a QController's item),
// and about the whole controller otherwise.
const (
	// WorkIdle: idle and up to date — nothing due, nothing in flight.
	WorkIdle Work = "idle"
	// WorkQueued: work is queued, due at Due (now or soon).
	WorkQueued Work = "queued"
	// WorkBackoff: a failed item waits until Due after Error (Attempt
	// consecutive failures), or a requeue interval runs (Error empty).
	WorkBackoff Work = "backoff"
	// WorkRunning: a reconcile is running since Since.
	WorkRunning Work = "running"
	// WorkWaitingFinalizer: it waits for Finalizers of Resource to go
	// before it can destroy it.
	WorkWaitingFinalizer Work = "waitingFinalizer"
	// WorkBlocked: it cannot do its work because its input Resource
	// does not exist.
	WorkBlocked Work = "blocked"
	// WorkStarting: it has not started yet (waiting for its inputs'
	// first listing, or for Run).
	WorkStarting Work = "starting"
	// WorkRestarting: its Run crashed (Error) and restarts at Due
	// (Attempt consecutive crashes).
	WorkRestarting Work = "restarting"
	// WorkStopped: the Runtime stopped it (or it returned).
	WorkStopped Work = "stopped"
	// WorkParked: it, or its item Resource, was denied access (Error: rule
	// C3, a programming error no retry can fix) or failed its retry
	// policy's MaxAttempts in a row (an item, Attempt runs), and is not
	// run again until its item changes (a Controller: until one of its
	// inputs changes).
	WorkParked Work = "parked"
	// WorkStandby: another replica leads its election and runs it
	// (runtime.WithLeadership) since Since; this one keeps its inputs
	// watched. Detail names the election.
	WorkStandby Work = "standby"
)

// Doing is what a controller is doing now.
type Doing struct {
	Work Work `json:"state"`
	// Since is when this work began, when known (a running reconcile's
	// start, a wait's first sight).
	Since time.Time `json:"since,omitzero"`
	// Due is when queued work runs, a backoff ends or a restart happens.
	Due time.Time `json:"due,omitzero"`
	// Error is the failure behind a backoff or a restart.
	Error string `json:"error,omitempty"`
	// Attempt counts consecutive failures.
	Attempt int `json:"attempt,omitempty"`
	// Resource is what the work is about: the item queued or running,
	// the resource whose finalizers it waits for, the missing input.
	Resource *trace.Ref `json:"resource,omitempty"`
	// Finalizers are the finalizers waited for.
	Finalizers []string `json:"finalizers,omitempty"`
	// HotLoop describes the hot loop the controller is part of, when one
	// is flagged ("A writes X → B writes Y → A").
	HotLoop string `json:"hotLoop,omitempty"`
	// Detail says more, in words (e.g. how many more items are queued).
	Detail string `json:"detail,omitempty"`
}

// Edge is a declared input or output of a controller, as the dependency
// graph lists it.
type Edge struct {
	Controller string `json:"controller"`
	// Family is the controller's family: "controller" or "qcontroller".
	Family string `json:"family,omitempty"`
	// EdgeType is the edge type's name ("InputStrong", "OutputExclusive",
	// ...).
	EdgeType  string `json:"edgeType"`
	Namespace string `json:"namespace,omitempty"`
	Type      string `json:"type"`
	// ID is set for an input limited to one ID.
	ID string `json:"id,omitempty"`
	// NoWriter marks an input whose kind no registered controller
	// outputs (controller.DependencyEdge.NoWriter).
	NoWriter bool `json:"noWriter,omitempty"`
	// OutsideWriter marks an input whose kind no registered controller
	// outputs, declared written by outside writers
	// (controller.DependencyEdge.OutsideWriter).
	OutsideWriter bool `json:"outsideWriter,omitempty"`
}

// NoWriterText is what an explanation says of an input whose kind no
// controller writes.
const NoWriterText = "no controller writes this kind; only outside writers wake this input"

// OutsideWriterText is what an explanation says of an input whose kind
// is declared written by outside writers.
const OutsideWriterText = "written outside the Runtime, as declared (WithOutsideWriters)"

// Reconcile is one reconcile seen in the trace.
type Reconcile struct {
	Seq        uint64 `json:"seq"`
	Controller string `json:"controller"`
	// Item is a QController's item (empty for a Controller's pass); Op
	// is "reconcile" or "map".
	Item *trace.Ref `json:"item,omitempty"`
	Op   string     `json:"op,omitempty"`
	// Cause is the newest change it ran for, Causes how many changes were
	// coalesced into it.
	Cause  *trace.Ref `json:"cause,omitempty"`
	Causes uint32     `json:"causes,omitempty"`
	Start  time.Time  `json:"start"`
	// Wait is how long it waited since it was due (queue wait).
	Wait time.Duration `json:"waitNs,omitempty"`
	// Duration, Outcome and Error are set once it ended (Outcome is
	// "running" while it runs, "unknown" when the trace lost its end).
	Duration time.Duration `json:"durationNs,omitempty"`
	Outcome  string        `json:"outcome"`
	Error    string        `json:"error,omitempty"`
}

// Change is one change of a resource seen in the trace, with the
// reconciles it caused.
type Change struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Version uint64    `json:"version,omitempty"`
	// Op is the write ("create", "update", ...) for a commit seen by the
	// Runtime (a Modify is named by what it did: "create" for version 1,
	// "update" after), the change ("created", "updated", "destroyed") otherwise, or
	// "existing" for a version the Runtime found when it first listed the
	// kind (Time is then when it listed it, not when it was committed).
	Op string `json:"op"`
	// Writer is the controller that committed it, "" for a write from
	// outside the Runtime.
	Writer string `json:"writer,omitempty"`
	// Reconciles are the reconciles that ran with this change as their
	// newest cause.
	Reconciles []Reconcile `json:"reconciles,omitempty"`
}

// ControllerDoing is a controller concerned by a resource, and what it is
// doing now.
type ControllerDoing struct {
	Controller string `json:"controller"`
	// Family is the controller's family: "controller" or "qcontroller".
	Family string `json:"family"`
	// Role is "writes" (it declares the resource's type as an output),
	// "reads" (an input covers it) or "reads, writes".
	Role  string `json:"role"`
	Doing Doing  `json:"doing"`
}

// Resource explains one resource.
type Resource struct {
	// Time is when the explanation was built.
	Time     time.Time `json:"time"`
	Resource trace.Ref `json:"resource"`
	// Exists tells whether the resource exists; Version, Phase, Owner and
	// Finalizers describe it when it does.
	Exists     bool     `json:"exists"`
	Version    uint64   `json:"version,omitempty"`
	Phase      string   `json:"phase,omitempty"`
	Owner      string   `json:"owner,omitempty"`
	Finalizers []string `json:"finalizers,omitempty"`
	// Writers are the controllers declaring its type as an output,
	// Readers those with an input that covers it.
	Writers []Edge `json:"writers"`
	Readers []Edge `json:"readers"`
	// Changes are its last changes in the trace, newest first.
	Changes []Change `json:"changes"`
	// Controllers are its writers and readers, sorted by name, with what
	// each is doing now.
	Controllers []ControllerDoing `json:"controllers"`
	// Notes say what the explanation could not know (the trace is off,
	// the state could not be read, ...).
	Notes []string `json:"notes,omitempty"`
}

// Input is a controller's declared input, with the controllers that write
// its type.
type Input struct {
	Edge
	Writers []string `json:"writers,omitempty"`
}

// Output is a controller's declared output, with the controllers that
// read its type.
type Output struct {
	Edge
	Readers []string `json:"readers,omitempty"`
}

// Item is a QController's queued, running or backing-off item.
type Item struct {
	Item    trace.Ref `json:"item"`
	Op      string    `json:"op,omitempty"`
	Work    Work      `json:"state"`
	Due     time.Time `json:"due,omitzero"`
	Attempt int       `json:"attempt,omitempty"`
	Error   string    `json:"error,omitempty"`
}

// Latency summarizes a latency histogram.
type Latency struct {
	Count uint64        `json:"count"`
	P50   time.Duration `json:"p50Ns"`
	P99   time.Duration `json:"p99Ns"`
}

// Counters are a controller's counters (see observe.ControllerMetrics).
type Counters struct {
	Reconciles uint64 `json:"reconciles"`
	Crashes    uint64 `json:"crashes"`
	Restarts   uint64 `json:"restarts"`
	WakeUps    uint64 `json:"wakeUps"`
	Requeues   uint64 `json:"requeues"`
	QueueLen   int    `json:"queueLen"`
	InFlight   int    `json:"inFlight"`
}

// Controller explains one controller.
type Controller struct {
	Time time.Time `json:"time"`
	Name string    `json:"name"`
	// Family is the controller's family: "controller" or "qcontroller".
	Family string `json:"family"`
	// Doing is what it is doing now.
	Doing Doing `json:"doing"`
	// Leadership is its part in its election, in words ("leader of
	// election E since T (term N)", "standby in election E since T"),
	// when the Runtime runs with leadership.
	Leadership  string    `json:"leadership,omitempty"`
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	Inputs      []Input   `json:"inputs"`
	Outputs     []Output  `json:"outputs"`
	Counters    Counters  `json:"counters"`
	// Latencies are its latency histograms by name ("queueWait",
	// "duration", "lag", "startup"), when the Runtime keeps them.
	Latencies map[string]Latency `json:"latencies,omitempty"`
	// Items are a QController's items that are not idle (a sample).
	Items []Item `json:"items,omitempty"`
	// Recent are its last reconciles in the trace, newest first.
	Recent []Reconcile `json:"recent"`
	Notes  []string    `json:"notes,omitempty"`
}
