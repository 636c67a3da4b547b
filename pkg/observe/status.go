package observe

import (
	"fmt"
	"time"

	"github.com/resgraph/resgraph/pkg/observe/histogram"
)

// Lifecycle is where a controller is in its life. The zero value is
// [LifecycleStarting].
type Lifecycle uint8

// A controller's lifecycle, in JSON as its String form.
const (
	// LifecycleStarting: registered, not running yet (before Run, or waiting
	// for its inputs' first bootstrap, or a QController filling its queue).
	LifecycleStarting Lifecycle = iota
	// LifecycleRunning: its Run (a QController: its workers) is running; it
	// may be reconciling or waiting for work.
	LifecycleRunning
	// LifecycleBackoff: a Controller whose Run failed or panicked, waiting out
	// its restart backoff.
	LifecycleBackoff
	// LifecycleStopped: the Runtime stopped it.
	LifecycleStopped
	// LifecycleParked: a Controller whose Run returned an access denial (rule
	// C3: a write to an undeclared output, a read outside its inputs), a
	// programming error no restart can fix: it is not restarted until one
	// of its inputs changes (LastError says what was denied).
	LifecycleParked
)

var stateNames = [...]string{"starting", "running", "backoff", "stopped", "parked"}

// String returns "starting", "running", "backoff", "stopped" or "parked".
func (s Lifecycle) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// MarshalText returns the String form.
func (s Lifecycle) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses the String form of a known lifecycle.
func (s *Lifecycle) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if n == string(b) {
			*s = Lifecycle(i)
			return nil
		}
	}
	return fmt.Errorf("observe: unknown controller state %q", b)
}

// Family tells the two families of controllers apart: a
// controller.Controller (one Run loop and its wake-ups) and a
// controller.QController (a work queue of resource pointers).
type Family uint8

// Controller families, in JSON as their String form.
const (
	FamilyController Family = iota
	FamilyQController
)

var familyNames = [...]string{"controller", "qcontroller"}

// String returns "controller" or "qcontroller".
func (f Family) String() string {
	if int(f) < len(familyNames) {
		return familyNames[f]
	}
	return fmt.Sprintf("Family(%d)", uint8(f))
}

// MarshalText returns the String form.
func (f Family) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText parses the String form of a known family.
func (f *Family) UnmarshalText(b []byte) error {
	for i, n := range familyNames {
		if n == string(b) {
			*f = Family(i)
			return nil
		}
	}
	return fmt.Errorf("observe: unknown controller family %q", b)
}

// ControllerStatus is what a person reads about one controller: its lifecycle,
// its last failure and whether it recovered since, its queue and failing
// items now, the hot loop it is in. Its counters and latencies are in
// Metrics. Everything but Metrics is tracked with the Runtime's metrics off
// too (Metrics is then zero). In JSON, fields are lowerCamelCase; zero times,
// an empty last error and empty lists are omitted.
type ControllerStatus struct {
	Name   string `json:"name"`
	Family Family `json:"family"`
	// Lifecycle is where the controller is, Since when it got there (zero
	// while it is starting).
	Lifecycle Lifecycle `json:"state"`
	Since     time.Time `json:"since,omitzero"`
	// BackoffUntil is when a Controller in LifecycleBackoff restarts.
	BackoffUntil time.Time `json:"backoffUntil,omitzero"`
	// LastError is the text of the last failure, naming what failed once
	// ("Reconcile T(ns/id): ...", "Run panicked: ..."; a Controller's Run
	// error is its own text), and LastErrorAt when it happened.
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	// Recovered is set, at RecoveredAt, once the controller recovered
	// from its failures: a QController once no item is failing any more;
	// a Controller once a pass ended with no failure reported after it
	// (its Run came back to EventCh), or it called ResetRestartBackoff
	// with no failure since its last pass. A new failure clears it.
	Recovered   bool      `json:"recovered,omitempty"`
	RecoveredAt time.Time `json:"recoveredAt,omitzero"`
	// QueueLen and InFlight are a QController's items waiting and being
	// reconciled; FailingItems those whose last run failed (parked ones
	// included).
	QueueLen     int `json:"queueLen"`
	InFlight     int `json:"inFlight"`
	FailingItems int `json:"failingItems,omitempty"`
	// ParkedItems counts the items parked by the QController's retry
	// policy (controller.RetryPolicy.MaxAttempts) until their next change;
	// Parked lists up to 32 of them, sorted, each with its last error.
	ParkedItems int          `json:"parkedItems,omitempty"`
	Parked      []ParkedItem `json:"parked,omitempty"`
	// HotLoop describes the hot loop the controller is part of while one
	// is flagged ("A writes X → B writes Y → A"; see [HotLoop]).
	HotLoop string `json:"hotLoop,omitempty"`
	// Leadership is the controller's part in its election, when the
	// Runtime runs with leadership (nil otherwise).
	Leadership *Leadership `json:"leadership,omitempty"`
	// Metrics are its counters and latency histograms.
	Metrics ControllerMetrics `json:"metrics"`
}

