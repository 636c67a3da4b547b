package prometheus

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/histogram"
	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// Option configures a [Collector].
type Option func(*config)

type config struct {
	namespace   string
	constLabels prometheus.Labels
}

// WithNamespace sets the metric names' prefix ("resgraph" by default; ""
// for none).
func WithNamespace(ns string) Option { return func(c *config) { c.namespace = ns } }

// WithConstLabels adds labels to every metric (e.g. to tell two Runtimes of
// one process apart).
func WithConstLabels(l prometheus.Labels) Option {
	return func(c *config) { c.constLabels = l }
}

// Collector is a prometheus.Collector over a Runtime's metrics; see the
// package doc for what it reports. It is safe for concurrent scrapes.
type Collector struct {
	obs observe.Observer

	reconciles, crashes, restarts, wakeUps, requeues, busy *prometheus.Desc
	queueLen, inFlight, state, lastError                   *prometheus.Desc
	routed, relists                                        *prometheus.Desc
	queueWait, lag, duration, busyRatio, hotLoop, hotLoops *prometheus.Desc
	deliveryLag, startup                                   *prometheus.Desc
	failing, parked                                        *prometheus.Desc
	leader, leaderTerm, leaderSince                        *prometheus.Desc
	traceMissed, hotLoopDropped, hotLoopIncomplete         *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a collector of the metrics of the Runtime o observes
// (runtime.Runtime.Observe).
func NewCollector(o observe.Observer, opts ...Option) *Collector {
	c := config{namespace: "resgraph"}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	ctrl := []string{"controller", "family"}
	kind := []string{"namespace", "type"}
	d := func(sub, name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(c.namespace, sub, name), help, labels, c.constLabels)
	}
	return &Collector{
		obs:         o,
		reconciles:  d("controller", "reconciles_total", "Reconcile passes (Controller) or Reconcile and MapInput calls (QController).", ctrl),
		crashes:     d("controller", "crashes_total", "Runs that failed or panicked (Controller), Reconcile or MapInput calls that panicked (QController).", ctrl),
		restarts:    d("controller", "restarts_total", "Controller restarts after a crash.", ctrl),
		wakeUps:     d("controller", "wakeups_total", "Wake-ups delivered (Controller) or items queued by routing (QController).", ctrl),
		requeues:    d("controller", "requeues_total", "QController items requeued after a failure or a RequeueError.", ctrl),
		busy:        d("controller", "busy_seconds_total", "Time spent reconciling; its rate is the busy fraction.", ctrl),
		queueLen:    d("controller", "queue_length", "QController items waiting.", ctrl),
		inFlight:    d("controller", "in_flight", "QController items being reconciled.", ctrl),
		failing:     d("controller", "failing_items", "QController items whose last run failed, parked ones included.", ctrl),
		parked:      d("controller", "parked_items", "QController items parked by their retry policy until their next change.", ctrl),
		state:       d("controller", "state", "1 for the controller's current state (starting, running, backoff, stopped).", append(ctrl[:2:2], "state")),
		lastError:   d("controller", "last_error_timestamp_seconds", "When the controller last failed.", ctrl),
		routed:      d("kind", "events_routed_total", "Changes of the kind routed to controllers.", kind),
		relists:     d("kind", "relists_total", "Re-lists of the kind after a failed watch.", kind),
		queueWait:   d("controller", "queue_wait_seconds", "Time from work becoming due (a wake-up, a queued item, the end of a backoff) to its reconcile's start.", ctrl),
		lag:         d("controller", "lag_seconds", "End-to-end lag: the oldest change that caused a reconcile (its commit, or the Runtime's first listing of its kind when later) to the reconcile's start.", ctrl),
		startup:     d("controller", "startup_seconds", "Startup work: the Runtime's first listing of a kind to the reconcile of a resource it listed; a Controller's (re)start to its start pass.", ctrl),
		duration:    d("controller", "reconcile_duration_seconds", "Reconcile duration (a Controller's pass, a QController's Reconcile or MapInput call) by outcome.", append(ctrl[:2:2], "outcome")),
		busyRatio:   d("controller", "busy_ratio", "Fraction of the last ten seconds the controller (a QController: its worker pool) spent reconciling.", ctrl),
		hotLoop:     d("controller", "hot_loop", "1 while the controller is part of a flagged hot loop.", ctrl),
		hotLoops:    d("controller", "hot_loops_total", "Hot loops flagged with the controller.", ctrl),
		deliveryLag: d("kind", "delivery_lag_seconds", "Delivery lag: the commit of a created or updated resource to its routing to the controllers.", kind),
		leader:      d("controller", "leader", "With leadership: 1 while this replica leads the controller's election (runs it), 0 while it is a standby.", append(ctrl[:2:2], "election")),
		leaderTerm:  d("controller", "leader_term", "With leadership: the term this replica leads (while standby: the last one it led; 0: none).", ctrl),
		leaderSince: d("controller", "leader_role_since_timestamp_seconds", "With leadership: when the controller became leader or standby in this replica.", ctrl),
		traceMissed: d("trace", "missed_records_total", "Trace records overwritten before the hot-loop detector and the trace hook read them (they did not keep up).", nil),
		hotLoopDropped: d("hot_loop", "dropped_commits_total",
			"Commits the hot-loop detector let go of before their time to keep its memory bounded (more resources committed in a window than it tracks).", nil),
		hotLoopIncomplete: d("hot_loop", "incomplete_windows_total",
			"Hot-loop detector windows that counted only part of their commits (trace records missed or commits dropped): they end no loop and lower no rate.", nil),
	}
}

