package runtime

import (
	"cmp"
	"context"
	"expvar"
	"fmt"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/observe/histogram"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/crunner"
	"github.com/resgraph/resgraph/pkg/runtime/internal/qrunner"
	"github.com/resgraph/resgraph/pkg/runtime/internal/status"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
)

// Controller states reported in [ControllerStatus.State].
const (
	StateStarting = status.Starting
	StateRunning  = status.Running
	StateBackoff  = status.Backoff
	StateStopped  = status.Stopped
)

// Controller kinds reported in [ControllerStatus.Kind].
const (
	KindController  = status.Controller
	KindQController = status.QController
)

// ControllerStatus is the state and the counters of one controller.
//
// Reconciles counts, for a Controller, the ReconcileEvents it received
// from EventCh (one per reconcile pass of a conventional Run loop); for a
// QController, the Reconcile and MapInput calls. Crashes counts Controller
// Runs that returned an error or panicked, and QController Reconcile or
// MapInput calls that panicked. Restarts counts Controller restarts after a
// crash. WakeUps counts, for a Controller, the wake-ups the router delivered
// (several may coalesce into one ReconcileEvent); for a QController, the
// items the router queued. Requeues counts QController items requeued after
// a failure or a RequeueError. BusyTime is, for a QController, the time
// spent in Reconcile and MapInput; for a Controller, the time from
// receiving a ReconcileEvent until it takes the next one when that event
// had to wait, and otherwise until the end of the last runtime call (read
// or write) it made before going back to wait. QueueLen and InFlight are a
// QController's waiting and in-flight items.
//
// LastError and LastErrorAt are the last failure and when it happened:
// the text names what failed once ("Reconcile T(ns/id): ...", "Run
// panicked: ..."; a Controller's Run error is its own text). Recovered
// tells whether the controller has recovered since, and RecoveredAt when:
// a QController once every item that failed has since succeeded (or been
// requeued without an error) — FailingItems counts those still failing; a
// Controller once a reconcile pass ended without a new failure after it —
// its Run, restarted or not, came back to EventCh after taking an event
// with no error reported in between, or it called ResetRestartBackoff with
// no failure since its last pass. (A Run loop that keeps the channel of
// one EventCh call recovers only through ResetRestartBackoff.) A new
// failure clears Recovered. Without any failure, Recovered is false and
// LastError empty.
//
// ParkedItems counts a QController's items parked by its retry policy
// ([controller.RetryPolicy]: they failed MaxAttempts times in a row and wait
// for their next change; they are failing items too), and Parked lists up to
// 32 of them, sorted, each with its last error.
//
// QueueWait, Lag, Duration and Busy are the controller's latency
// histograms and saturation (with metrics on): QueueWait from its work
// becoming due (a wake-up, a queued item, the end of an item's backoff or
// requeue interval) to the start of its reconcile; Lag, end to end, from
// the commit of the oldest change that caused a reconcile to its start;
// Duration, the reconcile's duration (a Controller's pass, a QController's
// Reconcile or MapInput call) by outcome ("ok", "error", "requeue",
// "panic"; outcomes never seen are left out); Busy, the fraction of the
// last ten complete seconds the controller (a QController: its pool of
// Concurrency workers) spent reconciling, in [0, 1]. HotLoop describes the
// hot loop the controller is part of while one is flagged ("A writes X →
// B writes Y → A"; see [Runtime.HotLoops]); HotLoops counts the loops
// flagged with it.
//
// State, BackoffUntil, LastError, LastErrorAt, Recovered, RecoveredAt,
// FailingItems, ParkedItems and Parked are tracked even with metrics off;
// the counters are then zero.
//
// In JSON (expvar, debug pages) the fields are named in lowerCamelCase,
// BusyTime as busyTimeNs (nanoseconds), and zero times and an empty last
// error are omitted.
type ControllerStatus struct {
	Name         string        `json:"name"`
	Kind         string        `json:"kind"`  // "controller" | "qcontroller"
	State        string        `json:"state"` // "starting", "running", "backoff", "stopped"
	BackoffUntil time.Time     `json:"backoffUntil,omitzero"`
	LastError    string        `json:"lastError,omitempty"`
	LastErrorAt  time.Time     `json:"lastErrorAt,omitzero"`
	Recovered    bool          `json:"recovered,omitempty"`
	RecoveredAt  time.Time     `json:"recoveredAt,omitzero"`
	FailingItems int           `json:"failingItems,omitempty"`
	Reconciles   uint64        `json:"reconciles"`
	Crashes      uint64        `json:"crashes"`
	Restarts     uint64        `json:"restarts"`
	WakeUps      uint64        `json:"wakeUps"`
	Requeues     uint64        `json:"requeues"`
	BusyTime     time.Duration `json:"busyTimeNs"`
	QueueLen     int           `json:"queueLen"`
	InFlight     int           `json:"inFlight"`
	ParkedItems  int           `json:"parkedItems,omitempty"`
	Parked       []ParkedItem  `json:"parked,omitempty"`

	QueueWait histogram.Snapshot            `json:"queueWait"`
	Lag       histogram.Snapshot            `json:"lag"`
	Duration  map[string]histogram.Snapshot `json:"duration"`
	Busy      float64                       `json:"busy"`
	HotLoop   string                        `json:"hotLoop,omitempty"`
	HotLoops  uint64                        `json:"hotLoops"`
}

// KindMetrics are the counters of one watched kind: changes routed to
// controllers, re-lists (after a failed watch, or on request: Relist), and the delivery lag of its
// changes (from the commit of a created or updated resource to its routing
// to the controllers).
type KindMetrics struct {
	Namespace    string             `json:"namespace"`
	Type         string             `json:"type"`
	EventsRouted uint64             `json:"eventsRouted"`
	Relists      uint64             `json:"relists"`
	DeliveryLag  histogram.Snapshot `json:"deliveryLag"`
}

