// Package qrunner runs one QController: its work queue, fed by the router,
// and its Concurrency workers (rules Q1–Q5). Each item's user code —
// Reconcile, or MapInput and the pointers it returns — runs inside one
// recovery that classifies what it came to (package outcome); the Runtime's
// one outcome switch then decides the queue's action, the log line, the
// metric label and the status.
//
// A runner depends on exactly what it uses ([Config]): its controller, the
// state (for the initial lists of its inputs), its adapter, its telemetry
// sink and the idle notifier. Which items are failing is the queue's to
// know ([queue.Queue.Failing]); the runner adds its failing initial list.
package qrunner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/processed"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
	"github.com/resgraph/resgraph/pkg/runtime/internal/idle"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/runtime/internal/route"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/runtime/internal/status"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
)

// Config is what a [Runner] needs.
type Config struct {
	Name     string
	Ctrl     controller.QController
	Settings controller.QSettings
	// Concurrency is the number of workers (at least 1).
	Concurrency uint
	// Logger is the Runtime's logger; the runner adds the controller's name.
	Logger *zap.Logger
	// Retry is the controller's retry policy of its items (rule Q3,
	// controller.RetryPolicy); its backoff also spaces the retries of a
	// failed initial list.
	Retry retry.Policy
	// State is listed for the inputs whose watch ran before the
	// controller was registered.
	State state.State
	// Adapter is the controller's reader/writer.
	Adapter *adapter.Adapter
	// Telemetry is the controller's sink (nil with metrics off).
	Telemetry *telemetry.Controller
	// Idle is pinged when an item is done and when the runner started.
	Idle *idle.Notifier
	// Scheduler gates every item a worker takes and every call of the
	// RunHook (sched.Direct, the default when nil, lets each go at once).
	Scheduler sched.Scheduler
	// InputsListed reports whether the first listing of every input kind
	// was routed (nil: they were), for the controller's health.
	InputsListed func() bool
}

// Runner runs one QController. Run is called once; the other methods are
// safe for concurrent use at any time.
type Runner struct {
	cfg    Config
	logger *zap.Logger
	// elog logs the Runtime's own messages about the controller, without
	// automatic stack traces (see outcome.EngineLogger).
	elog *zap.Logger
	// queue holds the items, each with its pending work for the
	// telemetry (the queue's notes).
	queue *queue.Queue[work.Item, telemetry.Pending]
	sub   *route.Subscriber
	// picker picks the item each idle worker takes (a simulator's
	// scheduler, sched.Picker); nil: the queue's order.
	picker sched.Picker
	// last holds the last versions of destroyed mapped inputs that their
	// map items hand MapInput (rule Q4).
	last *work.LastSeen
	// primary are the kinds of the InputQPrimary inputs.
	primary map[resource.KindKey]struct{}
	status  status.Status
	// fillFailing is set while an initial list is failing (it counts as a
	// failing item).
	fillFailing atomic.Bool
	// finishing counts the items whose call ended and whose outcome is
	// being reported (see worker).
	finishing atomic.Int32
	// busy holds, per worker, when its item in flight started (Unix
	// nanoseconds; 0 when idle), and caughtUp is set once the controller
	// ran every item its inputs' first listings queued: its health (see
	// Runner.Health).
	busy     []atomic.Int64
	caughtUp atomic.Bool

	// numbered is set when the workers' writes name their worker in the
	// trace (adapter.WorkerContext): with several workers, or with a
	// RunHook, whose writes name none — so that a reconcile's writes and
	// the hook's are told apart even with one worker.
	numbered bool

	badMu sync.Mutex
	// badKinds are the undeclared kinds MapInput returned, logged once
	// each; protected by badMu.
	badKinds map[resource.KindKey]struct{}
}

// New returns the runner of a QController; it starts nothing.
func New(cfg Config) *Runner {
	cfg.Scheduler = sched.Or(cfg.Scheduler)
	logger := cfg.Logger.With(zap.String("controller", cfg.Name))
	q := queue.NewWithPartner[work.Item, telemetry.Pending](cfg.Retry, reconcileMapPartner(cfg.Settings.Inputs))
	last := &work.LastSeen{}
	c := &Runner{
		cfg:      cfg,
		logger:   logger,
		elog:     outcome.EngineLogger(logger),
		queue:    q,
		sub:      &route.Subscriber{Queue: q, Last: last, Telemetry: cfg.Telemetry, Floor: cfg.Adapter.Floor()},
		last:     last,
		primary:  map[resource.KindKey]struct{}{},
		badKinds: map[resource.KindKey]struct{}{},
		busy:     make([]atomic.Int64, max(cfg.Concurrency, 1)),
	}
	c.numbered = cfg.Concurrency > 1 || c.hasRunHook()
	cfg.Adapter.SetWorkers(c.numbered)
	c.picker, _ = cfg.Scheduler.(sched.Picker)
	if s, ok := cfg.Ctrl.(processed.Source); ok {
		c.sub.Processed = s.ProcessedInputs()
	}
	for _, in := range cfg.Settings.Inputs {
		if in.Kind == controller.InputQPrimary {
			c.primary[resource.KindOf(resource.NewKind(in.Namespace, in.Type))] = struct{}{}
		}
	}
	return c
}

