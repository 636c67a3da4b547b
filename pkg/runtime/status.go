package runtime

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/histogram"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/crunner"
	"github.com/resgraph/resgraph/pkg/runtime/internal/qrunner"
	"github.com/resgraph/resgraph/pkg/runtime/internal/status"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
)

// controllerRunner is a registered Controller.
type controllerRunner struct {
	r    *crunner.Runner
	tel  *telemetry.Controller
	name string
}

func (c *controllerRunner) sink() *telemetry.Controller { return c.tel }

func (c *controllerRunner) run(ctx context.Context, _ []resource.KindKey) { c.r.Run(ctx) }

func (c *controllerRunner) status() observe.ControllerStatus {
	return newControllerStatus(c.name, observe.FamilyController, c.r.Status(), c.tel)
}

func (c *controllerRunner) activity() observe.ControllerActivity {
	return newControllerActivity(c.name, observe.FamilyController, c.r.Activity())
}

func (c *controllerRunner) health(now time.Time, bound time.Duration) (string, string) {
	return c.r.Health(now, bound)
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

func (c *qcontrollerRunner) status() observe.ControllerStatus {
	snap, failing, queued, inFlight := c.r.Status()
	st := newControllerStatus(c.name, observe.FamilyQController, snap, c.tel)
	st.FailingItems, st.QueueLen, st.InFlight = failing, queued, inFlight
	c.parkedStatus(&st)
	return st
}

func (c *qcontrollerRunner) activity() observe.ControllerActivity {
	return newControllerActivity(c.name, observe.FamilyQController, c.r.Activity())
}

func (c *qcontrollerRunner) health(now time.Time, bound time.Duration) (string, string) {
	return c.r.Health(now, bound)
}

// newControllerStatus assembles a status from the runner's status and the
// controller's counters and histograms.
func newControllerStatus(name string, fam observe.Family, st status.Snapshot, tel *telemetry.Controller) observe.ControllerStatus {
	n, l := tel.Counters(), tel.Latencies()
	loop, loops := tel.HotLoop()
	cs := observe.ControllerStatus{
		Name:         name,
		Family:       fam,
		Lifecycle:    st.State,
		Since:        st.Since,
		BackoffUntil: st.BackoffUntil,
		LastError:    st.LastError,
		LastErrorAt:  st.LastErrorAt,
		Recovered:    !st.RecoveredAt.IsZero(),
		RecoveredAt:  st.RecoveredAt,
		HotLoop:      loop,
		Metrics: observe.ControllerMetrics{
			Reconciles: n.Reconciles,
			Crashes:    n.Crashes,
			Restarts:   n.Restarts,
			WakeUps:    n.WakeUps,
			Requeues:   n.Requeues,
			BusyTime:   n.Busy,
			QueueWait:  l.QueueWait,
			Lag:        l.Lag,
			Startup:    l.Startup,
			Duration:   map[string]histogram.Snapshot{},
			Busy:       l.Busy,
			HotLoops:   loops,
		},
	}
	for o := trace.OutcomeOK; o <= trace.OutcomePanic; o++ {
		if l.Duration[o].Count > 0 {
			cs.Metrics.Duration[o.String()] = l.Duration[o]
		}
	}
	return cs
}

// controllerStatuses returns the status of every registered controller,
// sorted by name.
func (r *Runtime) controllerStatuses() []observe.ControllerStatus {
	runners := r.runnerList()
	out := make([]observe.ControllerStatus, 0, len(runners))
	for _, rn := range runners {
		st := rn.status()
		st.Metrics.Edges = r.edgeCounts(st.Name, rn.sink())
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b observe.ControllerStatus) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// runnerList returns the registered controllers, in no order.
func (r *Runtime) runnerList() []runner {
	r.mu.Lock()
	defer r.mu.Unlock()
	runners := make([]runner, 0, len(r.runners))
	for _, rn := range r.runners {
		runners = append(runners, rn)
	}
	return runners
}

// metrics returns a snapshot of the statuses, the kinds' counters, the
// hot loops and the trace reader's and detector's losses.
func (r *Runtime) metrics() observe.Metrics {
	m := observe.Metrics{Controllers: r.controllerStatuses(), Kinds: []observe.KindMetrics{}}
	for _, k := range r.router.Metrics() {
		m.Kinds = append(m.Kinds, observe.KindMetrics{
			Namespace:    k.Key.Namespace(),
			Type:         k.Key.Type(),
			EventsRouted: k.EventsRouted,
			Relists:      k.Relists,
			DeliveryLag:  k.DeliveryLag,
		})
	}
	m.HotLoops = r.hotLoops()
	m.TraceMissed = r.loops.missed.Load()
	m.HotLoopDropped = r.loops.dropped.Load()
	m.HotLoopIncomplete = r.loops.incomplete.Load()
	return m
}
