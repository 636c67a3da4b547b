package runtime

import (
	"cmp"
	"expvar"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Controller states reported in [ControllerStatus.State].
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateBackoff  = "backoff"
	StateStopped  = "stopped"
)

// Controller kinds reported in [ControllerStatus.Kind].
const (
	KindController  = "controller"
	KindQController = "qcontroller"
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
// State, BackoffUntil, LastError, LastErrorAt, Recovered, RecoveredAt and
// FailingItems are tracked even with metrics off; the counters are then
// zero.
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
}

// KindMetrics are the counters of one watched kind: changes routed to
// controllers, and re-lists after a failed watch.
type KindMetrics struct {
	Namespace    string `json:"namespace"`
	Type         string `json:"type"`
	EventsRouted uint64 `json:"eventsRouted"`
	Relists      uint64 `json:"relists"`
}

// Metrics are an engine's counters: every controller (sorted by name) and
// every watched kind (sorted by namespace and type).
// In JSON (see [Runtime.PublishExpvar]) they are {"controllers": [...],
// "kinds": [...]}, named as [ControllerStatus] says.
type Metrics struct {
	Controllers []ControllerStatus `json:"controllers"`
	Kinds       []KindMetrics      `json:"kinds"`
}

// controllerMetrics are one controller's counters and status.
type controllerMetrics struct {
	reconciles atomic.Uint64
	crashes    atomic.Uint64
	restarts   atomic.Uint64
	wakeUps    atomic.Uint64
	requeues   atomic.Uint64
	busy       atomic.Int64 // nanoseconds
	lastCall   atomic.Int64 // Runtime.now() at the end of the last runtime call

	// failing is set while the controller has failures it has not
	// recovered from: the success paths read it, and take mu only then.
	failing atomic.Bool

	mu sync.Mutex
	// state is the controller state; protected by mu.
	state string
	// backoffUntil is when a Controller in backoff restarts; protected by mu.
	backoffUntil time.Time
	// lastError and lastErrorAt describe the last failure; protected by mu.
	lastError   string
	lastErrorAt time.Time
	// recoveredAt is when the controller recovered from its failures; zero
	// while failing or before any failure. Protected by mu.
	recoveredAt time.Time
	// failingItems are a QController's items (and initial fills, as items
	// with no ID) whose last outcome was a failure; protected by mu.
	failingItems map[qkey]struct{}
}

func newControllerMetrics() *controllerMetrics {
	return &controllerMetrics{state: StateStarting}
}

func (m *controllerMetrics) setState(s string, backoffUntil time.Time) {
	m.mu.Lock()
	m.state, m.backoffUntil = s, backoffUntil
	m.mu.Unlock()
}

// failed records msg as the last error of a Controller, which is failing
// until recovered is called. It takes a message, never an error: an error's
// Error method is user code, which must not run under mu (see failure).
func (m *controllerMetrics) failed(msg string) {
	now := time.Now()
	m.mu.Lock()
	m.lastError, m.lastErrorAt, m.recoveredAt = msg, now, time.Time{}
	m.failing.Store(true)
	m.mu.Unlock()
}

// recovered records that a failing Controller recovered.
func (m *controllerMetrics) recovered() {
	if !m.failing.Load() {
		return
	}
	now := time.Now()
	m.mu.Lock()
	if m.failing.Load() {
		m.failing.Store(false)
		m.recoveredAt = now
	}
	m.mu.Unlock()
}

// itemFailed records msg as the last error of a QController, and k as
// failing until itemSucceeded(k).
func (m *controllerMetrics) itemFailed(k qkey, msg string) {
	now := time.Now()
	m.mu.Lock()
	m.lastError, m.lastErrorAt, m.recoveredAt = msg, now, time.Time{}
	if m.failingItems == nil {
		m.failingItems = map[qkey]struct{}{}
	}
	m.failingItems[k] = struct{}{}
	m.failing.Store(true)
	m.mu.Unlock()
}

// itemSucceeded records that item k of a QController succeeded (or was
// requeued without an error): once no item is failing any more, the
// controller has recovered. It costs one atomic load while nothing fails.
func (m *controllerMetrics) itemSucceeded(k qkey) {
	if !m.failing.Load() {
		return
	}
	now := time.Now()
	m.mu.Lock()
	if _, ok := m.failingItems[k]; ok {
		delete(m.failingItems, k)
		if len(m.failingItems) == 0 {
			m.failingItems = nil // release a large map
			m.failing.Store(false)
			m.recoveredAt = now
		}
	}
	m.mu.Unlock()
}

// fill copies the status and counters into st.
func (m *controllerMetrics) fill(st *ControllerStatus) {
	m.mu.Lock()
	st.State, st.BackoffUntil = m.state, m.backoffUntil
	st.LastError, st.LastErrorAt = m.lastError, m.lastErrorAt
	st.Recovered, st.RecoveredAt = !m.recoveredAt.IsZero(), m.recoveredAt
	st.FailingItems = len(m.failingItems)
	m.mu.Unlock()
	st.Reconciles = m.reconciles.Load()
	st.Crashes = m.crashes.Load()
	st.Restarts = m.restarts.Load()
	st.WakeUps = m.wakeUps.Load()
	st.Requeues = m.requeues.Load()
	st.BusyTime = time.Duration(m.busy.Load())
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

	r.mu.Lock()
	for k, w := range r.router.kinds {
		m.Kinds = append(m.Kinds, KindMetrics{
			Namespace:    k.Namespace,
			Type:         k.Type,
			EventsRouted: w.stats.eventsRouted.Load(),
			Relists:      w.stats.relists.Load(),
		})
	}
	r.mu.Unlock()
	slices.SortFunc(m.Kinds, func(a, b KindMetrics) int {
		if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return cmp.Compare(a.Type, b.Type)
	})
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