// Subscriber is where the router delivers the controller's items.
func (c *Runner) Subscriber() *route.Subscriber { return c.sub }

// reconcileMapPartner returns the queue partner relation that keeps
// Reconcile(p) and MapInput(p) of one pointer from running at once (rule Q2
// as the package doc of runtime extends it): the reconcile item and the map
// item of p are partners, for the kinds declared both as a primary input
// and as a mapped one. It is nil (no cost) when no kind is both.
func reconcileMapPartner(inputs []controller.Input) queue.Partner[work.Item] {
	primary, mapped := map[resource.KindKey]bool{}, map[resource.KindKey]bool{}
	for _, in := range inputs {
		k := resource.KindOf(resource.NewKind(in.Namespace, in.Type))
		if in.Kind == controller.InputQPrimary {
			primary[k] = true
		} else {
			mapped[k] = true
		}
	}
	both := map[resource.KindKey]struct{}{}
	for k := range primary {
		if mapped[k] {
			both[k] = struct{}{}
		}
	}
	if len(both) == 0 {
		return nil
	}
	return func(it work.Item) (work.Item, bool) {
		if _, ok := both[it.Ptr.Kind()]; !ok {
			return work.Item{}, false
		}
		return it.Partner(), true
	}
}

// Run runs the workers until ctx is done. The input kinds existing lists
// were watched before the controller was registered (their first bootstrap
// did not see it): they are listed into the queue; the others are filled
// by their watch's bootstrap. The queue is shut down when it returns.
func (c *Runner) Run(ctx context.Context, existing []resource.KindKey) {
	c.Serve(ctx, existing)
	c.Close()
}

// Serve is Run without the shutdown of the queue: it may be called again
// once it returned (a new leadership term), and [Runner.Close] ends the
// controller.
func (c *Runner) Serve(ctx context.Context, existing []resource.KindKey) {
	defer c.status.SetState(status.Stopped, time.Time{})
	c.status.SetState(status.Starting, time.Time{})
	c.caughtUp.Store(false) // a new term catches up again
	snaps := c.cfg.Adapter.Snapshots()
	snaps.Start()
	defer snaps.Stop()

	var wg sync.WaitGroup
	defer c.shutdownHook() // after the workers and the run hook returned
	for i := range c.cfg.Concurrency {
		n := uint32(0) // one worker and no hook: its records need not name it
		if c.numbered {
			n = uint32(i + 1)
		}
		wg.Go(func() { c.worker(ctx, &c.busy[i], n) })
	}
	wg.Go(func() { c.runHook(ctx) })
	filled := make(map[resource.KindKey]struct{}, len(existing))
	for _, k := range existing {
		if _, dup := filled[k]; !dup {
			filled[k] = struct{}{}
			c.fill(ctx, k)
		}
	}
	// Running once its queue holds what exists (the activity report says
	// a starting QController busy).
	c.status.SetState(status.Running, time.Time{})
	c.cfg.Idle.Ping()
	wg.Wait()
}

// Status returns the controller's status, the number of its failing items
// (an initial list that fails counts as one) and its queue.
func (c *Runner) Status() (st status.Snapshot, failing, queued, inFlight int) {
	failing = c.queue.Failing()
	if c.fillFailing.Load() {
		failing++
	}
	return c.status.Snapshot(), failing, c.queue.Len(), c.queue.InFlight()
}

// stillFailing reports whether an item (or an initial list) is failing.
func (c *Runner) stillFailing() bool { return c.queue.Failing() > 0 || c.fillFailing.Load() }

// activitySample bounds the items an activity names.
const activitySample = 8

// Activity reports what the controller is busy with.
func (c *Runner) Activity() status.Activity {
	var a status.Activity
	switch c.status.State() {
	case status.Stopped:
		return a
	case status.Starting:
		// Not running yet, or listing the inputs whose watch ran before
		// it was registered: its queue is not filled yet.
		a.Busy, a.Why = true, "starting: its queue is not filled yet"
		return a
	}
	st := c.queue.Stats(activitySample)
	a.Due, a.InFlight, a.Delayed, a.NextDue = st.Due, st.InFlight, st.Delayed, st.NextDue
	a.Busy = st.Due > 0 || st.InFlight > 0
	a.Why = describeQueue(st)
	// Read after the queue: an item that left flight before the Stats
	// was counted here before it did.
	if n := c.finishing.Load(); n > 0 {
		a.Busy = true
		a.Why = strings.TrimPrefix(a.Why+fmt.Sprintf("; %d finishing (their outcome being recorded)", n), "; ")
	}
	return a
}

// Items returns up to n of the items in flight and due, in flight first
// (for explanations), and how many of them are in flight.
func (c *Runner) Items(n int) (items []work.Item, inFlight int) {
	st := c.queue.Stats(n)
	return st.Sample, st.SampleInFlight
}
