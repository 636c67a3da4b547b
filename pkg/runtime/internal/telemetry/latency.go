package telemetry

import (
	"time"

	"github.com/resgraph/resgraph/pkg/observe/histogram"
	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// latencies are a controller's latency histograms.
type latencies struct {
	// queueWait: its work became due (a wake-up, a queued item, the end
	// of a backoff) → its reconcile starts.
	queueWait histogram.Histogram
	// lag: the oldest change that caused a reconcile (its commit, or the
	// first listing of its kind when later) → the reconcile starts (end
	// to end).
	lag histogram.Histogram
	// startup: the first listing of a kind → the reconcile of a resource
	// it listed starts; a Controller's (re)start → its start pass starts.
	startup histogram.Histogram
	// duration: a reconcile's duration (a Controller's pass, a
	// QController's Reconcile or MapInput call), by outcome.
	duration [trace.OutcomePanic + 1]histogram.Histogram
}

// Latencies are a snapshot of a controller's latency histograms and its
// saturation.
type Latencies struct {
	QueueWait, Lag, Startup histogram.Snapshot
	// Duration is by outcome (trace.OutcomeOK ... trace.OutcomePanic;
	// index 0 unused).
	Duration [trace.OutcomePanic + 1]histogram.Snapshot
	// Busy is the fraction of the controller's time (of its worker pool's,
	// for a QController) spent in reconciles over the last seconds.
	Busy float64
}

// Latencies returns the controller's histograms and busy fraction (zero
// with metrics off).
func (c *Controller) Latencies() Latencies {
	var l Latencies
	if c == nil || !c.eng.Metrics {
		return l
	}
	l.QueueWait = c.lat.queueWait.Snapshot()
	l.Lag = c.lat.lag.Snapshot()
	l.Startup = c.lat.startup.Snapshot()
	for i := range c.lat.duration {
		if i > 0 {
			l.Duration[i] = c.lat.duration[i].Snapshot()
		}
	}
	l.Busy = c.meter.Fraction(time.Now())
	return l
}

// Name returns the controller's name.
func (c *Controller) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// SetHotLoop flags the controller as part of the hot loop described by
// loop, or clears the flag (loop ""); flagging counts a loop.
func (c *Controller) SetHotLoop(loop string) {
	if c == nil {
		return
	}
	if loop == "" {
		c.hotLoop.Store(nil)
		return
	}
	if c.hotLoop.Swap(&loop) == nil {
		c.hotLoops.Add(1)
	}
}

// HotLoop returns the flagged hot loop the controller is part of ("" when
// none) and how many loops were flagged with it.
func (c *Controller) HotLoop() (string, uint64) {
	if c == nil {
		return "", 0
	}
	var s string
	if p := c.hotLoop.Load(); p != nil {
		s = *p
	}
	return s, c.hotLoops.Load()
}