// Metrics are an engine's counters and histograms: every controller
// (sorted by name), every watched kind (sorted by namespace and type) and
// the hot loops flagged now. In JSON (see [Runtime.PublishExpvar]) they
// are {"controllers": [...], "kinds": [...], "hotLoops": [...]}, named as
// [ControllerStatus] says; a histogram is {"count", "sumNs", "p50Ns",
// "p90Ns", "p99Ns", "buckets": [{"lt", "n"}]} (see package
// observe/histogram).
type Metrics struct {
	Controllers []ControllerStatus `json:"controllers"`
	Kinds       []KindMetrics      `json:"kinds"`
	HotLoops    []HotLoop          `json:"hotLoops"`
}

// controllerRunner is a registered Controller.
type controllerRunner struct {
	r    *crunner.Runner
	tel  *telemetry.Controller
	name string
}

func (c *controllerRunner) sink() *telemetry.Controller { return c.tel }

func (c *controllerRunner) run(ctx context.Context, _ []resource.KindKey) { c.r.Run(ctx) }

func (c *controllerRunner) status() ControllerStatus {
	return newControllerStatus(c.name, KindController, c.r.Status(), c.tel)
}

func (c *controllerRunner) activity() ControllerActivity {
	return newControllerActivity(c.name, KindController, c.r.Activity())
}

// qcontrollerRunner is a registered QController.
type qcontrollerRunner struct {
	r    *qrunner.Runner
	tel  *telemetry.Controller
	name string
}

func (c *qcontrollerRunner) sink() *telemetry.Controller { return c.tel }

func (c *qcontrollerRunner) run(ctx context.Context, existing []resource.KindKey) {
	c.r.Run(ctx, existing)
}

func (c *qcontrollerRunner) status() ControllerStatus {
	snap, failing, queued, inFlight := c.r.Status()
	st := newControllerStatus(c.name, KindQController, snap, c.tel)
	st.FailingItems, st.QueueLen, st.InFlight = failing, queued, inFlight
	c.parkedStatus(&st)
	return st
}

func (c *qcontrollerRunner) activity() ControllerActivity {
	return newControllerActivity(c.name, KindQController, c.r.Activity())
}

// newControllerStatus assembles a status from the runner's status and the
// controller's counters and histograms.
func newControllerStatus(name, kind string, st status.Snapshot, tel *telemetry.Controller) ControllerStatus {
	n, l := tel.Counters(), tel.Latencies()
	loop, loops := tel.HotLoop()
	cs := ControllerStatus{
		Name:         name,
		Kind:         kind,
		State:        st.State,
		BackoffUntil: st.BackoffUntil,
		LastError:    st.LastError,
		LastErrorAt:  st.LastErrorAt,
		Recovered:    !st.RecoveredAt.IsZero(),
		RecoveredAt:  st.RecoveredAt,
		Reconciles:   n.Reconciles,
		Crashes:      n.Crashes,
		Restarts:     n.Restarts,
		WakeUps:      n.WakeUps,
		Requeues:     n.Requeues,
		BusyTime:     n.Busy,
		QueueWait:    l.QueueWait,
		Lag:          l.Lag,
		Duration:     map[string]histogram.Snapshot{},
		Busy:         l.Busy,
		HotLoop:      loop,
		HotLoops:     loops,
	}
	for o := trace.OutcomeOK; o <= trace.OutcomePanic; o++ {
		if l.Duration[o].Count > 0 {
			cs.Duration[o.String()] = l.Duration[o]
		}
	}
	return cs
}

// ControllerStatuses returns the status of every registered controller,
// sorted by name. It is safe to call at any time, before, during and after
// Run.
func (r *Runtime) ControllerStatuses() []ControllerStatus {
	r.mu.Lock()
	runners := make([]runner, 0, len(r.runners))
	for _, rn := range r.runners {
		runners = append(runners, rn)
	}
	r.mu.Unlock()

	out := make([]ControllerStatus, 0, len(runners))
	for _, rn := range runners {
		out = append(out, rn.status())
	}
	slices.SortFunc(out, func(a, b ControllerStatus) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Metrics returns a snapshot of the engine's counters.
func (r *Runtime) Metrics() Metrics {
	m := Metrics{Controllers: r.ControllerStatuses(), Kinds: []KindMetrics{}}
	for _, k := range r.router.Metrics() {
		m.Kinds = append(m.Kinds, KindMetrics{
			Namespace:    k.Key.Namespace(),
			Type:         k.Key.Type(),
			EventsRouted: k.EventsRouted,
			Relists:      k.Relists,
			DeliveryLag:  k.DeliveryLag,
		})
	}
	m.HotLoops = r.HotLoops()
	return m
}

// PublishExpvar publishes [Runtime.Metrics] as the expvar variable name
// (computed on each read), in the JSON form [Metrics] describes. It returns an error, and publishes nothing, when
// the name is already published.
func (r *Runtime) PublishExpvar(name string) (err error) {
	if name == "" {
		return fmt.Errorf("runtime: PublishExpvar: empty name")
	}
	if expvar.Get(name) != nil {
		return fmt.Errorf("runtime: PublishExpvar: %q is already published", name)
	}
	defer func() {
		// expvar.Publish panics when another goroutine published the same
		// name since the check above.
		if p := recover(); p != nil {
			err = fmt.Errorf("runtime: PublishExpvar: %q: %v", name, p)
		}
	}()
	expvar.Publish(name, expvar.Func(func() any { return r.Metrics() }))
	return nil
}