// ControllerMetrics are one controller's counters and latency histograms,
// kept with the Runtime's metrics on (zero otherwise). For a Controller, a
// reconcile is a pass (a ReconcileEvent taken from EventCh); for a
// QController, a Reconcile or MapInput call.
type ControllerMetrics struct {
	// Reconciles counts reconciles.
	Reconciles uint64 `json:"reconciles"`
	// Crashes counts Controller Runs that returned an error or panicked,
	// and QController calls that panicked; Restarts, Controller restarts
	// after a crash.
	Crashes  uint64 `json:"crashes"`
	Restarts uint64 `json:"restarts"`
	// WakeUps counts the wake-ups routed to a Controller (several may
	// coalesce into one ReconcileEvent) or the items routing queued for a
	// QController; Requeues, QController items requeued after a failure
	// or a RequeueError.
	WakeUps  uint64 `json:"wakeUps"`
	Requeues uint64 `json:"requeues"`
	// BusyTime is the time spent reconciling (a Controller: from taking a
	// wake-up to taking the next one when that one had to wait, otherwise to
	// the end of its last runtime call before it waited again); in JSON
	// busyTimeNs, in nanoseconds.
	BusyTime time.Duration `json:"busyTimeNs"`
	// QueueWait is from work becoming due (a wake-up, a queued item, the
	// end of a backoff or requeue interval) to its reconcile's start.
	QueueWait histogram.Snapshot `json:"queueWait"`
	// Lag is end to end: from the oldest change that caused a reconcile
	// to its start, the change counted from its commit or, when later,
	// from the Runtime's first listing of its kind (when the Runtime could
	// first see it). What existed at that listing is not lag: see Startup.
	Lag histogram.Snapshot `json:"lag"`
	// Startup is the work found at the start: from the Runtime's first
	// listing of a kind to the reconcile of each resource it listed (a
	// QController's items), and from a Controller's (re)start to its
	// start pass.
	Startup histogram.Snapshot `json:"startup"`
	// Duration is the reconciles' duration by outcome ("ok", "error",
	// "requeue", "panic"; outcomes never seen are left out).
	Duration map[string]histogram.Snapshot `json:"duration"`
	// Busy is the fraction of the last ten complete seconds the controller
	// (a QController: its pool of workers) spent reconciling, in [0, 1].
	Busy float64 `json:"busy"`
	// HotLoops counts the hot loops flagged with the controller.
	HotLoops uint64 `json:"hotLoops"`
	// Edges are the traffic along its edges of the dependency graph: one
	// per declared input, then one per output type and namespace written
	// (an output declares no namespace: the Runtime learns it from the
	// writes).
	Edges []EdgeCount `json:"edges,omitempty"`
}