// histogramBounds are the bucket bounds a histogram is exported with: one
// per power of two of the Runtime's log-scale buckets (512 ns, 1.024 µs,
// ... about 73 minutes), so that a histogram is 30-odd series, not 134.
var histogramBounds = func() []int {
	var idx []int
	for i := 0; i < histogram.NumBuckets-1; i++ {
		if i%histogram.SubBuckets == 0 {
			idx = append(idx, i)
		}
	}
	return idx
}()

// constHistogram converts a Runtime histogram into a Prometheus one.
func constHistogram(d *prometheus.Desc, s histogram.Snapshot, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(histogramBounds))
	var cum uint64
	next := 0
	for _, i := range histogramBounds {
		for ; next <= i; next++ {
			cum += s.Counts[next]
		}
		buckets[histogram.UpperBound(i).Seconds()] = cum
	}
	return prometheus.MustNewConstHistogram(d, s.Count, time.Duration(s.Sum).Seconds(), buckets, labels...)
}

// Register registers a collector of the metrics of the Runtime o observes
// with reg and returns it.
func Register(reg prometheus.Registerer, o observe.Observer, opts ...Option) (*Collector, error) {
	c := NewCollector(o, opts...)
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Describe sends the descriptors of every metric the collector reports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.reconciles, c.crashes, c.restarts, c.wakeUps, c.requeues, c.busy,
		c.queueLen, c.inFlight, c.failing, c.parked, c.state, c.lastError, c.routed, c.relists,
		c.queueWait, c.lag, c.startup, c.duration, c.busyRatio, c.hotLoop, c.hotLoops, c.deliveryLag,
		c.leader, c.leaderTerm, c.leaderSince, c.traceMissed, c.hotLoopDropped, c.hotLoopIncomplete} {
		ch <- d
	}
}

// controllerStates are the values of the state label.
var controllerStates = []observe.Lifecycle{observe.LifecycleStarting, observe.LifecycleRunning, observe.LifecycleBackoff, observe.LifecycleStopped}

// Collect reads the Runtime's metrics and sends them.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	m := c.obs.Metrics()
	for _, s := range m.Controllers {
		l := []string{s.Name, s.Family.String()}
		n := &s.Metrics
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, l...)
		}
		gauge := func(d *prometheus.Desc, v float64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(l, extra...)...)
		}
		counter(c.reconciles, float64(n.Reconciles))
		counter(c.crashes, float64(n.Crashes))
		counter(c.restarts, float64(n.Restarts))
		counter(c.wakeUps, float64(n.WakeUps))
		counter(c.requeues, float64(n.Requeues))
		counter(c.busy, n.BusyTime.Seconds())
		gauge(c.queueLen, float64(s.QueueLen))
		gauge(c.inFlight, float64(s.InFlight))
		gauge(c.failing, float64(s.FailingItems))
		gauge(c.parked, float64(s.ParkedItems))
		for _, st := range controllerStates {
			v := 0.0
			if s.Lifecycle == st {
				v = 1
			}
			gauge(c.state, v, st.String())
		}
		if !s.LastErrorAt.IsZero() {
			gauge(c.lastError, float64(s.LastErrorAt.UnixNano())/1e9)
		}
		ch <- constHistogram(c.queueWait, n.QueueWait, l...)
		ch <- constHistogram(c.lag, n.Lag, l...)
		ch <- constHistogram(c.startup, n.Startup, l...)
		for _, o := range trace.Outcomes {
			ch <- constHistogram(c.duration, n.Duration[o.String()], append(l[:2:2], o.String())...)
		}
		gauge(c.busyRatio, n.Busy)
		hot := 0.0
		if s.HotLoop != "" {
			hot = 1
		}
		gauge(c.hotLoop, hot)
		counter(c.hotLoops, float64(n.HotLoops))
		if ld := s.Leadership; ld != nil {
			leading := 0.0
			if ld.Role == observe.RoleLeader {
				leading = 1
			}
			gauge(c.leader, leading, ld.Election)
			gauge(c.leaderTerm, float64(ld.Term))
			if !ld.Since.IsZero() {
				gauge(c.leaderSince, float64(ld.Since.UnixNano())/1e9)
			}
		}
	}
	c.collectKindsAndLosses(ch, &m)
}

// collectKindsAndLosses sends the kinds' metrics of m, and the Runtime-wide
// counters of what its trace reader and hot-loop detector could not count.
func (c *Collector) collectKindsAndLosses(ch chan<- prometheus.Metric, m *observe.Metrics) {
	for _, k := range m.Kinds {
		ch <- prometheus.MustNewConstMetric(c.routed, prometheus.CounterValue, float64(k.EventsRouted), k.Namespace, k.Type)
		ch <- prometheus.MustNewConstMetric(c.relists, prometheus.CounterValue, float64(k.Relists), k.Namespace, k.Type)
		ch <- constHistogram(c.deliveryLag, k.DeliveryLag, k.Namespace, k.Type)
	}
	ch <- prometheus.MustNewConstMetric(c.traceMissed, prometheus.CounterValue, float64(m.TraceMissed))
	ch <- prometheus.MustNewConstMetric(c.hotLoopDropped, prometheus.CounterValue, float64(m.HotLoopDropped))
	ch <- prometheus.MustNewConstMetric(c.hotLoopIncomplete, prometheus.CounterValue, float64(m.HotLoopIncomplete))
}