// EdgeCount is the traffic along one edge of a controller: for an input,
// what the Runtime delivered through it — a Controller's wake-ups (one per
// routed batch of changes that concerns it), a QController's queued items
// (one per change); for an output, the controller's successful writes to
// resources of Namespace/Type. Rates are differences of counts over time.
type EdgeCount struct {
	// EdgeType is the edge's type as the dependency graph names it
	// ("InputStrong", ..., "OutputExclusive", "OutputShared").
	EdgeType  string `json:"edgeType"`
	Namespace string `json:"namespace"`
	Type      string `json:"type"`
	// ID is set for an input limited to one ID.
	ID    string `json:"id,omitempty"`
	Count uint64 `json:"count"`
}

// ParkedItem is a QController item parked by its retry policy: it failed
// Attempts times in a row and is not retried until its next change.
type ParkedItem struct {
	// Item names the call: "Reconcile T(ns/id)" or "MapInput T(ns/id)".
	Item     string `json:"item"`
	Attempts uint   `json:"attempts"`
	// LastError is the last failure (the error's text or the panic's value).
	LastError string    `json:"lastError"`
	ParkedAt  time.Time `json:"parkedAt"`
}

// KindMetrics are the counters of one watched kind: changes routed to
// controllers, re-lists (after a failed watch, or on request), and the
// delivery lag of its changes (from the commit of a created or updated
// resource to its routing).
type KindMetrics struct {
	Namespace    string             `json:"namespace"`
	Type         string             `json:"type"`
	EventsRouted uint64             `json:"eventsRouted"`
	Relists      uint64             `json:"relists"`
	DeliveryLag  histogram.Snapshot `json:"deliveryLag"`
}

// HotLoop is a hot loop flagged by the Runtime: a cycle of controllers each
// writing, at a sustained rate, mostly because of the previous one's change
// — a controller re-triggered by its own writes, or controllers that keep
// rewriting each other's inputs.
type HotLoop struct {
	// Cycle describes it: "A writes T(ns/x) → B writes U(ns/y) → A".
	Cycle string `json:"cycle"`
	// Controllers are its controllers, in cycle order.
	Controllers []string `json:"controllers"`
	// Rate is its rate, per second, in the last window it was seen in.
	Rate float64 `json:"rate"`
	// Since is when it was flagged.
	Since time.Time `json:"since"`
}

// Metrics are everything a Runtime reports at one instant: every
// controller's status (sorted by name), every watched kind's counters
// (sorted by namespace and type) and the hot loops flagged now (sorted by
// cycle), with how many trace records the hot-loop detector and the trace
// hook missed and how much the detector itself could not count. In JSON
// they are {"controllers": [...], "kinds": [...], "hotLoops": [...],
// "traceMissed": n, "hotLoopDropped": n, "hotLoopIncomplete": n}; a
// histogram is {"count", "sumNs",
// "p50Ns", "p90Ns", "p99Ns", "buckets": [{"lt", "n"}]} (see package
// observe/histogram).
type Metrics struct {
	Controllers []ControllerStatus `json:"controllers"`
	Kinds       []KindMetrics      `json:"kinds"`
	HotLoops    []HotLoop          `json:"hotLoops"`
	// TraceMissed counts the trace records the Runtime's reader of its
	// trace (which feeds the hot-loop detector and the trace hook) never
	// read: overwritten before it could, because it (or the hook) did not
	// keep up with the writers. The detector's rates are of the commits
	// it read; the hook got a Lost record for each gap.
	TraceMissed uint64 `json:"traceMissed"`
	// HotLoopDropped counts the commits the hot-loop detector read but let
	// go of before their time, to keep its memory bounded: earlier commits
	// of a resource that lost its place in its full table of resources
	// committed once or twice, and commits of resources that found its
	// stats full (see package observe/hotloop, Stats.Dropped).
	HotLoopDropped uint64 `json:"hotLoopDropped"`
	// HotLoopIncomplete counts the detector's windows closed that counted
	// only part of their commits: records missed (TraceMissed) or commits
	// dropped (HotLoopDropped) fell in them. Such a window ends no loop and
	// lowers no loop's rate: its counts are lower bounds (see package
	// observe/hotloop, Stats.Incomplete).
	HotLoopIncomplete uint64 `json:"hotLoopIncomplete"`
}
